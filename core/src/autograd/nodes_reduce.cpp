// Backward formulas of reductions, matmul, gather and scatter_add_.
#include "kael/ops.h"
#include "../ops_index_internal.h"
#include "record.h"

namespace kael::autograd {

namespace {

using Grads = std::vector<Tensor>;

std::optional<std::int64_t> normalized(std::optional<std::int64_t> dim, std::int64_t rank) {
    if (!dim || rank == 0) {
        return std::nullopt;  // a 0-d tensor reduced along a dimension is a full reduction
    }
    return *dim < 0 ? *dim + rank : *dim;
}

// A reduced tensor with its reduced dimension back (size 1), so it broadcasts over the input.
Tensor with_reduced_dim(const Tensor& reduced, std::optional<std::int64_t> dim, bool keepdim) {
    return dim && !keepdim ? reduced.unsqueeze(*dim) : reduced;
}

}  // namespace

BackwardFunction sum_backward(const Tensor& input, std::optional<std::int64_t> dim,
                              bool keepdim) {
    dim = normalized(dim, input.dim());
    return [shape = input.shape(), dim, keepdim](const Tensor& g) {
        return Grads{with_reduced_dim(g, dim, keepdim).expand(shape)};
    };
}

BackwardFunction sum_dims_backward(const Tensor& input, const Shape& dims, bool keepdim) {
    return [shape = input.shape(), dims, keepdim](const Tensor& g) {
        Tensor grad = g;
        for (auto d = dims.rbegin(); !keepdim && d != dims.rend(); ++d) {
            grad = grad.unsqueeze(*d);
        }
        return Grads{grad.expand(shape)};
    };
}

BackwardFunction prod_backward(const Tensor& input, const Tensor& out,
                               std::optional<std::int64_t> dim, bool keepdim) {
    dim = normalized(dim, input.dim());
    return [a_saved = saved(input), y_saved = saved_output(out), dim, keepdim](const Tensor& g) {
        const Tensor a = a_saved.unpack();
        const Tensor y = y_saved.unpack();
        // d prod / d a_i is the product of the others: y / a_i without zeros; with exactly one
        // zero, the product of the non-zeros at the zero's position; with more, 0.
        const Tensor zero = zero_scalar(a);
        const Tensor is_zero = eq(a, zero);
        const Tensor nonzero = where(is_zero, full({}, 1, a.dtype(), a.device()), a);
        const Tensor zero_count = dim ? sum(is_zero, *dim, true) : sum(is_zero);
        const Tensor nonzero_product = dim ? prod(nonzero, *dim, true) : prod(nonzero);
        const Tensor one_zero = logical_and(eq(zero_count, full_int({}, 1, DType::I64,
                                                                     a.device())),
                                            is_zero);
        const Tensor others = where(eq(zero_count, zeros({}, DType::I64, a.device())),
                                    with_reduced_dim(y, dim, keepdim) / a,
                                    where(one_zero, nonzero_product, zero));
        return Grads{with_reduced_dim(g, dim, keepdim) * others};
    };
}

BackwardFunction variance_backward(const Tensor& input, const Tensor& std,
                                   std::optional<std::int64_t> dim, bool keepdim, double divisor) {
    dim = normalized(dim, input.dim());
    // std is the output (StdBackward): connected to this node under create_graph.
    return [a_saved = saved(input), std_saved = std.defined() ? saved_output(std) : SavedTensor(),
            dim, keepdim,
            divisor](const Tensor& g) {
        const Tensor a = a_saved.unpack();
        const Tensor centered = a - (dim ? mean(a, *dim, true) : mean(a));
        if (!std_saved.defined()) {
            return Grads{with_reduced_dim(g, dim, keepdim) * centered * (2.0 / divisor)};
        }
        const Tensor root = with_reduced_dim(std_saved.unpack(), dim, keepdim);
        // As PyTorch: no deviation (a constant row) has gradient 0, not 0 / 0.
        const Tensor scaled = where(eq(root, zero_scalar(root)), zero_scalar(root),
                                    with_reduced_dim(g, dim, keepdim) / root);
        return Grads{scaled * centered / divisor};
    };
}

BackwardFunction logsumexp_backward(const Tensor& input, const Tensor& out,
                                    const Shape& kept_shape) {
    return [a_saved = saved(input), y_saved = saved_output(out), kept_shape](const Tensor& g) {
        const Tensor a = a_saved.unpack();
        return Grads{g.reshape(kept_shape) * exp(a - y_saved.unpack().reshape(kept_shape))};
    };
}

BackwardFunction extremum_backward(const Tensor& input, const Tensor& out,
                                   std::optional<std::int64_t> dim, bool keepdim, bool is_max) {
    dim = normalized(dim, input.dim());
    if (dim) {
        return [a_saved = saved(input), dim, keepdim, is_max](const Tensor& g) {
            const Tensor a = a_saved.unpack();
            const Tensor index = is_max ? argmax(a, *dim, true) : argmin(a, *dim, true);
            Tensor grad = zeros(a.shape(), g.dtype(), g.device());
            scatter_add_(grad, *dim, index, with_reduced_dim(g, dim, keepdim));
            return Grads{grad};
        };
    }
    return [a = saved(input), y = saved(out)](const Tensor& g) {
        const Tensor chosen = eq(a.unpack(), y.unpack());
        return Grads{where(chosen, g / sum(chosen), zero_scalar(g))};
    };
}

BackwardFunction matmul_backward(const Tensor& a_in, const Tensor& b_in) {
    // Each operand is saved only for the other's gradient, as PyTorch does.
    const bool grad_a = a_in.requires_grad();
    const bool grad_b = b_in.requires_grad();
    return [a_saved = saved_if(grad_b, a_in), b_saved = saved_if(grad_a, b_in),
            a_vector = a_in.dim() == 1, b_vector = b_in.dim() == 1, b_matrix = b_in.dim() == 2,
            b_transposed = b_in.dim() == 2 && b_in.strides()[0] == 1 && b_in.size(0) > 1 &&
                           b_in.strides()[1] == b_in.size(0),
            grad_a,
            grad_b](const Tensor& g_in) {
        // 1-d operands are treated as matrices, as the forward did; the engine sums the
        // gradients over broadcast batch dimensions.
        const Tensor a_in = a_saved.unpack();
        const Tensor b_in = b_saved.unpack();
        const Tensor a = a_vector && grad_b ? a_in.unsqueeze(0) : a_in;
        const Tensor b = b_vector && grad_a ? b_in.unsqueeze(1) : b_in;
        Tensor g = a_vector ? g_in.unsqueeze(-2 + (b_vector ? 1 : 0)) : g_in;
        if (b_vector) {
            g = g.unsqueeze(-1);
        }
        Tensor grad_a_out;
        Tensor grad_b_out;
        if (grad_a) {
            grad_a_out = matmul(g, b.transpose(-2, -1));
            grad_a_out = a_vector ? grad_a_out.squeeze(-2) : grad_a_out;
        }
        if (grad_b && b_matrix && a.dim() >= 2) {
            // One matrix b for every batch: sum_i a_i^T g_i is one product over the batch rows,
            // not a batched product and then a sum over its [batch, K, N] result.
            const std::int64_t inner = a.size(-1);
            const Tensor rows_a = a.reshape({-1, inner});
            const Tensor rows_g = g.reshape({-1, g.size(-1)});
            // For a transposed b (x @ W.T), g^T a lands in W's own layout: its gradient then
            // needs no transposing copy.
            grad_b_out = b_transposed ? matmul(rows_g.transpose(0, 1), rows_a).transpose(0, 1)
                                      : matmul(rows_a.transpose(0, 1), rows_g);
        } else if (grad_b) {
            grad_b_out = matmul(a.transpose(-2, -1), g);
            grad_b_out = b_vector ? grad_b_out.squeeze(-1) : grad_b_out;
        }
        return Grads{grad_a_out, grad_b_out};
    };
}

BackwardFunction gather_backward(const Tensor& data, std::int64_t axis, const Tensor& index) {
    return [shape = data.shape(), axis, index = saved(index)](const Tensor& g) {
        // The forward checked the index: one scatter_add kernel, no second check.
        Tensor grad = zeros(shape, g.dtype(), g.device());
        detail::scatter_add_unchecked(grad, axis, index.unpack(), g);
        return Grads{grad, Tensor()};
    };
}

BackwardFunction scatter_add_backward(const Tensor& source, std::int64_t axis,
                                      const Tensor& index) {
    return [source_shape = source.shape(), axis, index_saved = saved(index)](const Tensor& g) {
        const Tensor index = index_saved.unpack();
        Tensor grad_source = detail::gather_unchecked(g, axis, index);
        if (grad_source.shape() != source_shape) {
            // Source elements beyond the index's extent are never read.
            Tensor padded = zeros(source_shape, g.dtype(), g.device());
            Tensor region = padded;
            for (std::int64_t d = 0; d < index.dim(); ++d) {
                region = region.slice(d, 0, index.shape()[d]);
            }
            region.copy_(grad_source);
            grad_source = padded;
        }
        return Grads{g, Tensor(), grad_source};
    };
}

}  // namespace kael::autograd
