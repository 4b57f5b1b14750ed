#!/usr/bin/env bash
# On a Debian machine, before scripts/cuda/build_on_gpu.sh: copies into third_party/gpu_deps
# (git-ignored) what the GPU machine lacks for building kael: nlohmann-json's headers and CMake
# package, PCRE2's header, library and a relocatable pkg-config file, zlib's headers and library,
# and gloo (libgloo-dev: the cpu plugin's collectives) with the libraries it needs at run time.
# --cuda-plugin <build dir>: also that build's cuda plugin, stripped, which build_on_gpu.sh then
# uses instead of compiling plugins/cuda there (about 170 of its 300 s on the H100); refused when
# a file the plugin is built from is newer than it, or the build has no sm_90 code.
# Usage: scripts/cuda/gpu_deps.sh [--cuda-plugin <build dir>]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
plugin_build=
if [[ ${1:-} == --cuda-plugin ]]; then
    plugin_build=$(cd "${2:?--cuda-plugin needs a build dir}" && pwd)
fi
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
if [[ -f /usr/lib/libgloo.so.0 ]]; then
    cp -r /usr/include/gloo "$deps/include/"
    cp -L /usr/lib/libgloo.so.0 "$deps/lib/libgloo.so.0"
    # gloo's own needs (hiredis, ibverbs, libnl) by soname, as ldd resolves them here. Versioned
    # names (lib*.so.N) are gloo's set alone: build_on_gpu.sh copies those beside the cpu plugin.
    needs=()
    while read -r soname path; do
        cp -L "$path" "$deps/lib/$soname"
        needs+=("\${_gloo}/lib/$soname")
    done < <(ldd /usr/lib/libgloo.so.0 | awk '$1 ~ /^lib(hiredis|ibverbs|nl-3|nl-route-3)\./ {print $1, $3}')
    mkdir -p "$deps/share/cmake/Gloo"
    cat > "$deps/share/cmake/Gloo/GlooConfig.cmake" <<CONFIG
# gloo copied from Debian by scripts/cuda/gpu_deps.sh. Its own libraries are linked as direct
# needs of whoever links gloo, so that binary's RUNPATH finds them where the machine has none.
get_filename_component(_gloo "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET gloo)
  add_library(gloo SHARED IMPORTED)
  set_target_properties(gloo PROPERTIES IMPORTED_LOCATION "\${_gloo}/lib/libgloo.so.0"
    INTERFACE_INCLUDE_DIRECTORIES "\${_gloo}/include"
    INTERFACE_LINK_OPTIONS "LINKER:--push-state,--no-as-needed;$(IFS=";"; echo "${needs[*]}");LINKER:--pop-state")
endif()
CONFIG
else
    echo "gpu_deps.sh: no libgloo-dev here: the GPU build's cpu plugin will have no collectives" >&2
fi
if [[ -n $plugin_build ]]; then
    plugin=$(find "$plugin_build/lib" -name kael_plugin_cuda.so | head -1)
    [[ -n $plugin ]] || { echo "gpu_deps.sh: no kael_plugin_cuda.so under $plugin_build/lib" >&2; exit 1; }
    grep -Eq '^CMAKE_CUDA_ARCHITECTURES:[A-Z]+=.*\b90' "$plugin_build/CMakeCache.txt" ||
        { echo "gpu_deps.sh: $plugin_build builds no sm_90 code (CMAKE_CUDA_ARCHITECTURES)" >&2; exit 1; }
    newer=$(find "$root/plugins/cuda" "$root/plugins/shared" "$root/plugin_api" -type f \
        -newer "$plugin" -print -quit)
    [[ -z $newer ]] || { echo "gpu_deps.sh: $newer is newer than $plugin: build it again" >&2; exit 1; }
    strip -o "$deps/kael_plugin_cuda.so" "$plugin"
fi
echo "wrote $deps; carry third_party to the GPU machine"
