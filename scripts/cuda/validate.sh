#!/usr/bin/env bash
# kael's validation on a machine with an NVIDIA GPU, from an EXISTING build tree (built elsewhere
# with the cuda plugin and shipped): it builds nothing but the Python wheels of the step wheels.
# See usage() below.
# Step functions are called through run_step, which shellcheck cannot follow:
# shellcheck disable=SC2317
set -uo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE_DIR="$(cd "$SCRIPT_DIR/../.." && pwd)"
readonly SCRIPT_DIR SOURCE_DIR
readonly ALL_STEPS=(environment kael-info ctest device-suite-cublas device-suite-tile
    conformance-cublas conformance-tile unit-suites toy-plugin matmul-cublas matmul-tuned
    pytest-cuda reference-on-cuda compute-sanitizer-memcheck
    compute-sanitizer-racecheck mlp-cuda char-gpt-cuda benchmarks wheels)

# Wall-clock limits per step, in seconds (a hung kernel must not hang the whole run).
# Conformance cases whose kernels share memory between threads (racecheck inspects those).
# shellcheck source-path=SCRIPTDIR source=racecheck_cases.sh
source "$SCRIPT_DIR/racecheck_cases.sh"
# shellcheck source-path=SCRIPTDIR source=validate_suites.sh
source "$SCRIPT_DIR/validate_suites.sh"
readonly RACECHECK_CONFORMANCE
readonly LIMIT_SHORT=300 LIMIT_SUITE=1200 LIMIT_LONG=2400

BUILD_DIR="$SOURCE_DIR/build"
REPORT_DIR="$SOURCE_DIR/cuda-report"
DATA_DIR=""
QUICK=0
ONLY=""
LINK_PATHS=1

usage() {
    cat <<EOF
Usage: scripts/cuda/validate.sh [--build-dir DIR] [--report-dir DIR] [--data DIR] [--quick]
                                [--only STEP[,STEP...]] [--no-path-links]

Validates an existing kael build with the cuda plugin on this machine's GPU. Nothing is built,
but for the step wheels: the kael and kael-cuda wheels from the source, in a temporary folder
(scripts/cuda/wheels.sh), installed into a fresh venv and tested on cuda:0.
Each step logs to <report>/<step>.log and adds one line "PASS|FAIL|SKIP <step> <detail>" to
<report>/summary.txt; the summary is printed at the end. A failing step does not stop later ones.

  --build-dir DIR   the build tree (bin/, lib/, tests/); default: $SOURCE_DIR/build
  --report-dir DIR  where logs, summary.txt, benchmarks.txt/.json and bars.txt go;
                    default: $SOURCE_DIR/cuda-report
  --data DIR        Fashion-MNIST (*-idx?-ubyte.gz): mlp-cuda and the MLP benchmark (else SKIP)
  --quick           MLP: 1 epoch of 100 steps (accuracy not judged: the step SKIPs when it runs);
                    benchmarks: few repeats
  --only STEPS      run only these steps (comma-separated); the others are reported as SKIP
  --no-path-links   never link the paths the build was configured at to where the build and the
                    source are now (by default, when the build tree was moved and the old paths
                    do not exist, symbolic links are made there, because test binaries and CTest
                    files name absolute paths)
  -h, --help        this text

Steps: ${ALL_STEPS[*]}

Environment: KAEL_PYTHON (python3 with torch; default /opt/torch/.venv/bin/python3 if present,
else python3 on PATH).

Exit status: 0 when every step ran and passed, 1 when a step failed (or the build tree is
missing), 2 on a usage error, 3 when nothing failed but some step was skipped (not a full pass).

On the GPU machine, e.g. on a tree built there (scripts/cuda/build_on_gpu.sh build-gpu):
  bash scripts/cuda/validate.sh --build-dir build-gpu --report-dir /tmp/report
  bash scripts/cuda/validate.sh --build-dir build-gpu --only unit-suites,pytest-cuda
  tar czf "\$OUT/cuda-report.tgz" -C /tmp report
EOF
}

die_usage() {
    echo "validate.sh: $1" >&2
    usage >&2
    exit 2
}

while (($# > 0)); do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --quick) QUICK=1 ;;
        --no-path-links) LINK_PATHS=0 ;;
        --build-dir | --report-dir | --data | --only)
            (($# >= 2)) || die_usage "$1 needs a value"
            case "$1" in
                --build-dir) BUILD_DIR="$2" ;;
                --report-dir) REPORT_DIR="$2" ;;
                --data) DATA_DIR="$2" ;;
                --only) ONLY="$2" ;;
            esac
            shift
            ;;
        --build-dir=* ) BUILD_DIR="${1#*=}" ;;
        --report-dir=*) REPORT_DIR="${1#*=}" ;;
        --data=*) DATA_DIR="${1#*=}" ;;
        --only=*) ONLY="${1#*=}" ;;
        *) die_usage "unknown argument: $1" ;;
    esac
    shift
done

if [[ -n "$ONLY" ]]; then
    IFS=',' read -r -a only_list <<<"$ONLY"
    for wanted in "${only_list[@]}"; do
        [[ " ${ALL_STEPS[*]} " == *" $wanted "* ]] || die_usage "unknown step in --only: $wanted"
    done
fi

# CUDA's tools are often installed outside PATH.
for cuda_bin in /usr/local/cuda/bin ${CUDA_HOME:+"$CUDA_HOME/bin"}; do
    [[ -d "$cuda_bin" && ":$PATH:" != *":$cuda_bin:"* ]] && PATH="$PATH:$cuda_bin"
done
export PATH

if [[ -n "${KAEL_PYTHON:-}" ]]; then
    PYTHON="$KAEL_PYTHON"
elif [[ -x /opt/torch/.venv/bin/python3 ]]; then
    PYTHON=/opt/torch/.venv/bin/python3
else
    PYTHON="$(command -v python3 || echo python3)"
fi
readonly PYTHON

mkdir -p "$REPORT_DIR" || { echo "validate.sh: cannot create $REPORT_DIR" >&2; exit 1; }
REPORT_DIR="$(cd "$REPORT_DIR" && pwd)"
readonly REPORT_DIR
readonly SUMMARY="$REPORT_DIR/summary.txt"
rm -f "$SUMMARY" "$REPORT_DIR/bars.txt" "$REPORT_DIR/benchmarks.txt" \
    "$REPORT_DIR/benchmarks.json" "$REPORT_DIR/setup.log" "$REPORT_DIR/kael-info.json" \
    "$REPORT_DIR/ctest-junit.xml"
for step in "${ALL_STEPS[@]}"; do
    rm -f "$REPORT_DIR/$step.log"
done
: >"$SUMMARY"

# ---------------------------------------------------------------------------------------------
# Helpers

# record STATUS STEP DETAIL: one summary line, also printed as the run goes.
record() {
    local line="$1 $2 ${3//$'\n'/ }"
    echo "$line" >>"$SUMMARY"
    echo ">> $line"
}

log_of() { echo "$REPORT_DIR/$1.log"; }

# run_logged LOG LIMIT [VAR=VALUE...] COMMAND...: runs the command under `timeout` with the given
# environment, appends the command line and all its output to LOG; returns the command's status
# (124 when it ran past LIMIT seconds).
run_logged() {
    local log="$1" limit="$2"
    shift 2
    {
        echo "\$ $*"
        echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), limit ${limit}s"
    } >>"$log"
    local start=$SECONDS
    timeout --kill-after=30 "$limit" env "$@" >>"$log" 2>&1
    local status=$?
    echo "# exit status $status after $((SECONDS - start)) s" >>"$log"
    echo >>"$log"
    return "$status"
}

# status_text STATUS LIMIT: "exit N", or "timed out after Ns".
status_text() {
    if (($1 == 124 || $1 == 137)); then
        echo "timed out after ${2}s"
    else
        echo "exit $1"
    fi
}

# Boost.Test's "N test cases out of M passed/failed/skipped" lines, joined.
boost_counts() {
    grep -Eo '[0-9]+ test cases? out of [0-9]+ (passed|failed|skipped|aborted)' "$1" |
        paste -sd ',' - | sed 's/,/, /g'
}

# last_words LOG: the last line a program printed to LOG (its error message, usually).
last_words() {
    tr '\r' '\n' <"$1" | grep -v -e '^#' -e '^\$ ' -e '^[[:space:]]*$' | tail -n 1 | cut -c1-200
}

selected() {
    [[ -z "$ONLY" ]] && return 0
    [[ ",$ONLY," == *",$1,"* ]]
}

# ---------------------------------------------------------------------------------------------
# Build tree

BIN="$BUILD_DIR/bin"
TESTS="$BUILD_DIR/tests"

check_build_dir() {
    local missing=()
    for file in "$BIN/kael-info" "$BIN/kael-conformance" "$TESTS/device_suite" "$BUILD_DIR/CTestTestfile.cmake"; do
        [[ -e "$file" ]] || missing+=("${file#"$BUILD_DIR"/}")
    done
    if [[ ! -d "$BUILD_DIR" ]]; then
        record FAIL build-dir "no build directory at $BUILD_DIR (--build-dir); nothing was run"
        return 1
    fi
    if ((${#missing[@]} > 0)); then
        record FAIL build-dir "$BUILD_DIR lacks ${missing[*]}; nothing was run"
        return 1
    fi
    return 0
}

cache_value() {  # cache_value NAME: a value from the build's CMakeCache.txt
    sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -n 1
}

# The build names absolute paths: CTest files, compiled-in folders of test plugins and of the
# numpy reference data, cmake_install.cmake. When the tree was configured elsewhere (e.g. built
# in /work/main/build-cuda, shipped to /root/repo/build-cuda), make the old paths lead to the new
# ones with symbolic links, only where nothing exists yet. Tools named by absolute path (cmake,
# cc) that are missing here are replaced in the CTest files, in place.
prepare_build_paths() {
    local log="$REPORT_DIR/setup.log"
    local old_build old_source new_build
    old_build="$(cache_value CMAKE_CACHEFILE_DIR)"
    old_source="$(cache_value CMAKE_HOME_DIRECTORY)"
    new_build="$(cd "$BUILD_DIR" && pwd -P)"
    {
        echo "build configured at: ${old_build:-?} (source ${old_source:-?})"
        echo "build now at:        $new_build (source $SOURCE_DIR)"
    } >>"$log"
    link_old_path() {  # link_old_path OLD NEW
        local old="$1" new="$2"
        [[ -z "$old" || "$old" == "$new" ]] && return 0
        if [[ -e "$old" || -L "$old" ]]; then
            echo "kept $old (it exists)" >>"$log"
            return 0
        fi
        local parent
        parent="$(cd "$(dirname "$old")" 2>/dev/null && pwd -P)"
        if [[ -n "$parent" && "$parent/" == "$(cd "$SOURCE_DIR" && pwd -P)/"* ]]; then
            echo "NOT linking $old -> $new: the link would land inside the source tree; tests" \
                "naming $old may fail (ship the build at the same place relative to the source)" \
                >>"$log"
            return 0
        fi
        if ((LINK_PATHS == 0)); then
            echo "NOT linking $old -> $new (--no-path-links): tests naming $old may fail" >>"$log"
            return 0
        fi
        if mkdir -p "$(dirname "$old")" 2>>"$log" && ln -s "$new" "$old" 2>>"$log"; then
            echo "linked $old -> $new" >>"$log"
            echo "note: linked $old -> $new (the build names its configure-time paths)"
        else
            echo "could not link $old -> $new: tests naming $old may fail" >>"$log"
        fi
    }
    if [[ -n "$old_source" && -f "$SOURCE_DIR/tests/CMakeLists.txt" ]]; then
        link_old_path "$old_source" "$SOURCE_DIR"
    fi
    if [[ -n "$old_build" && "$(cd "$old_build" 2>/dev/null && pwd -P)" != "$new_build" ]]; then
        link_old_path "$old_build" "$new_build"
    fi
    if [[ -n "$old_build" && "$(cd "$old_build" 2>/dev/null && pwd -P)" != "$new_build" ]]; then
        echo "warning: $old_build is not this build tree; CTest will run the binaries there" >>"$log"
    fi
    local -a replacements=()
    local tool_path here
    for tool_path in "$(cache_value CMAKE_COMMAND)" "$(cache_value CMAKE_C_COMPILER)"; do
        [[ -z "$tool_path" || -x "$tool_path" ]] && continue
        here="$(command -v "$(basename "$tool_path")" || true)"
        if [[ -z "$here" && "$(basename "$tool_path")" == cc ]]; then
            here="$(command -v gcc || command -v clang || true)"
        fi
        if [[ -n "$here" ]]; then
            replacements+=("$tool_path" "$here")
            echo "CTest files: $tool_path (missing here) -> $here" >>"$log"
        else
            echo "warning: $tool_path is missing here and has no replacement on PATH" >>"$log"
        fi
    done
    ((${#replacements[@]} == 0)) && return 0
    local testfile
    while IFS= read -r -d '' testfile; do
        "$PYTHON" - "$testfile" "${replacements[@]}" <<'PYEOF' >>"$log" 2>&1
import sys
path, *pairs = sys.argv[1:]
text = original = open(path, encoding="utf-8").read()
for old, new in zip(pairs[::2], pairs[1::2]):
    text = text.replace(f'"{old}"', f'"{new}"')
if text != original:
    open(path, "w", encoding="utf-8").write(text)
    print(f"rewrote {path}")
PYEOF
    done < <(find -H "$BUILD_DIR" -name CTestTestfile.cmake -print0)
}

# ---------------------------------------------------------------------------------------------
# Steps

step_environment() {
    local step=environment log
    log="$(log_of "$step")"
    section() { printf '\n===== %s\n' "$1" >>"$log"; }
    section "date, host"
    { date -u; uname -a; grep -E '^(PRETTY_NAME|VERSION_ID)=' /etc/os-release; nproc; } \
        >>"$log" 2>&1
    section "nvidia-smi"
    local gpu="" driver=""
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi >>"$log" 2>&1
        gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>>"$log" | head -n 1)"
        driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>>"$log" |
            head -n 1)"
    else
        echo "nvidia-smi: not found" >>"$log"
    fi
    section "nvcc"
    local nvcc_version="nvcc missing"
    if command -v nvcc >/dev/null 2>&1; then
        nvcc --version >>"$log" 2>&1
        nvcc_version="nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    else
        echo "nvcc: not found" >>"$log"
    fi
    section "compute-sanitizer"
    { command -v compute-sanitizer && compute-sanitizer --version; } >>"$log" 2>&1 ||
        echo "compute-sanitizer: not found" >>"$log"
    section "compilers (the build's, then this machine's)"
    {
        echo "build: $(cache_value CMAKE_CXX_COMPILER) (CMAKE_BUILD_TYPE=$(cache_value CMAKE_BUILD_TYPE))"
        grep -h 'CMAKE_CXX_COMPILER_VERSION\|CMAKE_CUDA_COMPILER_VERSION' \
            "$BUILD_DIR"/CMakeFiles/*/CMakeCXXCompiler.cmake \
            "$BUILD_DIR"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null
        if command -v c++ >/dev/null 2>&1; then c++ --version | head -n 1; else echo "no c++ here"; fi
        cmake --version | head -n 1
        ctest --version | head -n 1
    } >>"$log" 2>&1
    section "python ($PYTHON)"
    "$PYTHON" -c 'import sys; print(sys.version)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "available", torch.cuda.is_available())
except Exception as error:
    print("torch: unavailable:", error)' >>"$log" 2>&1
    section "kael-info --verbose"
    "$BIN/kael-info" --verbose >>"$log" 2>&1
    echo "(exit $?)" >>"$log"
    if [[ -z "$gpu" ]]; then
        record FAIL "$step" "nvidia-smi finds no GPU ($(command -v nvidia-smi >/dev/null && echo 'no device listed' || echo 'nvidia-smi missing')); $nvcc_version"
    else
        record PASS "$step" "$gpu, driver $driver, $nvcc_version, $(uname -sr)"
    fi
}

step_kael_info() {
    local step=kael-info log
    log="$(log_of "$step")"
    run_logged "$log" "$LIMIT_SHORT" "$BIN/kael-info" --device cuda:0
    local device_status=$?
    local json="$REPORT_DIR/kael-info.json"
    timeout "$LIMIT_SHORT" "$BIN/kael-info" --json >"$json" 2>>"$log"
    local verdict
    verdict="$("$PYTHON" - "$json" 2>>"$log" <<'PYEOF'
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as handle:
        info = json.load(handle)
except (OSError, ValueError) as error:
    print(f"FAIL kael-info --json gave no JSON ({error})")
    sys.exit()
cuda = [p for p in info.get("plugins", []) if p.get("name") == "cuda"]
if cuda:
    plugin = f"plugin cuda: {cuda[0].get('status')}"
    if cuda[0].get("reason"):
        plugin += f" ({cuda[0]['reason']})"
else:
    plugin = "no plugin named cuda was found"
device = next((d for d in info.get("devices", []) if d.get("device") == "cuda:0"), None)
if device is None:
    print(f"FAIL no cuda:0 device; {plugin}")
elif device.get("plugin") != "cuda" or device.get("emulated", True):
    emulated = " (emulated: not a real GPU)" if device.get("emulated") else ""
    print(f"FAIL cuda:0 is served by plugin {device.get('plugin')!r}{emulated}; {plugin}")
else:
    gib = device.get("memory_total", 0) / 2**30
    print(f"PASS cuda:0 = {device.get('name')}, plugin cuda, capability "
          f"{device.get('capability')}, {gib:.0f} GiB")
PYEOF
)"
    [[ -n "$verdict" ]] || verdict="FAIL could not read kael-info --json with $PYTHON"
    echo "verdict: $verdict" >>"$log"
    if ((device_status != 0)); then
        record FAIL "$step" "kael-info --device cuda:0: $(status_text "$device_status" "$LIMIT_SHORT"); ${verdict#* }"
    else
        record "${verdict%% *}" "$step" "${verdict#* }"
    fi
}

step_ctest() {
    local step=ctest log
    log="$(log_of "$step")"
    # Tests that need what a GPU machine may lack: Debian's numpy exactly (the reference data
    # regeneration) and anything run by /usr/bin/python3 (python tests, e.g. bench_vs_numpy_smoke).
    local excluded
    excluded="$(ctest --test-dir "$BUILD_DIR" --show-only=json-v1 2>>"$log" | "$PYTHON" -c '
import json, sys
names = set()
for test in json.load(sys.stdin).get("tests", []):
    command = " ".join(test.get("command") or [])
    if test["name"] == "reference_data_is_current" or "python" in command:
        names.add(test["name"])
print(" ".join(sorted(names)))' 2>>"$log")"
    [[ -n "$excluded" ]] || excluded="reference_data_is_current bench_vs_numpy_smoke"
    # The MLP smoke test reads Debian's dataset-fashion-mnist folder; mlp-cuda covers it (--data).
    if [[ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]]; then
        excluded="$excluded example_mlp_fashion_mnist_smoke"
    fi
    local pattern="^(${excluded// /|})\$"
    echo "excluded: $excluded" >>"$log"
    local junit="$REPORT_DIR/ctest-junit.xml"
    rm -f "$junit"
    run_logged "$log" "$LIMIT_LONG" ctest --test-dir "$BUILD_DIR" --output-on-failure -j 8 -LE "shipping|python" \
        -E "$pattern" --output-junit "$junit"
    local status=$?
    local counts not_run
    # Totals from the JUnit file (the summary line's wording differs between CTest versions).
    counts="$("$PYTHON" - "$junit" 2>>"$log" <<'PYEOF'
import sys
import xml.etree.ElementTree as tree
suite = tree.parse(sys.argv[1]).getroot()
if suite.tag != "testsuite":
    suite = suite.find("testsuite")
tests, failures = int(suite.get("tests", 0)), int(suite.get("failures", 0))
skipped = int(suite.get("skipped", 0)) + int(suite.get("disabled", 0))
print(f"{tests - failures - skipped} of {tests} tests passed, {failures} failed, "
      f"{skipped} skipped")
PYEOF
)"
    [[ -n "$counts" ]] ||
        counts="$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)"
    not_run="$(sed -n '/The following tests did not run:/,/^$/p' "$log" | grep -c ' - ')"
    local detail="${counts:-no CTest totals}; excluded: ${excluded// /, }"
    ((not_run > 0)) && detail="$detail; $not_run did not run (skipped)"
    if ((status == 0)); then
        record PASS "$step" "$detail"
    else
        local failed
        failed="$(sed -n '/The following tests FAILED:/,/^$/p' "$log" | grep -Eo '[A-Za-z0-9_]+ \(' |
            tr -d ' (' | paste -sd ',' -)"
        record FAIL "$step" "$(status_text "$status" "$LIMIT_LONG"): $detail${failed:+; failed: $failed}"
    fi
}

# device_run STEP PROGRAM MATMUL: a device suite (PROGRAM below the build tree: tests/device_suite,
# bin/kael-conformance) on cuda through the cuda plugin alone.
device_run() {
    local step="$1" program="$BUILD_DIR/$2" matmul="$3" log
    log="$(log_of "$step")"
    if [[ ! -x "$program" ]]; then
        record FAIL "$step" "$program is missing"
        return
    fi
    run_logged "$log" "$LIMIT_SUITE" KAEL_PLUGINS=cpu,cuda KAEL_TEST_DEVICE=cuda \
        CUDA_LAUNCH_BLOCKING=1 KAEL_CUDA_MATMUL="$matmul" \
        "$program" --log_level=message --report_level=short --color_output=no
    local status=$?
    local counts served fallback
    counts="$(boost_counts "$log")"
    # kael-conformance's summary: "N cases on cuda:0 (plugin P V): A ran on the plugin, B used
    # the cpu fallback[ for: ...]; F failed".
    served="$(sed -nE "s/^[0-9]+ cases? on cuda:[0-9]+ \(plugin ([^ ]+) .*/served by plugin '\1'/p" "$log" | tail -n 1)"
    fallback="$(grep -Eo '[0-9]+ ran on the plugin, [0-9]+ used the cpu fallback[^;]*' "$log" | tail -n 1)"
    local detail="${counts:-no Boost.Test totals}${served:+; $served}${fallback:+; $fallback}"
    detail="$detail; KAEL_CUDA_MATMUL=$matmul"
    if grep -Eq 'no plugin serves|nothing was compared' "$log"; then
        record FAIL "$step" "no plugin serves cuda (KAEL_PLUGINS=cpu,cuda): $(status_text "$status" "$LIMIT_SUITE"); $detail"
    elif ((status != 0)); then
        record FAIL "$step" "$(status_text "$status" "$LIMIT_SUITE"): $detail"
    elif [[ -n "$served" && "$served" != "served by plugin 'cuda'" ]]; then
        record FAIL "$step" "ran on the wrong plugin: $detail"
    else
        record PASS "$step" "$detail"
    fi
}

step_reference_on_cuda() {
    local step=reference-on-cuda log
    log="$(log_of "$step")"
    run_logged "$log" "$LIMIT_SUITE" KAEL_PLUGINS=cpu,cuda \
        "$TESTS/unit_reference" --log_level=message --report_level=short --color_output=no
    local status=$?
    local on_cuda counts
    on_cuda="$(grep -c 'comparing cuda:0 with cpu' "$log")"
    counts="$(boost_counts "$log")"
    if ((status != 0)); then
        record FAIL "$step" "$(status_text "$status" "$LIMIT_SUITE"): ${counts:-no Boost.Test totals}; $on_cuda cases compared on cuda:0"
    elif ((on_cuda == 0)); then
        record FAIL "$step" "no case ran on cuda:0 (the cuda plugin did not load?): ${counts:-no totals}"
    else
        record PASS "$step" "$on_cuda numpy cases rerun on cuda:0 match; ${counts:-no totals}"
    fi
}

# sanitizer_run LOG TOOL MATMUL PROGRAM ARGS...: one compute-sanitizer run (PROGRAM below the
# build tree), appended to LOG.
sanitizer_run() {
    local log="$1" tool="$2" matmul="$3" program="$BUILD_DIR/$4"
    shift 4
    run_logged "$log" "$LIMIT_LONG" KAEL_PLUGINS=cpu,cuda KAEL_TEST_DEVICE=cuda \
        KAEL_CUDA_MATMUL="$matmul" KAEL_NO_CACHING_ALLOCATOR=1 \
        compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$program" --color_output=no --report_level=short "$@"
}

# sanitizer_verdict STEP LOG STATUSES...: one summary line from the runs' exit statuses.
sanitizer_verdict() {
    local step="$1" log="$2"
    shift 2
    local errors runs=$# worst=0 status
    for status in "$@"; do
        if ((status != 0 && (worst == 0 || status == 9))); then worst=$status; fi
    done
    errors="$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$log" | awk '{n += $3} END {print n + 0}')"
    local hazards
    hazards="$(grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazards?' "$log" | awk '{n += $3} END {print n + 0}')"
    local detail="$errors errors in $runs runs"
    [[ "$step" == *racecheck ]] && detail="$detail, $hazards hazards"
    detail="$detail; tests: $(boost_counts "$log")"
    if grep -Eq 'no plugin serves|nothing was compared' "$log"; then
        record FAIL "$step" "no plugin serves cuda (KAEL_PLUGINS=cpu,cuda); $detail"
    elif grep -q 'Device not supported' "$log"; then
        record SKIP "$step" "compute-sanitizer does not support this device or runtime (see log)"
    elif grep -q 'terminated before first instrumented API call' "$log"; then
        record FAIL "$step" "a run made no CUDA call (did the cuda plugin serve the tests?); $detail"
    elif ((worst == 9)); then
        record FAIL "$step" "compute-sanitizer found errors: $detail"
    elif ((worst != 0)); then
        record FAIL "$step" "$(status_text "$worst" "$LIMIT_LONG") (tests failed under the tool): $detail"
    else
        record PASS "$step" "$detail"
    fi
}

step_memcheck() {
    local step=compute-sanitizer-memcheck log
    log="$(log_of "$step")"
    if ! command -v compute-sanitizer >/dev/null 2>&1; then
        record SKIP "$step" "compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
        return
    fi
    # Boost.Test: a comma list continues the same suite path; a colon starts another filter.
    local s1 s2 s3 s4 s5
    sanitizer_run "$log" memcheck cublas tests/device_suite \
        '--run_test=Cuda/BackwardMatchesCpuAndStaysOnTheDevice'
    s1=$?
    sanitizer_run "$log" memcheck tile bin/kael-conformance '--run_test=matmul_shapes_layouts_dtypes'
    s2=$?
    # Every conformance case: each kernel family over every layout and dtype.
    sanitizer_run "$log" memcheck cublas bin/kael-conformance
    s3=$?
    # Bad indices left pending for a deferred check must not reach memory.
    sanitizer_run "$log" memcheck cublas tests/unit_index_check
    s4=$?
    sanitizer_run "$log" memcheck cublas tests/unit_indexing
    s5=$?
    sanitizer_verdict "$step" "$log" "$s1" "$s2" "$s3" "$s4" "$s5"
}

step_racecheck() {
    local step=compute-sanitizer-racecheck log
    log="$(log_of "$step")"
    if ! command -v compute-sanitizer >/dev/null 2>&1; then
        record SKIP "$step" "compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
        return
    fi
    # A reduction (shared-memory tree) and the tile matmul kernel (shared-memory tiles), then
    # the fused kernels that stage data in shared memory: row ops, column reductions, sorts
    # and scans, attention tiles, transposes.
    local s1 s2
    sanitizer_run "$log" racecheck tile bin/kael-conformance \
        '--run_test=long_sums_are_deterministic_and_match_cpu_bit_for_bit,matmul_shapes_layouts_dtypes'
    s1=$?
    sanitizer_run "$log" racecheck cublas bin/kael-conformance "--run_test=$RACECHECK_CONFORMANCE"
    s2=$?
    sanitizer_verdict "$step" "$log" "$s1" "$s2"
}

step_mlp() {
    local step=mlp-cuda log
    log="$(log_of "$step")"
    if [[ -z "$DATA_DIR" ]]; then
        record SKIP "$step" "no --data (Fashion-MNIST folder)"
        return
    fi
    local -a extra=()
    ((QUICK)) && extra=(--max-steps 100 --epochs 1)
    run_logged "$log" "$LIMIT_LONG" KAEL_PLUGINS=cpu,cuda \
        "$BIN/mlp_fashion_mnist" --device cuda --data "$DATA_DIR" "${extra[@]}"
    local status=$?
    local epochs accuracy
    epochs="$(grep -Eo '^epoch [0-9]+: [0-9.]+ s' "$log" | sed -E 's/^epoch ([0-9]+): /#\1 /' |
        paste -sd ',' - | sed 's/,/, /g')"
    accuracy="$(sed -nE 's/^final test accuracy ([0-9.]+)%.*/\1/p' "$log" | tail -n 1)"
    local detail="epochs: ${epochs:-none}"
    if ((status != 0)) || [[ -z "$accuracy" ]]; then
        record FAIL "$step" "$(status_text "$status" "$LIMIT_LONG"), no final accuracy; $detail; last words: $(last_words "$log")"
    elif ((QUICK)); then
        record SKIP "$step" "ran (--quick: 100 steps, accuracy ${accuracy}% not judged); $detail"
    elif awk -v a="$accuracy" 'BEGIN {exit !(a >= 83)}'; then
        record PASS "$step" "final test accuracy ${accuracy}% (>= 83%); $detail"
    else
        record FAIL "$step" "final test accuracy ${accuracy}% (< 83%); $detail"
    fi
}

step_char_gpt() {
    local step=char-gpt-cuda log text=""
    log="$(log_of "$step")"
    for candidate in /usr/share/common-licenses/GPL-3 "$SOURCE_DIR/README.md" \
        "$SOURCE_DIR/LICENSE" "$BUILD_DIR/../README.md"; do
        if [[ -f "$candidate" ]]; then
            text="$candidate"
            break
        fi
    done
    if [[ -z "$text" ]]; then
        record SKIP "$step" "no text file (GPL-3, README.md)"
        return
    fi
    run_logged "$log" "$LIMIT_LONG" KAEL_PLUGINS=cpu,cuda \
        "$BIN/char_gpt" --device cuda --text "$text"
    local status=$?
    local fell
    fell="$(sed -nE 's/^validation loss fell from ([0-9.]+) to ([0-9.]+).*/\1 \2/p' "$log" | tail -n 1)"
    local seconds
    seconds="$(grep -Eo '\([0-9.]+ s\)' "$log" | tail -n 1 | tr -d '()')"
    if ((status != 0)) || [[ -z "$fell" ]]; then
        record FAIL "$step" "$(status_text "$status" "$LIMIT_LONG"), no 'validation loss fell' line; last words: $(last_words "$log")"
        return
    fi
    local first="${fell% *}" last="${fell#* }" detail
    detail="validation loss $first -> $last on $(basename "$text")${seconds:+ in $seconds}"
    if awk -v a="$first" -v b="$last" 'BEGIN {exit !(b <= a * 2 / 3)}'; then
        record PASS "$step" "$detail (fell by a third or more)"
    else
        record FAIL "$step" "$detail (fell by less than a third)"
    fi
}

step_benchmarks() {
    local step=benchmarks log
    log="$(log_of "$step")"
    local json="$REPORT_DIR/benchmarks.json" table="$REPORT_DIR/benchmarks.txt"
    local -a arguments=(--build-dir "$BUILD_DIR" --json-out "$json")
    [[ -n "$DATA_DIR" ]] && arguments+=(--data "$DATA_DIR")
    ((QUICK)) && arguments+=(--repeat 5)
    {
        echo "\$ KAEL_PLUGINS=cpu,cuda $PYTHON $SOURCE_DIR/benchmarks/gpu_vs_torch.py ${arguments[*]}"
    } >>"$log"
    local start=$SECONDS
    KAEL_PLUGINS=cpu,cuda PYTHONUNBUFFERED=1 timeout --kill-after=30 "$LIMIT_LONG" \
        "$PYTHON" "$SOURCE_DIR/benchmarks/gpu_vs_torch.py" "${arguments[@]}" \
        2>>"$log" | tee "$table" >>"$log"
    local status=${PIPESTATUS[0]}
    echo "# exit status $status after $((SECONDS - start)) s" >>"$log"
    if ((status == 77)); then
        record SKIP "$step" "gpu_vs_torch.py: torch or CUDA unavailable for $PYTHON (see log)"
        return
    fi
    write_bars "$json" "$REPORT_DIR/bars.txt" >>"$log" 2>&1
    local bars=""
    [[ -f "$REPORT_DIR/bars.txt" ]] &&
        bars="; bars: $(grep -Eo '^(PASS|MISS|SKIP)' "$REPORT_DIR/bars.txt" | sort | uniq -c |
            awk '{printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $2}') (bars.txt)"
    if ((status != 0)); then
        record FAIL "$step" "gpu_vs_torch.py $(status_text "$status" "$LIMIT_LONG") (see benchmarks.log)$bars"
    else
        record PASS "$step" "see benchmarks.txt$bars"
    fi
}

step_wheels() {
    local step=wheels log
    log="$(log_of "$step")"
    run_logged "$log" "$LIMIT_LONG" KAEL_PYTHON="$PYTHON" \
        bash "$SCRIPT_DIR/wheels.sh" "$SOURCE_DIR"
    local status=$?
    local built device suite
    built="$(grep -Eo '^[a-z_]+-[0-9.]+-[a-z0-9_.-]+\.whl' "$log" | paste -sd ',' - | sed 's/,/, /g')"
    device="$(sed -n 's/^cuda:0: //p' "$log" | tail -n 1)"
    suite="$(sed -n 's/^python suite (cpu and cuda:0): //p' "$log" | tail -n 1)"
    local detail="${built:-no wheel built}; cuda:0: ${device:-none}; suite: ${suite:-not run}"
    if ((status != 0)) || ! grep -q '^wheels: PASS' "$log"; then
        record FAIL "$step" "$(status_text "$status" "$LIMIT_LONG"): $detail; last words: $(last_words "$log")"
    else
        record PASS "$step" "$detail"
    fi
}

# write_bars JSON OUT: the issue's performance bars, PASS/MISS (SKIP: not measured).
write_bars() {
    "$PYTHON" - "$1" "$2" <<'PYEOF'
import json, sys
source, target = sys.argv[1:]
try:
    with open(source, encoding="utf-8") as handle:
        rows = {row["case"]: row for row in json.load(handle)["rows"]}
except (OSError, ValueError, KeyError) as error:
    rows = {}
    print(f"bars: cannot read {source}: {error}")

def value(case, side):
    row = rows.get(case)
    return None if row is None else row.get(side)

lines = []
def bar(title, ok, shown):
    status = "SKIP" if ok is None else ("PASS" if ok else "MISS")
    lines.append(f"{status} {title}: {shown}")

def ratio_bar(title, case, least):
    kael, torch = value(case, "kael"), value(case, "torch")
    if kael is None or torch is None:
        bar(title, None, f"not measured ({case})")
    else:
        bar(title, kael >= least * torch,
            f"kael {kael:.4g} vs torch {torch:.4g} {rows[case]['unit']} = {kael / torch:.2f}x")

ratio_bar("add f32 2^28 >= 0.9x torch", "add_f32_256Mi", 0.9)
ratio_bar("sum f32 2^28 >= 0.9x torch", "sum_f32_256Mi", 0.9)
ratio_bar("cublas matmul f32 4096 >= 0.9x torch", "matmul_f32_4096 cublas", 0.9)
tile = value("matmul_f32_4096 tile", "kael")
bar("tile matmul f32 4096 >= 5 TFLOP/s", None if tile is None else tile >= 5,
    "not measured" if tile is None else f"{tile:.2f} TFLOP/s")
kael, torch = value("mlp_epoch", "kael"), value("mlp_epoch", "torch")
bar("MLP epoch (C++) faster than torch's", None if kael is None or torch is None else kael < torch,
    "not measured (no --data?)" if kael is None or torch is None
    else f"kael {kael:.3f} s vs torch {torch:.3f} s per epoch (steady state)")
with open(target, "w", encoding="utf-8") as handle:
    handle.write("\n".join(lines) + "\n")
print("\n".join(lines))
PYEOF
}

# ---------------------------------------------------------------------------------------------

run_step() {  # run_step NAME COMMAND...
    if ! selected "$1"; then
        record SKIP "$1" "not selected (--only $ONLY)"
        return
    fi
    echo "== $1"
    local start=$SECONDS
    "${@:2}"
    echo "   ($1: $((SECONDS - start)) s, log: $(log_of "$1"))"
}

print_summary() {
    echo
    echo "===== summary ($SUMMARY)"
    cat "$SUMMARY"
    [[ -f "$REPORT_DIR/bars.txt" ]] && { echo "===== bars ($REPORT_DIR/bars.txt)"; cat "$REPORT_DIR/bars.txt"; }
}

main() {
    echo "kael GPU validation: build $BUILD_DIR, report $REPORT_DIR, data ${DATA_DIR:-none}$( ((QUICK)) && echo ', quick')"
    if ! check_build_dir; then
        print_summary
        exit 1
    fi
    BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
    BIN="$BUILD_DIR/bin"
    TESTS="$BUILD_DIR/tests"
    readonly BUILD_DIR BIN TESTS
    prepare_build_paths
    run_step environment step_environment
    run_step kael-info step_kael_info
    run_step ctest step_ctest
    run_step device-suite-cublas device_run device-suite-cublas tests/device_suite cublas
    run_step device-suite-tile device_run device-suite-tile tests/device_suite tile
    run_step conformance-cublas device_run conformance-cublas bin/kael-conformance cublas
    run_step conformance-tile device_run conformance-tile bin/kael-conformance tile
    run_step unit-suites step_unit_suites
    run_step toy-plugin step_toy_plugin
    run_step matmul-cublas step_matmul_cublas
    run_step matmul-tuned step_matmul_tuned
    run_step pytest-cuda step_pytest_cuda
    run_step reference-on-cuda step_reference_on_cuda
    run_step compute-sanitizer-memcheck step_memcheck
    run_step compute-sanitizer-racecheck step_racecheck
    run_step mlp-cuda step_mlp
    run_step char-gpt-cuda step_char_gpt
    run_step benchmarks step_benchmarks
    run_step wheels step_wheels
    print_summary
    if grep -q '^FAIL ' "$SUMMARY"; then
        exit 1
    elif grep -q '^SKIP ' "$SUMMARY"; then
        exit 3
    fi
    exit 0
}

main
