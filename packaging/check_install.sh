#!/usr/bin/env bash
# Installs the build into a scratch prefix, moves the tree elsewhere, and checks that kael-info
# still finds libkael_core and the cpu plugin through $ORIGIN-relative paths alone.
set -euo pipefail
build_dir=$1
scratch=$2
cmake_command=${3:-cmake}
libdir=${4:-lib}  # CMAKE_INSTALL_LIBDIR of the build
if ! command -v "$cmake_command" >/dev/null; then
    cmake_command=cmake  # the build tree was moved to a machine with cmake elsewhere
fi
rm -rf "$scratch"
mkdir -p "$scratch"
# Compare physical paths: kael reports where the plugins really are, links resolved.
scratch=$(cd "$scratch" && pwd -P)
build_dir=$(cd "$build_dir" && pwd -P)
echo "installing $build_dir into $scratch/first with $cmake_command"
"$cmake_command" --install "$build_dir" --prefix "$scratch/first" >"$scratch.install.log" 2>&1 || {
    cat "$scratch.install.log" >&2
    exit 1
}
mv "$scratch/first" "$scratch/moved"
echo "moved to $scratch/moved; running kael-info and kael-demo from there"
info="$scratch/moved/bin/kael-info"
env -u KAEL_PLUGIN_PATH -u LD_LIBRARY_PATH "$info" --json > "$scratch/info.json"
grep -q '"device": "cpu"' "$scratch/info.json"
grep -q "$scratch/moved/$libdir/kael/plugins/kael_plugin_cpu.so" "$scratch/info.json"
if grep -q "$build_dir/$libdir" "$scratch/info.json"; then
    echo "the moved tree still loads plugins from the build tree" >&2
    exit 1
fi
if readelf -d "$scratch/moved/$libdir/libkael_core.so" "$info" | grep -E 'R(UN)?PATH' | grep -v ORIGIN; then
    echo "absolute RPATH found" >&2
    exit 1
fi
env -u KAEL_PLUGIN_PATH "$scratch/moved/bin/kael-demo" --device cpu | grep -q "matches cpu"
echo "relocated install at $scratch/moved lists the cpu device"
