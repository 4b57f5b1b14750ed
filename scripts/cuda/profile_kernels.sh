#!/usr/bin/env bash
# On the GPU machine: the GPU time of every kernel one model_path_vs_torch.py case launches, for
# kael and for PyTorch, from Nsight Compute (one pass, caches left warm, clocks left alone),
# summed by kernel name (benchmarks/kernel_table.py). Writes $OUT/profile_<lib>.csv and .txt.
# PROFILE_LIBS=kael profiles kael alone.
# Usage: scripts/cuda/profile_kernels.sh <build dir> <case filter> [profile_case.py arguments]
set -uo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${1:?build dir}
filter=${2:?case filter}
shift 2
py=${KAEL_PYTHON:-/opt/torch/.venv/bin/python3}
out=${OUT:-$(mktemp -d)}
module=${KAEL_MODULE:-$("$source_dir/scripts/cuda/python_module.sh" "$build_dir" "$py")}
tag=$(echo "$filter" | tr -c 'a-zA-Z0-9\n' '_')
for lib in ${PROFILE_LIBS:-kael torch}; do
    csv="$out/profile_${tag}_$lib.csv"
    PYTHONPATH="$module:$source_dir/benchmarks" KAEL_PLUGINS=-emulated \
        ncu --clock-control none --cache-control none --profile-from-start off \
        --metrics gpu__time_duration.sum --csv --print-units base --log-file "$csv" \
        "$py" "$source_dir/benchmarks/profile_case.py" --lib "$lib" --filter "$filter" "$@" \
        2>&1 | grep -v '^==PROF==' | tail -5
    "$py" "$source_dir/benchmarks/kernel_table.py" "$csv" | tee "$out/profile_${tag}_$lib.txt"
done
