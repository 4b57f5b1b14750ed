#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every CTest suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
build_dir=${KAEL_BUILD_DIR:-$root/build}
cd "$build_dir"
ctest --output-on-failure -j "${KAEL_JOBS:-2}" --timeout 600
