#!/usr/bin/env bash
# On the GPU machine: the model-path benchmark beside PyTorch (benchmarks/model_path_vs_torch.py) for
# a build tree made elsewhere, with the module built there. Writes $OUT/model_path.txt and
# $OUT/model_path.json when OUT is set. Extra arguments go to model_path_vs_torch.py.
# Usage: scripts/cuda/model_path.sh <build dir> [model_path_vs_torch.py arguments]
set -uo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${1:?build dir}
shift
py=${KAEL_PYTHON:-/opt/torch/.venv/bin/python3}
out=${OUT:-$(mktemp -d)}
module=$("$source_dir/scripts/cuda/python_module.sh" "$build_dir" "$py")
echo "commit ${KAEL_COMMIT:-$(git -C "$source_dir" log -1 --format=%h 2>/dev/null)}" | tee "$out/model_path.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$out/model_path.txt"
PYTHONPATH="$module:$source_dir/benchmarks" KAEL_PLUGINS=-emulated "$py" \
    "$source_dir/benchmarks/model_path_vs_torch.py" --device cuda --json-out "$out/model_path.json" "$@" \
    2>&1 | tee -a "$out/model_path.txt"
