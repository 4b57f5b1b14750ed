#!/usr/bin/env bash
# Configures and builds kael into ${KAEL_BUILD_DIR:-build} with two jobs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KAEL_BUILD_DIR:-$root/build}
# The cuda plugin is built wherever nvcc exists, also when /usr/local/cuda/bin is not on PATH.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc && -z "${CUDACXX:-}" ]]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${KAEL_BUILD_TYPE:-Release} "$@" >/dev/null
cmake --build "$build_dir" -j "${KAEL_JOBS:-2}"
