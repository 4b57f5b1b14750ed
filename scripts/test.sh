#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every CTest suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
build_dir=${KAEL_BUILD_DIR:-$root/build}
cd "$build_dir"
# The wheel builds of shipping_python_wheels go through the same ccache settings as build.sh's.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
ctest --output-on-failure -j "${KAEL_JOBS:-2}" --timeout 600
