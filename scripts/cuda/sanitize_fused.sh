#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer over the fused kernels of the model path, each run with a
# wall-clock limit (seconds, default 150). memcheck: the index suites (bad indices pending a
# deferred check) and every conformance case; racecheck: the conformance cases whose kernels
# share memory. Prints each run's summary and the test cases it finished.
# Usage: scripts/cuda/sanitize_fused.sh <build dir> [limit]
set -uo pipefail
build=$(cd "${1:?build dir}" && pwd)
limit=${2:-150}
# shellcheck source-path=SCRIPTDIR source=racecheck_cases.sh
source "$(dirname "$0")/racecheck_cases.sh"
sanitize() {  # TOOL PROGRAM (below the build tree) [test filter]
    local tool=$1 binary=$2 log
    shift 2
    log=$(KAEL_PLUGINS=cpu,cuda KAEL_TEST_DEVICE=cuda KAEL_NO_CACHING_ALLOCATOR=1 \
        timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$build/$binary" --color_output=no --log_level=test_suite "$@" 2>&1)
    echo "== $tool $binary $* (exit $?)"
    echo "$log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race|hazard|error:|failure" |
        sort | uniq -c | sort -rn | head -12
    echo "finished cases: $(echo "$log" | grep -c 'Leaving test case')"
}
sanitize memcheck tests/unit_index_check
sanitize memcheck tests/unit_indexing
sanitize memcheck bin/kael-conformance
sanitize racecheck bin/kael-conformance "--run_test=$RACECHECK_CONFORMANCE"
