# Sourced by validate.sh: the one list of kael-conformance cases whose
# kernels share memory between threads (shared-memory trees, tiles, staged rows), which
# compute-sanitizer's racecheck inspects. KAEL_RACECHECK_CONFORMANCE overrides it.
# shellcheck shell=bash
RACECHECK_CONFORMANCE="${KAEL_RACECHECK_CONFORMANCE:-elementwise_every_op_dtype_layout,\
reduce_*,var_and_std_*,sort_and_*,sequence_ops_*,topk_*,softmax_*,cross_entropy_*,\
layer_norm_*,attention_*}"
