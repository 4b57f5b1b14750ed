#pragma once
// The reduce op table's rows (plugin_api.h's KAEL_REDUCE_OPS) and the checks every reduce,
// reduce_dims and reduce_indexed slot starts with, as the cpu plugin makes them.
#include <cstdint>
#include <string>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// One row of plugin_api.h's reduce op table, KAEL_REDUCE_OPS; indexed by op (the header checks
// that each row's value is its position).
struct ReduceOpInfo {
    const char* name;
    int input_class;  // KAEL_OP_INPUTS_*
    int writes;       // KAEL_REDUCE_WRITES_*
    bool empty_has_value;
};
#define KAEL_REDUCE_OP_INFO(op, value, name, in, out, empty, since) \
    {name, KAEL_OP_INPUTS_##in, KAEL_REDUCE_WRITES_##out, empty != 0},
inline constexpr ReduceOpInfo kReduceOps[KAEL_REDUCE_COUNT] = {
    KAEL_REDUCE_OPS(KAEL_REDUCE_OP_INFO)};
#undef KAEL_REDUCE_OP_INFO

inline const char* reduce_op_name(kael_reduce_op op) {
    return op >= 0 && op < KAEL_REDUCE_COUNT ? kReduceOps[op].name : "unknown reduction";
}

// op must be valid.
inline kael_dtype reduce_out_dtype(kael_reduce_op op, kael_dtype in_dtype) {
    const bool floating = in_dtype == KAEL_DTYPE_F32 || in_dtype == KAEL_DTYPE_F64;
    switch (kReduceOps[op].writes) {
        case KAEL_REDUCE_WRITES_WIDE: return floating ? in_dtype : KAEL_DTYPE_I64;
        case KAEL_REDUCE_WRITES_SAME: return in_dtype;
        case KAEL_REDUCE_WRITES_F64: return KAEL_DTYPE_F64;
        default: return KAEL_DTYPE_I64;
    }
}

// Validates a reduce or reduce_dims call (outputs results from reduced runs of `size`) as the cpu
// plugin does; name is the op's name for messages.
inline void check_reduce_call(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                              const void* results, const void* data, std::int64_t size,
                              std::int64_t outputs) {
    if (op < 0 || op >= KAEL_REDUCE_COUNT) {
        plugin::invalid("invalid reduce op " + std::to_string(op));
    }
    const std::string name = reduce_op_name(op);
    if (!valid_dtype(in_dtype) || !valid_dtype(out_dtype)) {
        plugin::invalid(name + ": invalid dtype");
    }
    if (!takes_dtype(kReduceOps[op].input_class, in_dtype)) {
        plugin::unsupported(name + " of " + plugin::dtype_name(in_dtype));
    }
    const kael_dtype expected = reduce_out_dtype(op, in_dtype);
    if (out_dtype != expected) {
        plugin::invalid(name + " of " + plugin::dtype_name(in_dtype) + " writes " +
                        plugin::dtype_name(expected) + ", not " + plugin::dtype_name(out_dtype));
    }
    check_rows(name.c_str(), size, outputs);
    if (outputs > 0 && (results == nullptr || (size > 0 && data == nullptr))) {
        plugin::invalid(name + ": null results or data");
    }
    if (outputs > 0 && size == 0 && !kReduceOps[op].empty_has_value) {
        plugin::invalid(name + " of an empty row has no value");
    }
}

// ABI 1.20's last pass (KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS): f32 partials in, bf16/f16
// results out, folded as f32 and rounded once as stored.
inline bool is_last_pass(kael_dtype out_dtype, kael_dtype in_dtype) {
    return in_dtype == KAEL_DTYPE_F32 && is_low_precision(out_dtype);
}

// Declines a last pass (unsupported: the core then converts f32 results) unless op folds its
// partials as itself (sum, prod, norm2, logsumexp; a mean divides, extremes keep their dtype) and
// the plugin takes this call (plugin_takes).
inline void check_last_pass(kael_reduce_op op, kael_dtype out_dtype, bool plugin_takes = true) {
    const bool folds = op == KAEL_REDUCE_SUM || op == KAEL_REDUCE_PROD || op == KAEL_REDUCE_NORM2 ||
                       op == KAEL_REDUCE_LOGSUMEXP;
    if (!folds || !plugin_takes) {
        plugin::unsupported(std::string(reduce_op_name(op)) + " of f32 partials into " +
                            plugin::dtype_name(out_dtype) + " (the core converts)");
    }
}

// The reduce_indexed slot's checks; true for max (ARGMAX), false for min (ARGMIN).
inline bool check_reduce_indexed_call(kael_reduce_op op, kael_dtype dtype, const void* values,
                                      const std::int64_t* indices, const void* data,
                                      std::int64_t outer, std::int64_t size, std::int64_t inner) {
    if (op != KAEL_REDUCE_ARGMAX && op != KAEL_REDUCE_ARGMIN) {
        plugin::unsupported("reduce_indexed takes argmax or argmin, not op " + std::to_string(op));
    }
    if (!valid_dtype(dtype)) {
        plugin::invalid("reduce_indexed: invalid dtype");
    }
    if (outer < 0 || size < 0 || inner < 0) {
        plugin::invalid("reduce_indexed: negative outer, size or inner");
    }
    if (outer * inner > 0 && size == 0) {
        plugin::invalid("reduce_indexed: max/min of an empty row has no value");
    }
    if (outer * inner > 0 && (values == nullptr || indices == nullptr || data == nullptr)) {
        plugin::invalid("reduce_indexed: null values, indices or data");
    }
    return op == KAEL_REDUCE_ARGMAX;
}

}  // namespace kael::kernels::tasks
