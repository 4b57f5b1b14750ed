// Reductions over sets of dims (amax/amin, norms, var/std), max/min with indices and cumprod,
// from the reduce kernels, elementwise ops and views. amax/amin and the norms record their own
// gradient (PyTorch's tie and zero rules); the rest are recorded through the ops they use.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "channel_calls.h"
#include "dims.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kernel_calls.h"
#include "reduce_dims.h"

namespace kael {

namespace {

// Flags for the reduced dims of input (empty: all), checked and wrapped.
std::vector<bool> reduced_flags(const Tensor& input, const Shape& dims, const char* op) {
    std::vector<bool> flags(input.shape().size(), dims.empty());
    std::vector<bool> seen(std::max<std::size_t>(flags.size(), 1), false);  // a 0-d one has dim 0
    for (const std::int64_t d : dims) {
        const std::int64_t w = detail::wrapped_dim(input, d, op);
        if (seen[static_cast<std::size_t>(w)]) {
            throw ValueError(std::string(op) + ": dim " + std::to_string(w) +
                             " appears multiple times in the list of dims");
        }
        seen[static_cast<std::size_t>(w)] = true;
        if (input.dim() > 0) {
            flags[static_cast<std::size_t>(w)] = true;
        }
    }
    return flags;
}

Shape kept_shape(const Tensor& input, const std::vector<bool>& flags) {
    Shape shape = input.shape();
    for (std::size_t i = 0; i < shape.size(); ++i) {
        shape[i] = flags[i] ? 1 : shape[i];
    }
    return shape;
}

Shape flagged_dims(const std::vector<bool>& flags) {
    Shape dims;
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (flags[i]) {
            dims.push_back(static_cast<std::int64_t>(i));
        }
    }
    return dims;
}

Tensor extreme(const Tensor& input, const Shape& dims, bool keepdim, bool is_max, const char* op) {
    const std::vector<bool> flags = reduced_flags(input, dims, op);
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (flags[i] && input.shape()[i] == 0) {
            throw IndexError(std::string(op) + ": expected reduction dim " + std::to_string(i) +
                             " to have non-zero size (shape " + to_string(input.shape()) + ")");
        }
    }
    const autograd::Recording recording({input});
    const Tensor reduced =
        detail::reduce_over(is_max ? KAEL_REDUCE_MAX : KAEL_REDUCE_MIN, input, flags);
    if (!recording.active()) {
        return keepdim ? reduced.view(kept_shape(input, flags)) : reduced;
    }
    const Tensor kept = reduced.view(kept_shape(input, flags));
    const Tensor out = keepdim ? kept : reduced;
    // The gradient is shared evenly by the elements equal to the extreme.
    return recording.finish(
        out, is_max ? "AmaxBackward" : "AminBackward",
        [input_saved = autograd::saved(input), kept_saved = autograd::saved(kept),
         dims = flagged_dims(flags)](const Tensor& g) {
            const Tensor a = input_saved.unpack();
            const Tensor chosen = eq(a, kept_saved.unpack());
            const Tensor count = dims.empty() ? sum(chosen) : sum(chosen, dims, true);
            const Tensor g_kept = g.reshape(kept_saved.unpack().shape());
            return std::vector<Tensor>{where(chosen, g_kept / count, autograd::zero_scalar(g))};
        });
}

// f32 sums of powers accumulate in f64, as PyTorch's accumulation type.
Tensor widened(const Tensor& a) {
    return a.dtype() == DType::F32 ? a.to(DType::F64) : a;
}

Tensor norm_forward(const Tensor& x, double ord, const Shape& dims, bool keepdim) {
    if (ord == 2) {  // one pass: the norm2 reduction squares and sums in double
        const std::vector<bool> flags = reduced_flags(x, dims, "vector_norm");
        const Tensor out = detail::reduce_over(KAEL_REDUCE_NORM2, x, flags);
        return keepdim ? out.view(kept_shape(x, flags)) : out;
    }
    const Tensor magnitude = abs(x);
    if (std::isinf(ord)) {
        return ord > 0 ? amax(magnitude, dims, keepdim) : amin(magnitude, dims, keepdim);
    }
    const auto total = [&](const Tensor& t) {
        return dims.empty() ? (keepdim ? sum(t).view(Shape(t.shape().size(), 1)) : sum(t))
                            : sum(t, dims, keepdim);
    };
    if (ord == 0) {
        return total(ne(x, zeros({}, x.dtype(), x.device()))).to(x.dtype());
    }
    const Tensor wide = widened(magnitude);
    if (ord == 1) {
        return total(wide).to(x.dtype());
    }
    const Tensor p = full({}, ord, wide.dtype(), x.device());
    return pow(total(pow(wide, p)), full({}, 1.0 / ord, wide.dtype(), x.device())).to(x.dtype());
}

}  // namespace

Tensor amax(const Tensor& input, const Shape& dims, bool keepdim) {
    return extreme(input, dims, keepdim, true, "amax");
}
Tensor amin(const Tensor& input, const Shape& dims, bool keepdim) {
    return extreme(input, dims, keepdim, false, "amin");
}

namespace {

// PyTorch's max(dim)/min(dim) refuse an empty dim with an IndexError, as amax/amin do.
void check_extreme_dim(const Tensor& input, std::int64_t dim, const char* op) {
    const std::int64_t d = detail::wrapped_dim(input, dim, op);
    if (input.dim() > 0 && input.size(d) == 0) {
        throw IndexError(std::string(op) + ": expected reduction dim " + std::to_string(d) +
                         " to have non-zero size (shape " + to_string(input.shape()) + ")");
    }
}

// One pass where the plugin has the reduce_indexed slot, else the index reduction and the
// elements gathered at its indices: each value is the element there (its zero's sign too, which
// an amax's lanes may not keep), and the gradient goes to it, as PyTorch's max(dim).
std::pair<Tensor, Tensor> extreme_with_indices(const Tensor& input, std::int64_t dim, bool keepdim,
                                               bool largest) {
    const char* op = largest ? "max" : "min";
    check_extreme_dim(input, dim, op);
    if (input.dim() == 0 || input.numel() == 0) {
        return largest ? std::pair{max(input, dim, keepdim), argmax(input, dim, keepdim)}
                       : std::pair{min(input, dim, keepdim), argmin(input, dim, keepdim)};
    }
    const std::int64_t d = detail::wrapped_dim(input, dim, op);
    if (!detail::has_reduce_indexed(input)) {
        Tensor indices = largest ? argmax(input, dim, true) : argmin(input, dim, true);
        Tensor values = gather(input, d, indices);
        return keepdim ? std::pair{values, indices}
                       : std::pair{values.squeeze(d), indices.squeeze(d)};
    }
    const autograd::Recording recording({input});
    auto [values, indices] = detail::reduce_indexed_over(
        largest ? KAEL_REDUCE_ARGMAX : KAEL_REDUCE_ARGMIN, input, static_cast<std::size_t>(d));
    if (keepdim) {
        values = values.unsqueeze(d);
        indices = indices.unsqueeze(d);
    }
    if (recording.active()) {
        values =
            recording.finish(values, largest ? "MaxBackward" : "MinBackward",
                             autograd::extremum_backward(input, values, dim, keepdim, largest));
    }
    return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> max_with_indices(const Tensor& input, std::int64_t dim, bool keepdim) {
    return extreme_with_indices(input, dim, keepdim, true);
}
std::pair<Tensor, Tensor> min_with_indices(const Tensor& input, std::int64_t dim, bool keepdim) {
    return extreme_with_indices(input, dim, keepdim, false);
}

Tensor vector_norm(const Tensor& input, double ord, std::optional<Shape> dims, bool keepdim) {
    if (const auto cast = autocast::full({input})) {
        const autocast::Applied applied;
        return vector_norm((*cast)[0], ord, std::move(dims), keepdim);
    }
    if (!is_floating(input.dtype())) {
        throw TypeError("vector_norm: expected a floating dtype, got " + to_string(input.dtype()));
    }
    const Shape reduced = dims.value_or(Shape{});
    const std::vector<bool> flags = reduced_flags(input, reduced, "vector_norm");
    // As PyTorch: a negative ord has no identity, so no reduced dim may be empty.
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (ord < 0 && flags[i] && input.shape()[i] == 0) {
            throw ValueError("vector_norm: a negative ord needs non-empty reduced dims, dim " +
                             std::to_string(i) + " of shape " + to_string(input.shape()) +
                             " is empty");
        }
    }
    if (std::isinf(ord)) {
        return norm_forward(input, ord, reduced, keepdim);  // amax/amin record the gradient
    }
    const autograd::Recording recording({input});
    const Tensor out = norm_forward(input, ord, reduced, keepdim);
    if (ord == 0) {
        return out;  // a count: no gradient, as PyTorch
    }
    // d |x|_p / dx = sign(x) |x|^(p-1) / |x|_p^(p-1), taken as 0 where the norm is 0.
    return recording.finish(
        out, "NormBackward",
        [x_saved = autograd::saved(input), out_saved = autograd::saved_output(out), ord,
         flags = reduced_flags(input, reduced, "vector_norm"), keepdim](const Tensor& g) {
            const Tensor x = x_saved.unpack();
            Tensor norm_kept = out_saved.unpack();
            Tensor g_kept = g;
            if (!keepdim) {
                norm_kept = norm_kept.reshape(kept_shape(x, flags));
                g_kept = g.reshape(kept_shape(x, flags));
            }
            const Tensor zero = autograd::zero_scalar(x);
            Tensor ratio;
            if (ord == 1) {
                ratio = sign(x);
            } else {
                const Tensor p_minus_1 = full({}, ord - 1, x.dtype(), x.device());
                ratio = sign(x) * pow(abs(x), p_minus_1) / pow(norm_kept, p_minus_1);
            }
            return std::vector<Tensor>{where(eq(norm_kept, zero), zero, g_kept * ratio)};
        });
}

Tensor norm(const Tensor& input, double p, std::optional<Shape> dims, bool keepdim) {
    if (!is_floating(input.dtype())) {
        throw TypeError("norm: expected a floating dtype, got " + to_string(input.dtype()));
    }
    return vector_norm(input, p, std::move(dims), keepdim);
}

namespace {

// var (root: std) over the flagged dims as a one-dim var (std) of the input with them moved
// last and merged (a view where they are adjacent and innermost, else a copy): differentiable
// by composition, std's root taken in the variance's own store.
Tensor var_merged(const Tensor& input, const std::vector<bool>& flags, std::int64_t correction,
                  bool keepdim, bool root) {
    const Shape reduced = flagged_dims(flags);
    Shape kept_dims;
    Shape kept_sizes;
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (!flags[i]) {
            kept_dims.push_back(static_cast<std::int64_t>(i));
            kept_sizes.push_back(input.shape()[i]);
        }
    }
    Shape order = kept_dims;
    order.insert(order.end(), reduced.begin(), reduced.end());
    // The merged size spelled out, not -1, which cannot be inferred when a kept dim is empty.
    std::int64_t merged_size = 1;
    for (const std::int64_t d : reduced) {
        merged_size *= input.shape()[static_cast<std::size_t>(d)];
    }
    kept_sizes.push_back(merged_size);
    const Tensor merged = input.dim() == 0 ? input : input.permute(order).reshape(kept_sizes);
    const std::optional<std::int64_t> dim =
        input.dim() == 0 ? std::nullopt : std::optional<std::int64_t>(-1);
    const Tensor out =
        root ? stddev(merged, dim, correction, false) : var(merged, dim, correction, false);
    return keepdim ? out.reshape(kept_shape(input, flags)) : out;
}

// The biased variance (M2 / n) of float64 a over its flagged dims, which form several runs of
// its memory, `lowest` the lowest of them: each group of the lowest run's variance and mean, a
// read of a each, then the law of total variance over the rest (mean of the groups' variances
// plus variance of their means), instead of copying the runs together into one dim. Not for
// float32: its means round to float32, whose error swamps a small spread around a large mean.
Tensor variance_by_groups(const Tensor& a, const std::vector<bool>& flags,
                          const std::vector<bool>& lowest) {
    std::int64_t group = 1;
    std::vector<bool> rest;  // flags of the dims the groups' results keep
    for (std::size_t d = 0; d < flags.size(); ++d) {
        if (lowest[d]) {
            group *= a.shape()[d];
        } else {
            rest.push_back(flags[d]);
        }
    }
    const Tensor within = detail::reduce_over(KAEL_REDUCE_VARIANCE, a, lowest);
    const Tensor means = detail::reduce_over(
        KAEL_REDUCE_SUM, a, lowest, detail::Finish{1.0 / static_cast<double>(group), false});
    const Shape rest_dims = flagged_dims(rest);
    return mean(within, rest_dims) + var(means, rest_dims, 0);
}

// var (root: std) over several dims. Without a gradient to record, read where the input lies:
// reduced dims adjacent in memory in one variance pass, dims on both sides of one kept run by the
// plugin's per-channel moments, other separate runs of float64 by groups.
// Otherwise the reduced dims moved last and merged into one (a copy when they are not adjacent),
// whose one-dim variance records any gradient.
Tensor variance_over(const Tensor& input, const Shape& dims, std::int64_t correction, bool keepdim,
                     bool root) {
    if (dims.size() == 1) {
        return root ? stddev(input, dims.front(), correction, keepdim)
                    : var(input, dims.front(), correction, keepdim);
    }
    const std::vector<bool> flags = reduced_flags(input, dims, root ? "std" : "var");
    if (input.dim() == 0 || input.numel() == 0 || !is_floating(input.dtype()) || correction < 0 ||
        (input.requires_grad() && is_grad_enabled())) {
        return var_merged(input, flags, correction, keepdim, root);
    }
    const Tensor a = detail::reads_in_place(input) ? input : input.contiguous();
    std::int64_t count = 1;
    for (std::size_t d = 0; d < flags.size(); ++d) {
        count *= flags[d] ? a.shape()[d] : 1;
    }
    // n / 0 is inf: inf for a spread, NaN for a constant (0 * inf), as the one-dim var.
    const double factor = static_cast<double>(count) /
                          static_cast<double>(std::max<std::int64_t>(count - correction, 0));
    const std::optional<std::vector<bool>> lowest = detail::lowest_reduced_run(a, flags);
    Tensor out;
    // Dims on both sides of one kept run (var over (0, 2) of [N, C, L]): the plugin's
    // per-channel moments read them once where they lie.
    const std::optional<detail::AroundKept> around = detail::around_kept_run(a, flags);
    if (const auto moments =
            around ? detail::channel_moments(a, {around->outer, around->kept, around->inner},
                                             static_cast<double>(correction))
                   : std::nullopt) {
        const Tensor spread = root ? sqrt(moments->second) : moments->second;
        out = detail::kept_in_logical_order(spread.to(a.dtype()), a, flags);
        return keepdim ? out.reshape(kept_shape(input, flags)) : out;
    }
    if (!lowest) {
        out = detail::reduce_over(KAEL_REDUCE_VARIANCE, a, flags, detail::Finish{factor, root});
    } else if (a.dtype() == DType::F64) {
        out = variance_by_groups(a, flags, *lowest) * factor;
        out = root ? sqrt(out) : out;
    } else {
        out = var_merged(a, flags, correction, false, root);
    }
    return keepdim ? out.reshape(kept_shape(input, flags)) : out;
}

}  // namespace

Tensor var(const Tensor& input, const Shape& dims, std::int64_t correction, bool keepdim) {
    return variance_over(input, dims, correction, keepdim, false);
}

Tensor stddev(const Tensor& input, const Shape& dims, std::int64_t correction, bool keepdim) {
    return variance_over(input, dims, correction, keepdim, true);
}

Tensor cumprod(const Tensor& input, std::int64_t dim) {
    if (const auto cast = autocast::full({input})) {
        const autocast::Applied applied;
        return cumprod((*cast)[0], dim);
    }
    const std::int64_t d = detail::wrapped_dim(input, dim, "cumprod");
    if (input.dim() > 0 && detail::has_scan(input) &&
        !(input.requires_grad() && is_grad_enabled())) {
        // One scan kernel along d; with a gradient to record, the composition below is the
        // differentiable definition.
        return detail::scanned(KAEL_REDUCE_PROD, input, d);
    }
    Tensor out = is_floating(input.dtype()) ? input.clone() : input.to(DType::I64);
    if (input.dim() == 0) {
        return out;
    }
    // f32 (and bf16/f16) products run in f64, as the scan slot's and PyTorch's: [1e30, 1e30,
    // 1e-30, 1e-30] passes 1e60 on its way to 1, and a low-precision result is rounded once.
    if (out.dtype() == DType::F32 || is_low_precision(out.dtype())) {
        out = out.to(DType::F64);
    }
    // Hillis-Steele scan: after the round with shift s, element i holds the product of the
    // min(2s, i + 1) elements ending at i.
    const std::int64_t n = input.size(d);
    for (std::int64_t shift = 1; shift < n; shift *= 2) {
        out = cat({out.slice(d, 0, shift), out.slice(d, shift, n) * out.slice(d, 0, n - shift)}, d);
    }
    return out.to(is_floating(input.dtype()) ? input.dtype() : DType::I64);
}

}  // namespace kael
