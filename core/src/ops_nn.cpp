// Neural-network functions composed from existing ops, so they run on every device; linear with
// a bias is one matmul_bias call (a GEMM with the bias in it).
#include <string>

#include "autograd/record.h"
#include "dims.h"
#include "kael/ops_more.h"
#include "kernel_calls.h"
#include "ops_index_internal.h"

namespace kael {

namespace {

Tensor as_floating(const Tensor& a) { return is_floating(a.dtype()) ? a : a.to(DType::F32); }

void require_floating(const Tensor& a, const char* op, const char* what) {
    if (!is_floating(a.dtype())) {
        throw TypeError(std::string(op) + ": expected " + what + " of a floating dtype, got " +
                        to_string(a.dtype()));
    }
}

void require_i64(const Tensor& a, const char* op, const char* what) {
    if (a.dtype() != DType::I64) {
        throw TypeError(std::string(op) + ": expected " + what + " of dtype i64, got " +
                        to_string(a.dtype()));
    }
}

// x shifted so the largest element along dim is 0.
Tensor shifted_by_max(const Tensor& x, std::int64_t dim) { return x - max(x, dim, true); }

// x [rows, in] times weight [out, in] transposed, plus bias [out], as one matmul_bias call.
// Operands stay as they are stored when the kernel can read them (a transposed view is a flag).
Tensor fused_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    const autograd::Recording recording({x, weight, bias});
    const auto stored = [](const Tensor& matrix, bool& transposed) {
        transposed = !matrix.is_contiguous() && matrix.T().is_contiguous();
        return transposed || matrix.is_contiguous() ? matrix : matrix.contiguous();
    };
    bool a_transposed = false;
    bool weight_transposed = false;  // weight is a transposed view of an [in, out] matrix
    const Tensor a = stored(x, a_transposed);
    const Tensor w = stored(weight, weight_transposed);
    Tensor out = empty({x.size(0), weight.size(0)}, x.dtype(), x.device());
    kael_matmul_sizes sizes{};
    sizes.struct_size = sizeof(sizes);
    sizes.batches = 1;
    sizes.rows = x.size(0);
    sizes.inner = x.size(1);
    sizes.columns = weight.size(0);
    sizes.a_transposed = a_transposed ? 1 : 0;
    sizes.b_transposed = weight_transposed ? 0 : 1;
    detail::matmul_bias(out, a, w, bias.contiguous(), sizes);
    if (!recording.active()) {
        return out;
    }
    const bool grad_x = x.requires_grad();
    const bool grad_weight = weight.requires_grad();
    return recording.finish(
        out, "LinearBackward",
        [x_saved = autograd::saved_if(grad_weight, x),
         weight_saved = autograd::saved_if(grad_x, weight), grad_x, grad_weight,
         grad_bias = bias.requires_grad()](const Tensor& g) {
            // grad of bias: the sum of the output gradient over rows.
            return std::vector<Tensor>{grad_x ? matmul(g, weight_saved.unpack()) : Tensor(),
                                       grad_weight ? matmul(g.T(), x_saved.unpack()) : Tensor(),
                                       grad_bias ? sum(g, 0) : Tensor()};
        });
}

}  // namespace

Tensor softmax(const Tensor& a, std::int64_t dim) {
    dim = detail::wrapped_dim(a, dim, "softmax");
    const Tensor x = as_floating(a);
    if (x.numel() == 0) {
        return empty(x.shape(), x.dtype(), x.device());
    }
    const Tensor exponentials = exp(shifted_by_max(x, dim));
    return exponentials / sum(exponentials, dim, true);
}

Tensor log_softmax(const Tensor& a, std::int64_t dim) {
    dim = detail::wrapped_dim(a, dim, "log_softmax");
    const Tensor x = as_floating(a);
    if (x.numel() == 0) {
        return empty(x.shape(), x.dtype(), x.device());
    }
    const Tensor shifted = shifted_by_max(x, dim);
    return shifted - log(sum(exp(shifted), dim, true));
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction) {
    require_floating(logits, "cross_entropy", "logits");
    require_i64(targets, "cross_entropy", "targets");
    if (logits.dim() != 2 || targets.dim() != 1 || targets.size(0) != logits.size(0)) {
        throw ValueError("cross_entropy: expected logits [N, C] and targets [N], got logits " +
                         to_string(logits.shape()) + " and targets " + to_string(targets.shape()));
    }
    detail::check_same_device({logits, targets}, "cross_entropy");
    detail::check_index_range(targets, logits.size(1), 1, false, "cross_entropy", "target");
    const Tensor picked =
        detail::gather_unchecked(log_softmax(logits, 1), 1, targets.unsqueeze(1)).squeeze(1);
    switch (reduction) {
        case Reduction::None: return -picked;
        case Reduction::Sum: return -sum(picked);
        case Reduction::Mean: break;
    }
    return -mean(picked);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
    require_i64(indices, "embedding", "indices");
    if (weight.dim() != 2) {
        throw ValueError("embedding: expected weight of shape [V, D], got " +
                         to_string(weight.shape()));
    }
    Shape out_shape = indices.shape();
    out_shape.push_back(weight.size(1));
    return detail::index_select_named(weight, 0, indices.flatten(), "embedding").reshape(out_shape);
}

Tensor dropout(const Tensor& x, double p, bool training) {
    if (!(p >= 0.0 && p < 1.0)) {
        throw ValueError("dropout: probability " + std::to_string(p) + " is outside [0, 1)");
    }
    if (p == 0.0 || !training) {
        return x;
    }
    require_floating(x, "dropout", "input");
    const Tensor keep = bernoulli_mask(x.shape(), 1.0 - p, x.device());
    return x * keep * (1.0 / (1.0 - p));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    if (weight.dim() != 2) {
        throw ValueError("linear: expected weight of shape [out, in], got " +
                         to_string(weight.shape()));
    }
    if (bias.defined() && bias.shape() != Shape{weight.size(0)}) {
        throw ValueError("linear: expected bias of shape " + to_string(Shape{weight.size(0)}) +
                         " for weight " + to_string(weight.shape()) + ", got " +
                         to_string(bias.shape()));
    }
    detail::check_same_device(bias.defined() ? std::vector<Tensor>{x, weight, bias}
                                             : std::vector<Tensor>{x, weight},
                              "linear");
    const bool fusable = bias.defined() && x.dim() >= 2 && x.size(-1) == weight.size(1) &&
                         x.dtype() == weight.dtype() && bias.dtype() == weight.dtype() &&
                         x.dtype() != DType::Bool;
    if (!fusable) {  // the composed form, with matmul's errors and dtype promotion
        const Tensor product = matmul(x, weight.T());
        return bias.defined() ? product + bias : product;
    }
    // Batched inputs are one GEMM over their rows.
    Shape out_shape = x.shape();
    out_shape.back() = weight.size(0);
    std::int64_t rows = 1;
    for (std::int64_t d = 0; d + 1 < x.dim(); ++d) {
        rows *= x.size(d);
    }
    return fused_linear(x.reshape({rows, x.size(-1)}), weight, bias).reshape(out_shape);
}

}  // namespace kael
