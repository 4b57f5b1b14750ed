#pragma once
// The reduce_dims_finished slot for plugins whose finish is a pass over the results
// only (cpu, emulated): reduce_dims() into the results (or a double scratch for the variance,
// which writes f64), then r * scale, or its root, rounded once to the input's dtype. The cuda
// plugin finishes in the reduction's own store instead (reduce_common.cuh).
#include <cstdint>
#include <string>

#include "kael/plugin_kit.h"

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/launch.h"
#include "kael/kernels/tasks/reduce.h"

namespace kael::kernels::tasks {

// The ops and dtypes the slot takes: float sums, variances, norms and logsumexps.
inline void check_reduce_finished_call(kael_reduce_op op, kael_dtype dtype) {
    if (op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_VARIANCE && op != KAEL_REDUCE_NORM2 &&
        op != KAEL_REDUCE_LOGSUMEXP) {
        plugin::unsupported("reduce_dims_finished takes sum, variance, norm2 or logsumexp, not " +
                            std::string(reduce_op_name(op)));
    }
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64) {
        plugin::unsupported(std::string("reduce_dims_finished of ") + plugin::dtype_name(dtype));
    }
}

// A status from the plugin's own reduce_dims slot, called inside a guarded() body, thrown on.
inline void throw_on_failure(kael_status status) {
    if (status != KAEL_STATUS_OK) {
        throw plugin::StatusError(status, plugin::last_error());
    }
}

// The finish of one result: r * scale, its root when asked (root != 0).
KAEL_HD inline double finished(double value, double scale, bool root) {
    const double scaled = value * scale;
    return root ? math::sqrt(scaled) : scaled;
}

template <typename Wide, typename In>
struct FinishResults {
    const Storage<Wide>* source;  // may be target itself (each item reads then writes its own)
    Storage<In>* target;
    double scale;
    bool root;

    KAEL_HD std::int64_t cost() const { return 1; }
    KAEL_HD void operator()(std::int64_t i) const {
        const double value = static_cast<double>(load_element<Wide>(source + i));
        store_element<In>(target + i, static_cast<In>(finished(value, scale, root)));
    }
};

// reduce_dims(op, out_dtype, in_dtype, results, data, outer, size, inner) is the plugin's own
// slot, which validates the rest of the call.
template <typename Launcher, typename ReduceDims>
void launch_reduce_dims_finished(kael_reduce_op op, kael_dtype dtype, void* results,
                                 const void* data, std::int64_t outer, std::int64_t size,
                                 std::int64_t inner, double scale, std::int32_t root,
                                 ReduceDims&& reduce_dims) {
    check_reduce_finished_call(op, dtype);
    const kael_dtype wide = reduce_out_dtype(op, dtype);
    const std::int64_t outputs = outer * inner;
    with_dtype(dtype, [&](auto tag) {
        using In = TagType<decltype(tag)>;
        if constexpr (is_floating_v<In>) {
            if (wide == dtype) {
                reduce_dims(op, wide, dtype, results, data, outer, size, inner);
                auto* target = static_cast<Storage<In>*>(results);
                Launcher::for_each(outputs,
                                   FinishResults<In, In>{target, target, scale, root != 0});
                return;
            }
            const Scratch<Launcher, double> scratch(outputs > 0 ? outputs : 1);
            reduce_dims(op, wide, dtype, scratch.get(), data, outer, size, inner);
            Launcher::for_each(outputs, FinishResults<double, In>{
                                            scratch.get(), static_cast<Storage<In>*>(results),
                                            scale, root != 0});
        }
    });
}

}  // namespace kael::kernels::tasks
