# shellcheck shell=bash
# validate.sh's suite steps (sourced by it; uses its helpers and BUILD_DIR, TESTS, BIN, PYTHON):
#   unit-suites      every unit suite on the real cuda:0, the emulated plugin disabled
#   toy-plugin       the toy example plugin's conformance on toy:0 beside the real cuda plugin
#   matmul-cublas    nn, device suite and conformance with cuBLAS alone (KAEL_CUDA_CUBLASLT=0)
#   matmul-tuned     the same with every cuBLASLt shape tuned (KAEL_CUDA_GEMM_TUNE=all); the tile
#                    kernel has its own device-suite-tile and conformance-tile steps
#   pytest-cuda      the Python suite on cuda:0, the module built here for this machine's Python

# suite_line LOG STATUS: PASS or FAIL and the suite's last line (Boost.Test's verdict).
suite_line() {
    local log="$1" status="$2"
    local last
    last="$(grep -v '^#' "$log" | grep -v '^$' | tail -n 1 | cut -c1-160)"
    if ((status == 0)); then echo "PASS ${last}"; else echo "FAIL $(status_text "$status" "$LIMIT_SUITE"): ${last}"; fi
}

# suites_run STEP VAR=VALUE... -- SUITE...: each suite under KAEL_PLUGINS=-emulated and the
# variables; one summary line naming the suites that failed.
suites_run() {
    local step="$1" log
    shift
    log="$(log_of "$step")"
    local -a settings=()
    while (($# > 0)) && [[ "$1" != -- ]]; do settings+=("$1"); shift; done
    shift
    local passed=0 total=0 failed=()
    for suite in "$@"; do
        [[ -x "$suite" ]] || continue
        total=$((total + 1))
        local suite_log
        suite_log="$REPORT_DIR/$step.$(basename "$suite").log"
        rm -f "$suite_log"
        run_logged "$suite_log" "$LIMIT_SUITE" KAEL_PLUGINS=-emulated "${settings[@]}" \
            "$suite" --color_output=no
        local status=$?
        echo "$(basename "$suite"): $(suite_line "$suite_log" "$status")" >>"$log"
        grep -m 6 -A 3 'error:' "$suite_log" | cut -c1-400 >>"$log"
        if ((status == 0)); then passed=$((passed + 1)); else failed+=("$(basename "$suite")"); fi
    done
    local detail="$passed of $total suites pass${settings[*]:+ with ${settings[*]}}"
    if ((total == 0)); then
        record FAIL "$step" "no suite found under $BUILD_DIR"
    elif ((${#failed[@]} > 0)); then
        record FAIL "$step" "$detail; failed: ${failed[*]} (see $step.<suite>.log)"
    else
        record PASS "$step" "$detail"
    fi
}

step_unit_suites() {
    local -a suites=()
    for suite in "$TESTS"/unit_*; do
        case "$(basename "$suite")" in
            unit_toy_device) ;;  # needs the toy plugin's folder: the toy-plugin step and CTest
            unit_gpt2_checkpoint) [[ -n "${KAEL_GPT2_CHECKPOINT:-}" ]] && suites+=("$suite") ;;
            *) suites+=("$suite") ;;
        esac
    done
    suites_run unit-suites -- "${suites[@]}"
}

step_toy_plugin() {
    suites_run toy-plugin KAEL_TEST_DEVICE=toy:0 "KAEL_PLUGIN_PATH=$BUILD_DIR/toy_plugin" -- \
        "$BIN/kael-conformance"
}

step_matmul_cublas() {
    suites_run matmul-cublas KAEL_CUDA_CUBLASLT=0 -- "$TESTS/unit_nn" "$TESTS/device_suite" \
        "$BIN/kael-conformance"
}

step_matmul_tuned() {
    suites_run matmul-tuned KAEL_CUDA_GEMM_TUNE=all -- "$TESTS/unit_nn" "$TESTS/device_suite" \
        "$BIN/kael-conformance"
}

step_pytest_cuda() {
    local step=pytest-cuda log module
    log="$(log_of "$step")"
    if ! module="$("$SCRIPT_DIR/python_module.sh" "$BUILD_DIR" "$PYTHON" 2>>"$log")"; then
        record FAIL "$step" "no kael module for $PYTHON (scripts/cuda/python_module.sh; see log)"
        return
    fi
    # Tests that need what a GPU machine may lack (no apt there): node for the tokenizer's
    # reference encoder, Debian's Fashion-MNIST; on the build machine they run and must pass.
    local pytests="$SOURCE_DIR/python/tests" missing=()
    local skip="not no_such_test"  # a -k expression that every test matches
    if ! command -v node >/dev/null 2>&1; then
        missing+=(node)
        skip="$skip and not test_ids_match_the_javascript_encoder_on_the_corpus"
        skip="$skip and not test_end_of_text_is_special_unless_disallowed"
    fi
    if [[ ! -f "${KAEL_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}/train-images-idx3-ubyte.gz" ]]; then
        missing+=(fashion-mnist)
        skip="$skip and not test_fashion_mnist_resumes_exactly"
    fi
    run_logged "$log" "$LIMIT_LONG" "PYTHONPATH=$module" KAEL_TEST_DEVICE=cuda \
        "$PYTHON" -m pytest -q -p no:cacheprovider "$pytests" -k "$skip"
    local status=$?
    local totals
    totals="$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -n 1 | tr -d '=' | sed 's/^ *//')"
    ((${#missing[@]} > 0)) && totals="$totals (deselected for want of ${missing[*]})"
    if ((status == 0)); then
        record PASS "$step" "${totals:-no totals}; module for $("$PYTHON" --version 2>&1)"
    else
        record FAIL "$step" "$(status_text "$status" "$LIMIT_LONG"): ${totals:-no totals}"
    fi
}
