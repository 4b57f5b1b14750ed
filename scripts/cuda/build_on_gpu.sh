#!/usr/bin/env bash
# On the GPU machine (no apt): builds kael there, cuda plugin, test suites, kael-conformance and
# the Python module for its Python. Boost.Test's library is missing there, so the suites compile
# it from Boost's headers (KAEL_BOOST_TEST_HEADER_ONLY). Headers and
# libraries that machine lacks (nlohmann-json, PCRE2, zlib, gloo) come from third_party/gpu_deps,
# copied from a Debian machine by scripts/cuda/gpu_deps.sh. Usage: scripts/cuda/build_on_gpu.sh <build dir>
# KAEL_GPU_SUITES=0 leaves the suites out (a benchmark-only build, about a minute shorter).
# With third_party/gpu_deps/kael_plugin_cuda.so (gpu_deps.sh --cuda-plugin) that plugin goes into
# the tree instead of one compiled here (KAEL_GPU_BUILD_CUDA=1 compiles it anyway); the CTest
# entries that build on the plugin's target (conformance_cuda) are then absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?build dir}
deps=$root/third_party/gpu_deps
py=${KAEL_PYTHON:-/opt/torch/.venv/bin/python3}
# The system's g++ (shared libstdc++.so.6, as torch uses): that machine's CXX (/opt/gcc) links
# libstdc++ statically, and two C++ runtimes in one process crash kael's first error message
# formatted after `import torch`.
cxx=${KAEL_GPU_CXX:-/usr/bin/g++}
cc=${KAEL_GPU_CC:-/usr/bin/gcc}
tests=ON
[[ ${KAEL_GPU_SUITES:-1} == 0 ]] && tests=OFF
prebuilt=$deps/kael_plugin_cuda.so
cuda=ON
if [[ -f $prebuilt && ${KAEL_GPU_BUILD_CUDA:-0} != 1 ]]; then
    cuda=OFF
    echo "build_on_gpu.sh: the cuda plugin from $prebuilt (gpu_deps.sh --cuda-plugin)"
fi
export PKG_CONFIG_PATH=$deps/pkgconfig CPATH=$deps/include LIBRARY_PATH=$deps/lib
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CUDA_HOST_COMPILER="$cxx" -DKAEL_BUILD_TESTS="$tests" \
    -DKAEL_BUILD_CUDA="$cuda" \
    -DKAEL_BOOST_TEST_HEADER_ONLY=ON -DKAEL_BUILD_PYTHON=ON -DKAEL_WERROR=OFF -DCMAKE_CUDA_ARCHITECTURES=90-real \
    -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DPython3_EXECUTABLE="$py" \
    -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" \
    -Dnlohmann_json_DIR="$deps/share/cmake/nlohmann_json" -DZLIB_ROOT="$deps" \
    -DGloo_DIR="$deps/share/cmake/Gloo" >/dev/null
cmake --build "$build" -j16 2>&1 | grep -E "error|Error" -A3 | head -40 || true
# gloo and the libraries it needs beside the cpu plugin that links them (its RUNPATH is $ORIGIN),
# since that machine has none of them.
if [[ -f $deps/lib/libgloo.so.0 ]]; then
    for plugins in "$build"/lib/*/kael/plugins; do
        cp "$deps"/lib/lib*.so.* "$plugins/"  # gpu_deps.sh's versioned names are gloo's set
    done
fi
if [[ $cuda == OFF ]]; then
    for plugins in "$build"/lib/*/kael/plugins; do
        cp "$prebuilt" "$plugins/"
    done
fi
core=$(find "$build/lib" -name 'libkael_core.so.0' | head -1)
grep -q 'NEEDED.*libstdc++.so.6' <(readelf -dW "$core") ||
    { echo "build_on_gpu.sh: $core links libstdc++ statically ($cxx); use a g++ that links libstdc++.so.6" >&2; exit 1; }
