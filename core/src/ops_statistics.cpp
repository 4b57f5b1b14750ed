// Reductions composed from sum/max and elementwise ops, so they run on every device; var and std
// are one variance reduction (reduce_dims.h) and a correction.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "dims.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kernel_calls.h"
#include "reduce_dims.h"

namespace kael {

using detail::wrapped_dim;

namespace {

void require_floating(const Tensor& a, const char* op) {
    if (!is_floating(a.dtype())) {
        throw TypeError(std::string(op) + ": expected a floating dtype, got " +
                        to_string(a.dtype()));
    }
}

// Sum over dim, or over everything (keeping every dimension as size 1 when asked).
Tensor sum_over(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    if (dim) {
        return sum(a, *dim, keepdim);
    }
    const Tensor total = sum(a);
    return keepdim ? total.view(Shape(a.shape().size(), 1)) : total;
}

// float32 squares overflow (1e30^2) or vanish (1e-30^2) where the answer itself is a fine
// float32: norm squares in float64, as PyTorch's accumulation type, then round once.
Tensor widened(const Tensor& a) { return a.dtype() == DType::F32 ? a.to(DType::F64) : a; }

// The reduced tensor of `variance` with its dims kept, as the reduction ops' keepdim does.
Tensor kept(const Tensor& reduced, const Tensor& a, std::optional<std::int64_t> dim,
            bool keepdim) {
    if (!keepdim) {
        return reduced;
    }
    return dim && a.dim() > 0 ? reduced.unsqueeze(wrapped_dim(a, *dim, "var"))
                              : reduced.view(Shape(a.shape().size(), 1));
}

struct Variance {
    Tensor value;    // in a's dtype, corrected (its root for std), dims kept as asked
    double divisor;  // max(n - correction, 0)
};

// One pass of the variance reduction (Welford states in double, so float32 data whose squares
// overflow float32 still works) finished in its own store: M2 / n * n / (n - correction), and
// the root for std, rounded once to a's dtype (reduce_dims.h's Finish).
Variance corrected_variance(const Tensor& a, std::optional<std::int64_t> dim,
                            std::int64_t correction, bool keepdim, bool root) {
    require_floating(a, "var");
    if (correction < 0) {
        throw ValueError("var: correction must be non-negative, got " +
                         std::to_string(correction));
    }
    std::vector<bool> reduced(a.shape().size(), !dim);
    std::int64_t count = a.numel();
    if (dim) {
        const std::int64_t d = wrapped_dim(a, *dim, "var");
        if (a.dim() > 0) {
            reduced[static_cast<std::size_t>(d)] = true;
            count = a.shape()[static_cast<std::size_t>(d)];
        } else {
            count = 1;
        }
    }
    const auto divisor = static_cast<double>(std::max<std::int64_t>(count - correction, 0));
    // n / 0 is inf: inf for a spread, NaN for a constant (0 * inf), as PyTorch's x / 0.
    const double factor = static_cast<double>(count) / divisor;
    const Tensor value =
        detail::reduce_over(KAEL_REDUCE_VARIANCE, a, reduced, detail::Finish{factor, root});
    return {kept(value, a, dim, keepdim), divisor};
}

}  // namespace

Tensor var(const Tensor& a, std::optional<std::int64_t> dim, std::int64_t correction,
           bool keepdim) {
    const autograd::Recording recording({a});
    const Variance variance = corrected_variance(a, dim, correction, keepdim, false);
    return recording.finish(variance.value, "VarBackward",
                            autograd::variance_backward(a, Tensor(), dim, keepdim,
                                                        variance.divisor));
}

Tensor stddev(const Tensor& a, std::optional<std::int64_t> dim, std::int64_t correction,
              bool keepdim) {
    const autograd::Recording recording({a});
    const Variance variance = corrected_variance(a, dim, correction, keepdim, true);
    return recording.finish(variance.value, "StdBackward",
                            autograd::variance_backward(a, variance.value, dim, keepdim,
                                                        variance.divisor));
}

Tensor norm(const Tensor& a) {
    require_floating(a, "norm");
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return norm((*cast)[0]);
    }
    return sqrt(sum(square(widened(a)))).to(a.dtype());
}

// any and all are max and min of the truth values, one pass; an empty reduced extent (which
// max and min refuse) gives any's False and all's True through a count.
namespace {
bool empty_extent(const Tensor& a, std::optional<std::int64_t> dim) {
    return dim && a.dim() > 0 ? a.size(*dim) == 0 : a.numel() == 0;
}
}  // namespace

Tensor any(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    if (dim) {
        dim = wrapped_dim(a, *dim, "any");
    }
    const Tensor truth = a.to(DType::Bool);
    if (empty_extent(truth, dim)) {
        return gt(sum_over(truth, dim, keepdim), zeros({}, DType::I64, a.device()));
    }
    return max(truth, dim, keepdim);
}

Tensor all(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    if (dim) {
        dim = wrapped_dim(a, *dim, "all");
    }
    const Tensor truth = a.to(DType::Bool);
    if (empty_extent(truth, dim)) {
        return eq(sum_over(logical_not(truth), dim, keepdim), zeros({}, DType::I64, a.device()));
    }
    return min(truth, dim, keepdim);
}

Tensor logsumexp(const Tensor& a, std::int64_t dim, bool keepdim) {
    return logsumexp(a, Shape{dim}, keepdim);
}

Tensor logsumexp(const Tensor& a, const Shape& dims, bool keepdim) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return logsumexp((*cast)[0], dims, keepdim);
    }
    const Tensor x = is_floating(a.dtype()) ? a : a.to(DType::F32);
    // Wrapped, checked for repeats, sorted: as PyTorch, an empty list reduces every dim.
    std::vector<bool> reduced(static_cast<std::size_t>(x.dim()), dims.empty());
    for (const std::int64_t dim : dims) {
        const auto d = static_cast<std::size_t>(wrapped_dim(x, dim, "logsumexp"));
        if (x.dim() > 0 && reduced[d] && !dims.empty()) {
            throw ValueError("logsumexp: dim " + std::to_string(d) +
                             " appears multiple times in the list of dims");
        }
        if (x.dim() > 0) {
            reduced[d] = true;
        }
    }
    Shape kept_shape = x.shape();
    Shape out_shape;
    Shape reduced_dims;
    bool empty = false;
    for (std::size_t d = 0; d < reduced.size(); ++d) {
        if (reduced[d]) {
            kept_shape[d] = 1;
            reduced_dims.push_back(static_cast<std::int64_t>(d));
            empty = empty || x.shape()[d] == 0;
        } else {
            out_shape.push_back(x.shape()[d]);
        }
    }
    if (empty) {  // log(0): -inf, as PyTorch
        return full(keepdim ? kept_shape : out_shape, -std::numeric_limits<double>::infinity(),
                    x.dtype(), x.device());
    }
    if (x.dim() == 0) {
        return x.clone();
    }
    // Plugins that know the logsumexp reduce op read each row once, with an online max and sum
    // of exp.
    if (detail::serves_reduce_op(x, KAEL_REDUCE_LOGSUMEXP)) {
        const autograd::Recording recording({x});
        const Tensor reduced_out = detail::reduce_over(KAEL_REDUCE_LOGSUMEXP, x, reduced);
        const Tensor out = keepdim ? reduced_out.view(kept_shape) : reduced_out;
        return recording.finish(out, "LogsumexpBackward",
                                autograd::logsumexp_backward(x, out, kept_shape));
    }
    // A transposed or permuted tensor is worked on in its memory order (the same elements, a
    // contiguous view), so that x - shift and exp stream memory instead of transposing it (as
    // PyTorch's outputs keep their input's layout); the kept-dims result is permuted back.
    Shape order(static_cast<std::size_t>(x.dim()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return x.strides()[static_cast<std::size_t>(a)] > x.strides()[static_cast<std::size_t>(b)];
    });
    const Tensor in_memory = x.permute(order);
    if (x.is_contiguous() || !in_memory.is_contiguous()) {
        order.clear();  // already in memory order, or not one dense block: as it is
    }
    const Tensor work = order.empty() ? x : in_memory;
    Shape work_dims;
    for (std::size_t k = 0; k < order.size(); ++k) {
        if (reduced[static_cast<std::size_t>(order[k])]) {
            work_dims.push_back(static_cast<std::int64_t>(k));
        }
    }
    if (order.empty()) {
        work_dims = reduced_dims;
    }
    // Shifting by the max keeps exp from overflowing; an infinite max is not shifted so that
    // all -inf give -inf and a +inf gives +inf instead of NaN.
    const Tensor row_max = amax(work, work_dims, true);
    const Tensor infinity =
        full({}, std::numeric_limits<double>::infinity(), x.dtype(), x.device());
    const Tensor shift = masked_fill(row_max, eq(abs(row_max), infinity), 0.0);
    Tensor result = log(sum(exp(work - shift), work_dims, true)) + shift;
    if (!order.empty()) {
        Shape inverse(order.size());
        for (std::size_t k = 0; k < order.size(); ++k) {
            inverse[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
        }
        result = result.permute(inverse);
    }
    return keepdim ? result : result.reshape(out_shape);
}

}  // namespace kael
