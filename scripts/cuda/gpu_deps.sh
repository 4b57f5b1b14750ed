#!/usr/bin/env bash
# On a Debian machine, before scripts/cuda/build_on_gpu.sh: copies into third_party/gpu_deps
# (git-ignored) what the GPU machine lacks for building kael: nlohmann-json's headers and CMake
# package, PCRE2's header, library and a relocatable pkg-config file, zlib's headers and library.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
deps=$root/third_party/gpu_deps
lib=/usr/lib/x86_64-linux-gnu
rm -rf "$deps" && mkdir -p "$deps/include" "$deps/lib" "$deps/pkgconfig" "$deps/share/cmake"
cp -r /usr/include/nlohmann /usr/include/pcre2.h /usr/include/zlib.h /usr/include/zconf.h "$deps/include/"
cp -r /usr/share/cmake/nlohmann_json "$deps/share/cmake/"
cp -L "$lib/libpcre2-8.so" "$deps/lib/libpcre2-8.so"
cp -L "$lib/libz.so" "$deps/lib/libz.so"
cat > "$deps/pkgconfig/libpcre2-8.pc" <<'PC'
prefix=${pcfiledir}/..
Name: libpcre2-8
Description: PCRE2 8-bit (copied for the GPU machine)
Version: 10.42
Libs: -L${prefix}/lib -lpcre2-8
Cflags: -I${prefix}/include
PC
echo "wrote $deps; carry third_party to the GPU machine"
