#!/usr/bin/env bash
# Builds kael's Debian packages from an existing CMake build tree with debhelper (the build
# folder is packed, not rebuilt): copies packaging/debian into <out>/source/debian and runs its
# rules there; the .deb files (and the -dbgsym .ddeb files) land in <out>.
#   build_debs.sh <build-dir> <out>
set -euo pipefail
if [[ $# -ne 2 ]]; then
    echo "usage: $0 <build-dir> <out>" >&2
    exit 64
fi
build_dir=$(cd "$1" && pwd -P)
mkdir -p "$2"
out=$(cd "$2" && pwd -P)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
for tool in dh dh_python3 help2man; do
    command -v "$tool" >/dev/null ||
        { echo "build_debs.sh: $tool is missing (apt-get install debhelper dh-python help2man)" >&2; exit 1; }
done
source="$out/source"
rm -rf "$source" "$out"/*.deb "$out"/*.ddeb
mkdir -p "$source"
cp -r "$here/debian" "$source/debian"
cd "$source"
# Reproducible file times, and the changelog's date as the build date.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -STimestamp)
export SOURCE_DATE_EPOCH KAEL_BUILD_DIR="$build_dir" KAEL_DEB_DIR="$out"
export CMAKE=${CMAKE:-cmake} DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-}
debian/rules binary
ls -1 "$out"/*.deb
