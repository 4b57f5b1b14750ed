#!/usr/bin/env bash
# Configures and builds kael into ${KAEL_BUILD_DIR:-build} with two jobs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KAEL_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${KAEL_BUILD_TYPE:-Release} "$@" >/dev/null
cmake --build "$build_dir" -j "${KAEL_JOBS:-2}"
