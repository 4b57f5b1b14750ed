// Neural-network functions: softmax, log_softmax and cross_entropy through their fused kernels,
// linear with a bias as one matmul_bias call (a GEMM with the bias in it), the rest composed
// from existing ops.
#include <memory>
#include <string>

#include "autograd/record.h"
#include "dims.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kernel_calls.h"
#include "ops_index_internal.h"

namespace kael {

namespace {

using detail::line_sizes;
using detail::LineSizes;

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

// One fused kernel along dim over a contiguous copy; the node saves the output.
Tensor softmax_along(const Tensor& a, std::int64_t dim, bool log) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return softmax_along((*cast)[0], dim, log);
    }
    const char* name = log ? "log_softmax" : "softmax";
    dim = detail::wrapped_dim(a, dim, name);
    const Tensor x = as_floating(a);
    if (x.numel() == 0) {
        return empty(x.shape(), x.dtype(), x.device());
    }
    const autograd::Recording recording({x});
    const Tensor input = x.contiguous();
    const LineSizes sizes = line_sizes(input.shape(), dim);
    Tensor out = empty(input.shape(), input.dtype(), input.device());
    detail::softmax(out, input, sizes.outer, sizes.size, sizes.inner, log);
    if (!recording.active()) {
        return out;
    }
    return recording.finish(
        out, log ? "LogSoftmaxBackward" : "SoftmaxBackward",
        autograd::softmax_backward(out, sizes.outer, sizes.size, sizes.inner, log));
}

// x [rows, in] times weight [out, in] transposed, plus bias [out], as one matmul_bias call.
// Operands stay as they are stored when the kernel can read them (a transposed view is a flag).
// A matrix as stored when the kernel can read it: transposed says it is a transposed view.
Tensor stored_matrix(const Tensor& matrix, bool& transposed) {
    transposed = !matrix.is_contiguous() && matrix.T().is_contiguous();
    return transposed || matrix.is_contiguous() ? matrix : matrix.contiguous();
}

Tensor fused_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    const autograd::Recording recording({x, weight, bias});
    bool a_transposed = false;
    bool weight_transposed = false;  // weight is a transposed view of an [in, out] matrix
    const Tensor a = stored_matrix(x, a_transposed);
    const Tensor w = stored_matrix(weight, weight_transposed);
    Tensor out = empty({x.size(0), weight.size(0)}, x.dtype(), x.device());
    const kael_matmul_sizes sizes =
        detail::linear_sizes(x.size(0), x.size(1), weight.size(0), a_transposed, weight_transposed);
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

Tensor softmax(const Tensor& a, std::int64_t dim) { return softmax_along(a, dim, false); }

Tensor log_softmax(const Tensor& a, std::int64_t dim) { return softmax_along(a, dim, true); }

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction) {
    // Autocast runs cross_entropy in f32. bf16/f16 logits are not copied to f32 for it: the kernel
    // reads them and computes in f32 (the same values, the widening being exact), and the loss is
    // f32. Outside autocast their loss is rounded to their dtype, as PyTorch's is.
    const bool low = is_low_precision(logits.dtype());
    const bool f32_result = low && autocast::applies(logits);
    if (!f32_result) {
        if (const auto cast = autocast::full({logits, targets})) {
            const autocast::Applied applied;
            return cross_entropy((*cast)[0], (*cast)[1], reduction);
        }
    }
    const std::unique_ptr<autocast::Applied> applied =
        f32_result ? std::make_unique<autocast::Applied>() : nullptr;
    require_floating(logits, "cross_entropy", "logits");
    require_i64(targets, "cross_entropy", "targets");
    if (logits.dim() != 2 || targets.dim() != 1 || targets.size(0) != logits.size(0)) {
        throw ValueError("cross_entropy: expected logits [N, C] and targets [N], got logits " +
                         to_string(logits.shape()) + " and targets " + to_string(targets.shape()));
    }
    detail::check_same_device({logits, targets}, "cross_entropy");
    detail::check_index_range(targets, logits.size(1), 1, false, "cross_entropy", "target");
    const autograd::Recording recording({logits});
    const Tensor x = logits.contiguous();
    const Tensor t = targets.contiguous();
    const Tensor losses = empty({x.size(0)}, detail::stats_dtype(x.dtype()), x.device());
    const Tensor lse = empty({x.size(0)}, detail::stats_dtype(x.dtype()), x.device());
    detail::cross_entropy(losses, lse, x, t);
    Tensor out = losses;
    if (reduction == Reduction::Sum) {
        out = sum(losses);
    } else if (reduction == Reduction::Mean) {
        out = mean(losses);
    }
    out = low && !f32_result ? out.to(x.dtype()) : out;
    if (!recording.active()) {
        return out;
    }
    // logits as given (x may be a copy made without grad): a composed backward under
    // create_graph must reach them.
    return recording.finish(out, "CrossEntropyBackward",
                            autograd::cross_entropy_backward(logits, lse, t, reduction));
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
    if (const auto cast = autocast::lower({x, weight, bias})) {
        const autocast::Applied applied;
        return linear((*cast)[0], (*cast)[1], (*cast)[2]);
    }
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

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation activation,
              const Tensor& residual) {
    if (const auto cast = autocast::lower({x, weight, bias, residual})) {
        const autocast::Applied applied;
        return linear((*cast)[0], (*cast)[1], (*cast)[2], activation, (*cast)[3]);
    }
    const auto needs_grad = [](const Tensor& t) { return t.defined() && t.requires_grad(); };
    const bool recording = is_grad_enabled() && (needs_grad(x) || needs_grad(weight) ||
                                                 needs_grad(bias) || needs_grad(residual));
    const bool fusable =
        !recording && weight.dim() == 2 && x.dim() >= 2 && x.size(-1) == weight.size(1) &&
        x.dtype() == weight.dtype() && is_floating(x.dtype()) && x.numel() > 0 &&
        (!bias.defined() || (bias.dtype() == x.dtype() && bias.shape() == Shape{weight.size(0)})) &&
        (!residual.defined() || residual.dtype() == x.dtype());
    Shape out_shape = x.shape();
    if (x.dim() >= 1 && weight.dim() == 2) {
        out_shape.back() = weight.size(0);
    }
    if (!fusable || (residual.defined() && residual.shape() != out_shape)) {
        Tensor y = linear(x, weight, bias);  // its checks, dtype rules and gradients
        y = activation == Activation::GeluTanh ? gelu(y, true) : y;
        return residual.defined() ? y + residual : y;
    }
    detail::check_same_device({x, weight}, "linear");
    for (const Tensor* optional : {&bias, &residual}) {
        if (optional->defined()) {
            detail::check_same_device({x, *optional}, "linear");
        }
    }
    const std::int64_t rows = x.numel() / x.size(-1);
    bool a_transposed = false;
    bool weight_transposed = false;
    const Tensor a = stored_matrix(x.reshape({rows, x.size(-1)}), a_transposed);
    const Tensor w = stored_matrix(weight, weight_transposed);
    Tensor out = empty({rows, weight.size(0)}, x.dtype(), x.device());
    const kael_matmul_sizes sizes =
        detail::linear_sizes(rows, x.size(-1), weight.size(0), a_transposed, weight_transposed);
    detail::matmul_epilogue(
        out, a, w, bias.defined() ? bias.contiguous() : Tensor(),
        residual.defined() ? residual.reshape({rows, weight.size(0)}).contiguous() : Tensor(),
        sizes,
        activation == Activation::GeluTanh ? KAEL_ACTIVATION_GELU_TANH : KAEL_ACTIVATION_NONE);
    return out.reshape(out_shape);
}

}  // namespace kael
