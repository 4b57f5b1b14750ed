#!/usr/bin/env bash
# Configures and builds kael into ${KAEL_BUILD_DIR:-build} with two jobs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KAEL_BUILD_DIR:-$root/build}
# The cuda plugin is built wherever nvcc exists, also when /usr/local/cuda/bin is not on PATH.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc && -z "${CUDACXX:-}" ]]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
fi
# ccache (when installed; KAEL_CCACHE=0 turns it off) lets the wheel builds of the shipping tests
# reuse this build's objects: paths relative to the source folder, the working directory not
# hashed (the wheels are stripped, so their debug info's folder does not matter).
launchers=()
if [[ "${KAEL_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null && [[ " $* " != *_COMPILER_LAUNCHER=* ]]; then
    launchers=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
               -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${KAEL_BUILD_TYPE:-Release} "${launchers[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "${KAEL_JOBS:-2}"
