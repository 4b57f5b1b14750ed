#pragma once
// Max and average pooling (KAEL_EXTENSION_POOLING) as device tasks, for the plugins without a
// pooling library (emulated, cuda). Forward: one item per output; max keeps the window's first
// largest cell (a NaN always wins, the last one, as PyTorch's) and its flat position in the
// input plane, which the workspace holds for the backward; average divides the window's sum by
// its cells (in the padded input, or in the input alone). Backward: one item per input cell,
// gathering from every output whose window holds the cell in a fixed order, so the gradient
// repeats run to run with no atomics. Unused spatial dims are size 1, so every loop runs 3 deep.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/int_divider.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/tasks/launch.h"
#include "kael/plugin_extensions.h"

namespace kael::kernels::tasks {

// Positions below 2^31 (pools() declines larger calls), so items split into coordinates by
// 32-bit multiply-high division: a device's 64-bit divisions, a dozen an item, had made the
// GPU's pooling compute-bound at half PyTorch's speed.
using PoolDivider = IntDivider<std::uint32_t>;

struct PoolPlan {
    kael_pool_kind kind;
    std::int64_t input[3], kernel[3], output[3], stride[3], padding[3], dilation[3];
    std::int64_t input_plane, output_plane;  // cells of one (n, c) plane
    PoolDivider by_input[3], by_output[3], by_stride[3], by_input_plane, by_output_plane;
};

// A divider by size; an empty size (a call with no items) divides by 1 rather than by zero.
inline PoolDivider divider(std::int64_t size) {
    return PoolDivider(static_cast<std::uint32_t>(size > 0 ? size : 1));
}

inline PoolPlan pool_plan(const kael_pool_geometry& g) {
    PoolPlan plan{};
    plan.kind = g.kind;
    plan.input_plane = 1;
    plan.output_plane = 1;
    // The spatial dims are the plan's last ones, so the innermost loops walk the last dim.
    const int unused = 3 - static_cast<int>(g.spatial);
    for (int d = 0; d < 3; ++d) {
        const bool used = d >= unused;
        const int s = used ? d - unused : 0;
        plan.input[d] = used ? g.input[s] : 1;
        plan.kernel[d] = used ? g.kernel[s] : 1;
        plan.output[d] = used ? g.output[s] : 1;
        plan.stride[d] = used ? g.stride[s] : 1;
        plan.padding[d] = used ? g.padding_before[s] : 0;
        plan.dilation[d] = used && g.kind == KAEL_POOL_MAX ? g.dilation[s] : 1;
        plan.input_plane *= plan.input[d];
        plan.output_plane *= plan.output[d];
        plan.by_input[d] = divider(plan.input[d]);
        plan.by_output[d] = divider(plan.output[d]);
        plan.by_stride[d] = divider(plan.stride[d]);
    }
    plan.by_input_plane = divider(plan.input_plane);
    plan.by_output_plane = divider(plan.output_plane);
    return plan;
}

// f64 pools in double, everything else in float.
template <typename S>
using PoolCompute = std::conditional_t<std::is_same_v<S, double>, double, float>;

// Plane p and coordinates at of item (below 2^31) in planes of `plane` cells shaped `sizes`.
KAEL_HD inline std::int64_t unflatten(std::int64_t item, const PoolDivider& plane,
                                      const PoolDivider (&sizes)[3], std::int64_t (&at)[3]) {
    auto rest = static_cast<std::uint32_t>(item);
    const std::uint32_t p = plane.divide(rest);
    rest -= p * plane.divisor;
    for (int d = 2; d > 0; --d) {
        const std::uint32_t q = sizes[d].divide(rest);
        at[d] = rest - q * sizes[d].divisor;
        rest = q;
    }
    at[0] = rest;
    return p;
}

// The steps k in [first, last) of a window along one dim whose cells start + k * step lie in
// [0, size); empty when none do. A step of 1 (every average pool) divides nothing.
KAEL_HD inline void window(std::int32_t start, std::int32_t size, std::int32_t step,
                           std::int32_t kernel, std::int32_t& first, std::int32_t& last) {
    const std::int32_t room = size - start;  // cells from start to the input's end
    if (step == 1) {
        first = start < 0 ? -start : 0;
        last = room < kernel ? room : kernel;
    } else {
        first = start < 0 ? (step - 1 - start) / step : 0;
        last = room <= 0 ? 0 : min_of((room + step - 1) / step, kernel);
    }
    if (last < first) {
        last = first;
    }
}

template <typename S>
struct PoolForward {
    const S* input;
    S* output;
    std::int32_t* positions;  // max only
    PoolPlan plan;

    KAEL_HD void operator()(std::int64_t item) const {
        using C = PoolCompute<S>;
        std::int64_t o[3];
        const S* source =
            input + unflatten(item, plan.by_output_plane, plan.by_output, o) * plan.input_plane;
        // Every position is below 2^31 (pools()): the window's index math in 32 bits, which a
        // GPU does in one instruction where 64-bit multiplies take several. Each dim's window
        // is clamped to the input first, so the loops below read without a check a cell.
        std::int32_t start[3];
        std::int32_t size[3];
        std::int32_t step[3];
        std::int32_t first[3];
        std::int32_t last[3];
        for (int d = 0; d < 3; ++d) {
            start[d] = static_cast<std::int32_t>(o[d] * plan.stride[d] - plan.padding[d]);
            size[d] = static_cast<std::int32_t>(plan.input[d]);
            step[d] = static_cast<std::int32_t>(plan.dilation[d]);
            window(start[d], size[d], step[d], static_cast<std::int32_t>(plan.kernel[d]), first[d],
                   last[d]);
        }
        const bool is_max = plan.kind == KAEL_POOL_MAX;
        C best = -static_cast<C>(INFINITY);
        C sum = 0;
        std::int32_t where = -1;
        for (std::int32_t k0 = first[0]; k0 < last[0]; ++k0) {
            const std::int32_t i0 = start[0] + k0 * step[0];
            for (std::int32_t k1 = first[1]; k1 < last[1]; ++k1) {
                const std::int32_t row = (i0 * size[1] + start[1] + k1 * step[1]) * size[2];
                for (std::int32_t k2 = first[2]; k2 < last[2]; ++k2) {
                    const std::int32_t flat = row + start[2] + k2 * step[2];
                    const C value = convert_value<C>(source[flat]);
                    if (is_max) {
                        if (where < 0 || value > best || value != value) {
                            best = value;
                            where = flat;
                        }
                    } else {
                        sum += value;
                    }
                }
            }
        }
        if (is_max) {
            output[item] = convert_value<S>(best);
            positions[item] = where < 0 ? 0 : where;
            return;
        }
        const auto divisor = static_cast<std::int32_t>(
            plan.kind == KAEL_POOL_AVG_INCLUDE_PADDING
                ? plan.kernel[0] * plan.kernel[1] * plan.kernel[2]
                : (last[0] - first[0]) * (last[1] - first[1]) * (last[2] - first[2]));
        output[item] = convert_value<S>(sum / static_cast<C>(divisor));
    }
};

// The outputs along one dim whose windows reach input cell i: [first, last] (empty if last <
// first); max pooling checks the exact cell by position, average pooling has no dilation.
KAEL_HD inline void reaching(const PoolPlan& plan, int d, std::int64_t i, std::int64_t& first,
                             std::int64_t& last) {
    const std::int64_t far = i + plan.padding[d];  // the cell's offset from the padded start
    const std::int64_t reach = (plan.kernel[d] - 1) * plan.dilation[d];
    const PoolDivider& by = plan.by_stride[d];
    first =
        far - reach <= 0 ? 0 : by.divide(static_cast<std::uint32_t>(far - reach + by.divisor - 1));
    last = min_of(by.divide(static_cast<std::uint32_t>(far)), plan.output[d] - 1);
}

// Cells of an average window inside the input (padding excluded) along one dim.
KAEL_HD inline std::int64_t inside(const PoolPlan& plan, int d, std::int64_t o) {
    std::int32_t first = 0;
    std::int32_t last = 0;
    window(static_cast<std::int32_t>(o * plan.stride[d] - plan.padding[d]),
           static_cast<std::int32_t>(plan.input[d]), 1, static_cast<std::int32_t>(plan.kernel[d]),
           first, last);
    return last - first;
}

template <typename S>
struct PoolBackward {
    const S* grad_output;
    const std::int32_t* positions;  // max only
    S* grad_input;
    PoolPlan plan;

    KAEL_HD void operator()(std::int64_t item) const {
        using C = PoolCompute<S>;
        std::int64_t at[3];
        const std::int64_t plane = unflatten(item, plan.by_input_plane, plan.by_input, at);
        const std::int64_t flat = (at[0] * plan.input[1] + at[1]) * plan.input[2] + at[2];
        std::int64_t first[3];
        std::int64_t last[3];
        for (int d = 0; d < 3; ++d) {
            reaching(plan, d, at[d], first[d], last[d]);
        }
        const S* grads = grad_output + plane * plan.output_plane;
        const std::int32_t* kept = positions + plane * plan.output_plane;
        const bool is_max = plan.kind == KAEL_POOL_MAX;
        const auto cell = static_cast<std::int32_t>(flat);
        const auto width1 = static_cast<std::int32_t>(plan.output[1]);
        const auto width2 = static_cast<std::int32_t>(plan.output[2]);
        // An average over the padded window scales by one reciprocal, not a division an output.
        const C whole_window =
            C(1) / static_cast<C>(plan.kernel[0] * plan.kernel[1] * plan.kernel[2]);
        C total = 0;
        for (auto o0 = static_cast<std::int32_t>(first[0]); o0 <= last[0]; ++o0) {
            for (auto o1 = static_cast<std::int32_t>(first[1]); o1 <= last[1]; ++o1) {
                for (auto o2 = static_cast<std::int32_t>(first[2]); o2 <= last[2]; ++o2) {
                    const std::int32_t out = (o0 * width1 + o1) * width2 + o2;
                    const C grad = convert_value<C>(grads[out]);
                    if (is_max) {
                        total += kept[out] == cell ? grad : C(0);
                    } else if (plan.kind == KAEL_POOL_AVG_INCLUDE_PADDING) {
                        total += grad;
                    } else {
                        total += grad / static_cast<C>(inside(plan, 0, o0) * inside(plan, 1, o1) *
                                                       inside(plan, 2, o2));
                    }
                }
            }
        }
        grad_input[item] = convert_value<S>(
            plan.kind == KAEL_POOL_AVG_INCLUDE_PADDING ? total * whole_window : total);
    }
};

// Whether the tasks pool this call: a float dtype, 1-3 dims, every position (of the batch's
// inputs and outputs, and within a padded dim) below 2^31.
inline bool pools(kael_dtype dtype, const kael_pool_geometry* g) {
    if (g == nullptr || g->struct_size < sizeof(kael_pool_geometry) || g->spatial < 1 ||
        g->spatial > 3 || g->kind < KAEL_POOL_MAX || g->kind > KAEL_POOL_AVG_EXCLUDE_PADDING) {
        return false;
    }
    constexpr std::int64_t kBound = std::int64_t{1} << 31;
    std::int64_t input = g->batch * g->channels;
    std::int64_t output = input;
    for (int d = 0; d < g->spatial; ++d) {
        input *= g->input[d];
        output *= g->output[d];
        if (g->input[d] + g->padding_before[d] + g->stride[d] >= kBound) {
            return false;
        }
    }
    return input < kBound && output < kBound &&
           (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64 || dtype == KAEL_DTYPE_BF16 ||
            dtype == KAEL_DTYPE_F16);
}

// kael_pooling.workspace_bytes: max pooling's int32 positions, one per output; -1 to decline.
inline std::int64_t pool_workspace_bytes(kael_dtype dtype, const kael_pool_geometry* g) {
    if (!pools(dtype, g)) {
        return -1;
    }
    if (g->kind != KAEL_POOL_MAX) {
        return 0;
    }
    return g->batch * g->channels * pool_plan(*g).output_plane *
           static_cast<std::int64_t>(sizeof(std::int32_t));
}

template <typename Visit>
void with_pool_dtype(kael_dtype dtype, const kael_pool_geometry* g, Visit&& visit) {
    if (!pools(dtype, g)) {
        plugin::unsupported("this pooling's dtype or geometry");
    }
    with_float_storage_dtype("pooling", dtype, visit);
}

template <typename Launcher>
void launch_pool_forward(kael_dtype dtype, const kael_pool_geometry* g, const void* input,
                         void* output, void* workspace) {
    with_pool_dtype(dtype, g, [&](auto tag) {
        using S = TagType<decltype(tag)>;
        const PoolPlan plan = pool_plan(*g);
        Launcher::for_each(g->batch * g->channels * plan.output_plane,
                           PoolForward<S>{static_cast<const S*>(input), static_cast<S*>(output),
                                          static_cast<std::int32_t*>(workspace), plan});
    });
}

template <typename Launcher>
void launch_pool_backward(kael_dtype dtype, const kael_pool_geometry* g, const void* grad_output,
                          const void* workspace, void* grad_input) {
    with_pool_dtype(dtype, g, [&](auto tag) {
        using S = TagType<decltype(tag)>;
        const PoolPlan plan = pool_plan(*g);
        Launcher::for_each(g->batch * g->channels * plan.input_plane,
                           PoolBackward<S>{static_cast<const S*>(grad_output),
                                           static_cast<const std::int32_t*>(workspace),
                                           static_cast<S*>(grad_input), plan});
    });
}

// The kael_pooling table of a plugin whose Launcher runs these tasks; kSelect makes the
// call's device current (or checks it). One table per instantiation, made at the first call.
template <typename Launcher, void (*kSelect)(std::int32_t)>
struct PoolingTasks {
    static std::int64_t workspace_bytes(int32_t /*device*/, kael_dtype dtype,
                                        const kael_pool_geometry* geometry) {
        return pool_workspace_bytes(dtype, geometry);
    }
    static kael_status forward(int32_t device, kael_dtype dtype, const kael_pool_geometry* geometry,
                               const void* input, void* output, void* workspace) {
        return plugin::guarded("pool_forward", [&] {
            kSelect(device);
            launch_pool_forward<Launcher>(dtype, geometry, input, output, workspace);
        });
    }
    static kael_status backward(int32_t device, kael_dtype dtype,
                                const kael_pool_geometry* geometry, const void* grad_output,
                                const void* workspace, void* grad_input) {
        return plugin::guarded("pool_backward", [&] {
            kSelect(device);
            launch_pool_backward<Launcher>(dtype, geometry, grad_output, workspace, grad_input);
        });
    }
    static const kael_pooling* table() {
        static const kael_pooling made = {sizeof(kael_pooling), "kael's pooling tasks",
                                          workspace_bytes, forward, backward};
        return &made;
    }
};

}  // namespace kael::kernels::tasks
