// Reductions over dims: read where the input lies, through reduce_over (reduce_dims.h).
#include <algorithm>

#include "autograd/record.h"
#include "dims.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "reduce_dims.h"

namespace kael {

namespace {

bool needs_elements(kael_reduce_op op) {
    return op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_PROD;
}

// finish, where given, is applied in the reduction's last pass (reduce_dims.h).
Tensor reduce_all(kael_reduce_op op, const char* name, const Tensor& a,
                  const detail::Finish* finish = nullptr) {
    if (needs_elements(op) && a.numel() == 0) {
        throw ValueError(std::string(name) + ": cannot reduce an empty tensor of shape " +
                         to_string(a.shape()));
    }
    const std::vector<bool> reduced(a.shape().size(), true);
    return finish != nullptr ? detail::reduce_over(op, a, reduced, *finish)
                             : detail::reduce_over(op, a, reduced);
}

Tensor reduce_dim(kael_reduce_op op, const char* name, const Tensor& a, std::int64_t dim,
                  bool keepdim, const detail::Finish* finish = nullptr) {
    const std::int64_t rank = std::max<std::int64_t>(a.dim(), 1);
    if (dim < -rank || dim >= rank) {
        throw IndexError(std::string(name) + ": dimension " + std::to_string(dim) +
                         " is out of range for shape " + to_string(a.shape()));
    }
    if (a.dim() == 0) {
        return reduce_all(op, name, a, finish);
    }
    dim = dim < 0 ? dim + a.dim() : dim;
    const std::int64_t size = a.shape()[dim];
    if (needs_elements(op) && size == 0) {
        throw ValueError(std::string(name) + ": cannot reduce dimension " + std::to_string(dim) +
                         " of size 0 (shape " + to_string(a.shape()) + ")");
    }
    std::vector<bool> reduced(a.shape().size(), false);
    reduced[static_cast<std::size_t>(dim)] = true;
    const Tensor out = finish != nullptr ? detail::reduce_over(op, a, reduced, *finish)
                                         : detail::reduce_over(op, a, reduced);
    return keepdim ? out.unsqueeze(dim) : out;
}

Tensor reduce(kael_reduce_op op, const char* name, const Tensor& a,
              std::optional<std::int64_t> dim, bool keepdim) {
    if (!dim) {
        Tensor out = reduce_all(op, name, a);
        if (keepdim) {
            return out.view(Shape(a.shape().size(), 1));
        }
        return out;
    }
    return reduce_dim(op, name, a, *dim, keepdim);
}

}  // namespace

Tensor sum(const Tensor& a) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return sum((*cast)[0]);
    }
    const autograd::Recording recording({a});
    return recording.finish(reduce_all(KAEL_REDUCE_SUM, "sum", a), "SumBackward",
                            autograd::sum_backward(a, std::nullopt, false));
}
Tensor sum(const Tensor& a, std::int64_t dim, bool keepdim) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return sum((*cast)[0], dim, keepdim);
    }
    const autograd::Recording recording({a});
    return recording.finish(reduce_dim(KAEL_REDUCE_SUM, "sum", a, dim, keepdim), "SumBackward",
                            autograd::sum_backward(a, dim, keepdim));
}

namespace {

void require_floating_mean(const Tensor& a) {
    if (!is_floating(a.dtype())) {
        throw TypeError("mean: expected a floating dtype, got " + to_string(a.dtype()));
    }
}

// mean is the sum with each result scaled by 1 / count in the same pass; its gradient is the
// sum's divided by count, one MeanBackward node.
autograd::BackwardFunction mean_backward(autograd::BackwardFunction sum_backward,
                                         std::int64_t count) {
    return [sum_backward = std::move(sum_backward), count](const Tensor& g) {
        return sum_backward(g / static_cast<double>(count));
    };
}

detail::Finish scale_by_count(std::int64_t count) {
    return {1.0 / static_cast<double>(count), false};  // 1 / 0 = inf: an empty mean is NaN
}

}  // namespace

Tensor mean(const Tensor& a) {
    require_floating_mean(a);
    const autograd::Recording recording({a});
    const detail::Finish finish = scale_by_count(a.numel());
    return recording.finish(reduce_all(KAEL_REDUCE_SUM, "mean", a, &finish), "MeanBackward",
                            mean_backward(autograd::sum_backward(a, std::nullopt, false),
                                          a.numel()));
}

Tensor mean(const Tensor& a, std::int64_t dim, bool keepdim) {
    require_floating_mean(a);
    const autograd::Recording recording({a});
    const std::int64_t count = a.dim() == 0 ? 1 : a.size(dim);
    const detail::Finish finish = scale_by_count(count);
    return recording.finish(reduce_dim(KAEL_REDUCE_SUM, "mean", a, dim, keepdim, &finish),
                            "MeanBackward",
                            mean_backward(autograd::sum_backward(a, dim, keepdim), count));
}

namespace {

// Dims of a multi-dim reduction, wrapped and checked against the user's shape, highest first so
// reducing one keeps the others' positions.
Shape reduction_dims(const Tensor& a, const Shape& dims, const char* op) {
    Shape wrapped;
    for (const std::int64_t dim : dims) {
        const std::int64_t d = detail::wrapped_dim(a, dim, op);
        if (std::find(wrapped.begin(), wrapped.end(), d) != wrapped.end()) {
            throw ValueError(std::string(op) + ": dim " + std::to_string(d) +
                             " appears multiple times in the list of dims " + to_string(dims) +
                             " (shape " + to_string(a.shape()) + ")");
        }
        wrapped.push_back(d);
    }
    std::sort(wrapped.rbegin(), wrapped.rend());
    return wrapped;
}

}  // namespace

Tensor sum(const Tensor& a, const Shape& dims, bool keepdim) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return sum((*cast)[0], dims, keepdim);
    }
    const Shape wrapped = reduction_dims(a, dims, "sum");
    if (wrapped.empty() || a.dim() == 0) {  // as PyTorch: an empty list reduces every dimension
        const Tensor out = sum(a);
        return keepdim ? out.reshape(Shape(a.shape().size(), 1)) : out;
    }
    const autograd::Recording recording({a});
    std::vector<bool> reduced(a.shape().size(), false);
    for (const std::int64_t d : wrapped) {
        reduced[static_cast<std::size_t>(d)] = true;
    }
    Tensor out = detail::reduce_over(KAEL_REDUCE_SUM, a, reduced);
    if (keepdim) {
        for (auto d = wrapped.rbegin(); d != wrapped.rend(); ++d) {
            out = out.unsqueeze(*d);
        }
    }
    return recording.finish(out, "SumBackward", autograd::sum_dims_backward(a, wrapped, keepdim));
}

Tensor mean(const Tensor& a, const Shape& dims, bool keepdim) {
    if (!is_floating(a.dtype())) {
        throw TypeError("mean: expected a floating dtype, got " + to_string(a.dtype()));
    }
    const Shape wrapped = reduction_dims(a, dims, "mean");
    if (wrapped.empty() || a.dim() == 0) {  // as PyTorch: an empty list reduces every dimension
        const Tensor out = mean(a);
        return keepdim ? out.reshape(Shape(a.shape().size(), 1)) : out;
    }
    const autograd::Recording recording({a});
    std::vector<bool> reduced(a.shape().size(), false);
    std::int64_t count = 1;
    for (const std::int64_t d : wrapped) {
        reduced[static_cast<std::size_t>(d)] = true;
        count *= a.shape()[static_cast<std::size_t>(d)];
    }
    Tensor out = detail::reduce_over(KAEL_REDUCE_SUM, a, reduced, scale_by_count(count));
    if (keepdim) {
        for (auto d = wrapped.rbegin(); d != wrapped.rend(); ++d) {
            out = out.unsqueeze(*d);
        }
    }
    return recording.finish(out, "MeanBackward",
                            mean_backward(autograd::sum_dims_backward(a, wrapped, keepdim), count));
}

Tensor prod(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return prod((*cast)[0], dim, keepdim);
    }
    const autograd::Recording recording({a});
    const Tensor out = reduce(KAEL_REDUCE_PROD, "prod", a, dim, keepdim);
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "ProdBackward", autograd::prod_backward(a, out, dim, keepdim));
}
Tensor max(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    const autograd::Recording recording({a});
    const Tensor out = reduce(KAEL_REDUCE_MAX, "max", a, dim, keepdim);
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "MaxBackward",
                            autograd::extremum_backward(a, out, dim, keepdim, true));
}
Tensor min(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    const autograd::Recording recording({a});
    const Tensor out = reduce(KAEL_REDUCE_MIN, "min", a, dim, keepdim);
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "MinBackward",
                            autograd::extremum_backward(a, out, dim, keepdim, false));
}
Tensor argmax(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    return reduce(KAEL_REDUCE_ARGMAX, "argmax", a, dim, keepdim);
}
Tensor argmin(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
    return reduce(KAEL_REDUCE_ARGMIN, "argmin", a, dim, keepdim);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
    if (a.dtype() != b.dtype()) {
        throw TypeError("allclose: dtypes " + to_string(a.dtype()) + " and " +
                        to_string(b.dtype()) + " differ; convert one first");
    }
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), "allclose");
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        return true;
    }
    const Tensor x = a.to(DType::F64);
    const Tensor y = b.to(DType::F64);
    // Equal infinities are close although their difference is NaN.
    Tensor close = logical_or(le(abs(x - y), abs(y) * rtol + atol), eq(x, y));
    if (equal_nan) {
        close = logical_or(close, logical_and(ne(x, x), ne(y, y)));
    }
    return min(close).item<bool>();
}

}  // namespace kael
