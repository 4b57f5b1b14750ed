// Reductions composed from sum/max and elementwise ops, so they run on every device.
#include <algorithm>
#include <limits>
#include <string>

#include "dims.h"
#include "kael/ops_more.h"

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
// float32: var and norm square in float64, as PyTorch's accumulation type, then round once.
Tensor widened(const Tensor& a) { return a.dtype() == DType::F32 ? a.to(DType::F64) : a; }

std::int64_t reduced_count(const Tensor& a, std::optional<std::int64_t> dim, const char* op) {
    if (!dim) {
        return a.numel();
    }
    const std::int64_t d = wrapped_dim(a, *dim, op);
    return a.dim() == 0 ? 1 : a.shape()[d];
}

// var before the final rounding: float64 for float32 input (std takes its root first). The
// deviations c = x - mean are taken in the input dtype, from the float32 mean for float32 input,
// then squared and summed in float64; sum(c)^2 / n removes the bias of a mean rounded to
// float32. Passes over x for float32: mean, x - mean, sum(c), c to float64, square, sum (today's
// slots have no fused square-and-sum); float64 skips the widening and the correction.
Tensor widened_var(const Tensor& a, std::optional<std::int64_t> dim, std::int64_t correction,
                   bool keepdim) {
    require_floating(a, "var");
    if (correction < 0) {
        throw ValueError("var: correction must be non-negative, got " +
                         std::to_string(correction));
    }
    const std::int64_t count = reduced_count(a, dim, "var");
    const Tensor centered = dim ? a - mean(a, *dim, true) : a - mean(a);
    const auto divisor = static_cast<double>(std::max<std::int64_t>(count - correction, 0));
    Tensor squares = sum_over(square(widened(centered)), dim, keepdim);
    if (a.dtype() == DType::F32) {
        const Tensor offset = sum_over(centered, dim, keepdim).to(DType::F64);
        // Never below 0 (rounding), so std of a constant is 0, not NaN; NaN stays NaN.
        squares = maximum(squares - square(offset) / static_cast<double>(count),
                          zeros({}, DType::F64, a.device()));
    }
    return squares / divisor;
}

}  // namespace

Tensor var(const Tensor& a, std::optional<std::int64_t> dim, std::int64_t correction,
           bool keepdim) {
    return widened_var(a, dim, correction, keepdim).to(a.dtype());
}

Tensor stddev(const Tensor& a, std::optional<std::int64_t> dim, std::int64_t correction,
              bool keepdim) {
    return sqrt(widened_var(a, dim, correction, keepdim)).to(a.dtype());
}

Tensor norm(const Tensor& a) {
    require_floating(a, "norm");
    return sqrt(sum(square(widened(a)))).to(a.dtype());
}

Tensor any(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    if (dim) {
        (void)wrapped_dim(a, *dim, "any");
    }
    // Counting true elements (sum has an identity) handles empty inputs without special cases.
    const Tensor true_count = sum_over(a.to(DType::Bool), dim, keepdim);
    return gt(true_count, zeros({}, DType::I64, a.device()));
}

Tensor all(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    if (dim) {
        (void)wrapped_dim(a, *dim, "all");
    }
    const Tensor false_count = sum_over(logical_not(a), dim, keepdim);
    return eq(false_count, zeros({}, DType::I64, a.device()));
}

Tensor logsumexp(const Tensor& a, std::int64_t dim, bool keepdim) {
    const Tensor x = is_floating(a.dtype()) ? a : a.to(DType::F32);
    const std::int64_t d = wrapped_dim(x, dim, "logsumexp");
    if (x.dim() > 0 && x.shape()[d] == 0) {
        Shape shape = x.shape();
        if (keepdim) {
            shape[d] = 1;
        } else {
            shape.erase(shape.begin() + d);
        }
        return full(shape, -std::numeric_limits<double>::infinity(), x.dtype(), x.device());
    }
    // Shifting by the row max keeps exp from overflowing; an infinite max is not shifted so that
    // rows of -inf give -inf and rows holding +inf give +inf instead of NaN.
    const Tensor row_max = max(x, d, true);
    const Tensor infinity =
        full({}, std::numeric_limits<double>::infinity(), x.dtype(), x.device());
    const Tensor shift = masked_fill(row_max, eq(abs(row_max), infinity), 0.0);
    const Tensor result = log(sum(exp(x - shift), d, true)) + shift;
    return keepdim || x.dim() == 0 ? result : result.squeeze(d);
}

}  // namespace kael
