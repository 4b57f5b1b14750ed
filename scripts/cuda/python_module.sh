#!/usr/bin/env bash
# Builds kael's Python module on the GPU machine against an install of a build tree made
# elsewhere, for that machine's Python; prints the folder to put on PYTHONPATH (the tree's own
# python/ when it was built there with that Python).
# Usage: scripts/cuda/python_module.sh <build dir> [python with pybind11] [prefix]
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$(cd "${1:?build dir}" && pwd)
py=${2:-/opt/torch/.venv/bin/python3}
prefix=${3:-$(mktemp -d)}
# A tree built on this machine (scripts/cuda/build_on_gpu.sh) has the module for its Python.
if [[ -d $build_dir/python/kael ]] && PYTHONPATH=$build_dir/python "$py" -c "import kael" 2>/dev/null; then
    echo "$build_dir/python"
    exit 0
fi
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
kael_dir=$(dirname "$(find "$prefix" -name kaelConfig.cmake | head -1)")  # <libdir>/cmake/kael
cmake -S "$source_dir/python" -B "$prefix/pybuild" -Dkael_DIR="$kael_dir" \
    -DPython3_EXECUTABLE="$py" -Dpybind11_DIR="$($py -m pybind11 --cmakedir)" >/dev/null
cmake --build "$prefix/pybuild" -j16 2>&1 | grep -E "error" | head -20 >&2 || true
dirname "$(dirname "$(find "$prefix/pybuild" -name '_kael*.so' | head -1)")"
