#!/usr/bin/env bash
# The main job: install what is missing, build, list plugins and devices, run the demo on every
# available device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
build_dir=${KAEL_BUILD_DIR:-$root/build}
"$build_dir/bin/kael-info"
echo
"$build_dir/bin/kael-demo"
