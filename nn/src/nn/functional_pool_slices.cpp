// Max and average pooling one kernel offset at a time: each offset's inputs are a strided view
// [N, C, *O] of the padded input, so a 2x2 max pool is four elementwise passes over the output
// instead of a copy of every window and a reduction over a dim of 4 (4x faster on the cpu).
// The backward adds each output's gradient back where it came from; in grad mode
// (create_graph) it differentiates the composed form instead, which records.
#include <algorithm>
#include <limits>
#include <vector>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/nn_functional.h"
#include "nn_internal.h"

namespace kael::nn::detail {

namespace {

bool any_padding(const PoolGeometry& g) {
    for (const std::int64_t p : g.regular_pairs) {
        if (p != 0) {
            return true;
        }
    }
    for (const std::int64_t p : g.extra_pairs) {
        if (p != 0) {
            return true;
        }
    }
    return false;
}

Tensor padded(const Tensor& x, const PoolGeometry& g, double fill, double extra_fill) {
    if (!any_padding(g)) {
        return x;
    }
    return functional::pad(functional::pad(x, g.regular_pairs, fill), g.extra_pairs, extra_fill);
}

// Every window of p [A, B, *P] with the kernel's dims first: a strided view [*K, A, B, *O],
// so that copied once it holds each kernel offset's inputs as one contiguous [A, B, *O] (the
// elementwise passes over strided views ran 10x slower than over contiguous ones).
Tensor kernel_first(const Tensor& p, const PoolGeometry& g) {
    const auto d = g.kernel.size();
    Shape shape;
    Shape strides;
    for (std::size_t i = 0; i < d; ++i) {
        shape.push_back(g.kernel[i]);
        strides.push_back(p.strides()[i + 2] * g.dilation[i]);
    }
    shape.insert(shape.end(), {p.size(0), p.size(1)});
    strides.insert(strides.end(), {p.strides()[0], p.strides()[1]});
    for (std::size_t i = 0; i < d; ++i) {
        shape.push_back(g.out[i]);
        strides.push_back(p.strides()[i + 2] * g.stride[i]);
    }
    return p.as_strided(shape, strides, p.offset());
}

// Whether the windows tile the input exactly once (stride == kernel, no dilation or padding).
bool tiling(const PoolGeometry& g) {
    for (std::size_t i = 0; i < g.kernel.size(); ++i) {
        if (g.stride[i] != g.kernel[i] || g.dilation[i] != 1) {
            return false;
        }
    }
    return !any_padding(g);
}

std::int64_t offsets(const PoolGeometry& g) {
    std::int64_t count = 1;
    for (const std::int64_t k : g.kernel) {
        count *= k;
    }
    return count;
}

// Every element of plane x's [N, C] planes flat, for scatter_add_ along dim 1.
Shape planes(const Tensor& x) {
    return {x.size(0) * x.size(1), -1};
}

std::vector<Tensor> recomputed(const Recompute& composed, const Tensor& x, const Tensor& grad) {
    const Tensor input = x;
    return autograd::grad({composed(input)}, {grad}, {input}, true, true, true);
}

}  // namespace

std::pair<Tensor, Tensor> sliced_max_pool(const Tensor& x, const PoolGeometry& g,
                                          const Recompute& composed) {
    Tensor values;
    Tensor where;  // flat position in the input plane, -1 in the padding
    {
        const NoGradGuard no_grad;
        const double lowest = -std::numeric_limits<double>::infinity();
        const Tensor source = padded(x.detach(), g, lowest, lowest);
        Shape plane{1, 1};
        std::int64_t cells = 1;
        for (std::size_t i = 0; i < g.kernel.size(); ++i) {
            plane.push_back(x.size(static_cast<std::int64_t>(i) + 2));
            cells *= plane.back();
        }
        const Tensor positions =
            padded(arange_int(0, cells, 1, DType::I64, x.device()).reshape(plane), g, -1, -1);
        const std::int64_t count = offsets(g);
        const Tensor inputs = kernel_first(source, g).contiguous().reshape([&] {
            Shape s{count};
            s.insert(s.end(), {x.size(0), x.size(1)});
            s.insert(s.end(), g.out.begin(), g.out.end());
            return s;
        }());
        const Tensor places = kernel_first(positions, g).contiguous().reshape([&] {
            Shape s{count, 1, 1};
            s.insert(s.end(), g.out.begin(), g.out.end());
            return s;
        }());
        const Tensor zero = zeros({}, DType::I64, x.device());
        const bool padding = any_padding(g);
        values = inputs.select(0, 0).clone();
        where = places.select(0, 0).expand(values.shape()).contiguous();
        for (std::int64_t k = 1; k < count; ++k) {
            const Tensor candidate = inputs.select(0, k);
            const Tensor place = places.select(0, k);
            // The first maximum wins and NaN beats anything (PyTorch's rule); with padding, a
            // real input beats the padding when every value is -inf.
            Tensor take = logical_or(gt(candidate, values), isnan(candidate));
            if (padding) {
                take = logical_or(take, logical_and(lt(where, zero), ge(place, zero)));
            }
            values = kael::where(take, candidate, values);
            where = kael::where(take, place, where);
        }
    }
    const Tensor indices = where;
    const Shape input_shape = x.shape();
    autograd::record_function(
        {values}, {x}, "MaxPoolBackward", [=](const std::vector<Tensor>& grads) {
            const Tensor& grad = grads[0];
            if (!grad.defined()) {
                return std::vector<Tensor>{Tensor()};
            }
            if (is_grad_enabled()) {
                return recomputed(composed, x, grad);
            }
            Tensor result =
                zeros({input_shape[0] * input_shape[1],
                       x.numel() / std::max<std::int64_t>(input_shape[0] * input_shape[1], 1)},
                      grad.dtype(), grad.device());
            if (result.numel() > 0) {
                scatter_add_(result, 1, indices.reshape(planes(indices)),
                             grad.reshape(planes(grad)));
            }
            return std::vector<Tensor>{result.reshape(input_shape)};
        });
    return {values, indices};
}

Tensor sliced_avg_pool(const Tensor& x, const PoolGeometry& g, const Tensor& divisor,
                       const Recompute& composed) {
    Tensor result;
    {
        const NoGradGuard no_grad;
        const Tensor source = padded(x.detach(), g, 0.0, 0.0);
        const Tensor inputs = kernel_first(source, g).contiguous();
        Shape flat{offsets(g), -1};
        result = sum(inputs.reshape(flat), 0).reshape([&] {
            Shape s{x.size(0), x.size(1)};
            s.insert(s.end(), g.out.begin(), g.out.end());
            return s;
        }());
        result = result / divisor;
    }
    const Shape input_shape = x.shape();
    autograd::record_function(
        {result}, {x}, "AvgPoolBackward", [=](const std::vector<Tensor>& grads) {
            const Tensor& grad = grads[0];
            if (!grad.defined()) {
                return std::vector<Tensor>{Tensor()};
            }
            if (is_grad_enabled()) {
                return recomputed(composed, x, grad);
            }
            const Tensor share = grad / divisor;
            Tensor whole = padded(zeros(input_shape, grad.dtype(), grad.device()), g, 0.0, 0.0);
            Tensor windows = kernel_first(whole, g);
            const Shape spread = windows.shape();
            if (tiling(g)) {  // each input cell in one window: one strided copy
                windows.copy_(share.expand(spread));
            } else {
                const Tensor part = share.contiguous();
                for (std::int64_t k = 0; k < offsets(g); ++k) {
                    Tensor target = windows;  // offset k: its kernel dims selected, last first
                    for (std::size_t i = g.kernel.size(), rest = static_cast<std::size_t>(k);
                         i-- > 0; rest /= static_cast<std::size_t>(g.kernel[i])) {
                        target = target.select(static_cast<std::int64_t>(i),
                                               static_cast<std::int64_t>(
                                                   rest % static_cast<std::size_t>(g.kernel[i])));
                    }
                    add_(target, part);
                }
            }
            // The input's part of the padded gradient.
            Tensor part = whole;
            for (std::size_t i = 0; i < g.kernel.size(); ++i) {
                const auto dim = static_cast<std::int64_t>(i) + 2;
                part = narrow(part, dim, g.padding[i], input_shape[i + 2]);
            }
            return std::vector<Tensor>{part.contiguous()};
        });
    return result;
}

}  // namespace kael::nn::detail
