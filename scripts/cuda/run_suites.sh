#!/usr/bin/env bash
# On a GPU machine, from a build tree made elsewhere with the cuda plugin (Boost.Test's shared
# library copied into its lib/): the whole CTest, the core's unit and device suites and
# kael-conformance on the real cuda:0 with the emulated plugin disabled, and the pytest suite
# with the Python module built there for that machine's Python. Output: $OUT/run_suites.txt
# when OUT is set.
# Usage: scripts/cuda/run_suites.sh <build dir> [python with pybind11 and numpy]
set -uo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$(cd "${1:?build dir}" && pwd)
py=${2:-/opt/torch/.venv/bin/python3}
[[ -n "${OUT:-}" ]] && exec > >(tee "$OUT/run_suites.txt") 2>&1
nvidia-smi -L
# CTest files name the paths the build was configured at: make them exist here.
configured=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt")
configured_build=$(sed -n 's/^kael_BINARY_DIR:STATIC=//p' "$build_dir/CMakeCache.txt")
for pair in "$configured:$source_dir" "$configured_build:$build_dir"; do
    [[ -e ${pair%%:*} ]] || { mkdir -p "$(dirname "${pair%%:*}")"; ln -s "${pair#*:}" "${pair%%:*}"; }
done
[[ -x /usr/bin/cmake ]] || ln -s "$(command -v cmake)" /usr/bin/cmake  # CTest names it
"$build_dir/bin/kael-info"
echo "== ctest (packages and the Fashion-MNIST example need the build machine)"
(cd "$build_dir" && timeout 900 ctest -j8 --timeout 600 -E "shipping|install|example_mlp" |
    grep -E "tests passed|Failed|Not Run|Skipped")
echo "== unit and device suites and kael-conformance on the real cuda:0"
# run_suite SUITE [VAR=VALUE...]: its verdict line (kael-conformance: its summary, the cases that
# used the cpu fallback and the slots), and its first errors when it fails.
run_suite() {
    local suite=$1 log
    shift
    log=$(env "$@" KAEL_PLUGINS=-emulated timeout 600 "$suite" --color_output=no 2>&1)
    printf '%s: %s\n' "$(basename "$suite")" "$(echo "$log" | grep -v '^$' | tail -1)"
    echo "$log" | grep -m 6 -A 3 'error:' | cut -c1-400
}
conformance="$build_dir/bin/kael-conformance"  # on cuda (KAEL_TEST_DEVICE unset): cuda:0
for suite in "$build_dir"/tests/unit_* "$build_dir"/tests/device_suite "$conformance"; do
    # unit_toy_device needs the toy plugin's folder: CTest above runs it with that environment.
    [[ $(basename "$suite") == unit_toy_device ]] || run_suite "$suite"
done
echo "== the toy example plugin beside the real cuda plugin: its conformance on toy:0"
run_suite "$conformance" KAEL_TEST_DEVICE=toy:0 KAEL_PLUGIN_PATH="$build_dir/toy_plugin"
echo "== the same without cuBLAS (KAEL_CUDA_MATMUL=tile: kael's tile kernel for every matmul)"
for suite in "$build_dir"/tests/unit_nn "$build_dir"/tests/unit_attention "$build_dir"/tests/device_suite \
    "$conformance"; do
    [[ -x $suite ]] && run_suite "$suite" KAEL_CUDA_MATMUL=tile
done
echo "== the same with cuBLAS alone (KAEL_CUDA_CUBLASLT=0: fill + cublasSgemm for every product)"
for suite in "$build_dir"/tests/unit_nn "$build_dir"/tests/device_suite "$conformance"; do
    [[ -x $suite ]] && run_suite "$suite" KAEL_CUDA_CUBLASLT=0
done
echo "== the same with every cuBLASLt shape tuned (KAEL_CUDA_GEMM_TUNE=all: the fastest of eight algorithms)"
for suite in "$build_dir"/tests/unit_nn "$build_dir"/tests/device_suite "$conformance"; do
    [[ -x $suite ]] && run_suite "$suite" KAEL_CUDA_GEMM_TUNE=all
done
echo "== pytest on cuda, module built for $($py --version)"
module=$("$source_dir/scripts/cuda/python_module.sh" "$build_dir" "$py")
PYTHONPATH=$module KAEL_TEST_DEVICE=cuda timeout 900 "$py" -m pytest -q -p no:cacheprovider \
    "$source_dir/python/tests" | tail -3
