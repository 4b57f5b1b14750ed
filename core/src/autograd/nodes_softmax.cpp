// Backward formulas of the fused softmax family: one softmax_backward or cross_entropy_backward
// kernel each, from the saved forward outputs (PyTorch saves the same ones). Under create_graph
// (grad mode on in the backward) they are composed from differentiable ops instead, so the
// gradient can be differentiated again.
#include "../kernel_calls.h"
#include "kael/ops.h"
#include "record.h"

namespace kael::autograd {

BackwardFunction softmax_backward(const Tensor& out, std::int64_t outer, std::int64_t size,
                                  std::int64_t inner, bool log) {
    return [out_saved = saved_output(out), outer, size, inner, log](const Tensor& g) {
        const Tensor out = out_saved.unpack();
        if (is_grad_enabled()) {
            // softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g), over the softmax dim
            const Tensor y = out.reshape({outer, size, inner});
            const Tensor grad = g.to(out.dtype()).reshape({outer, size, inner});
            const Tensor grad_in = log ? grad - exp(y) * sum(grad, Shape{1}, true)
                                       : y * (grad - sum(grad * y, Shape{1}, true));
            return std::vector<Tensor>{grad_in.reshape(out.shape())};
        }
        const Tensor grad_out = g.to(out.dtype()).contiguous();
        Tensor grad_in = empty(out.shape(), out.dtype(), out.device());
        detail::softmax_backward(grad_in, grad_out, out, outer, size, inner, log);
        return std::vector<Tensor>{grad_in};
    };
}

namespace {

// (softmax(logits) - one_hot(targets)) times each row's loss gradient, from differentiable ops.
Tensor composed_cross_entropy_gradient(const Tensor& logits, const Tensor& targets,
                                       const Tensor& grad_losses) {
    const DType dtype = detail::stats_dtype(logits.dtype());
    const Tensor x = logits.to(dtype);
    const Tensor classes = arange_int(0, x.size(1), 1, DType::I64, x.device()).reshape({1, -1});
    const Tensor one_hot = eq(classes, targets.reshape({-1, 1})).to(dtype);
    return ((softmax(x, 1) - one_hot) * grad_losses.to(dtype).reshape({-1, 1})).to(logits.dtype());
}

}  // namespace

BackwardFunction cross_entropy_backward(const Tensor& logits, const Tensor& lse,
                                        const Tensor& targets, Reduction reduction) {
    return [logits_saved = saved(logits), lse_saved = saved(lse), targets_saved = saved(targets),
            reduction](const Tensor& g) {
        const Tensor logits = logits_saved.unpack();
        // f32 for bf16/f16 logits, whose losses and lse are f32 (kernel_calls.h: stats_dtype).
        Tensor grad_losses = g.to(detail::stats_dtype(logits.dtype()));
        if (reduction == Reduction::Mean) {
            grad_losses = grad_losses / static_cast<double>(logits.size(0));
        }
        if (is_grad_enabled()) {
            return std::vector<Tensor>{
                composed_cross_entropy_gradient(logits, targets_saved.unpack(), grad_losses)};
        }
        // Sum and mean share one value among the rows: a one-element tensor, grad_stride 0.
        grad_losses = reduction == Reduction::None ? grad_losses.contiguous()
                                                   : grad_losses.reshape({1}).contiguous();
        const Tensor x = logits.contiguous();
        Tensor grad_logits = empty(x.shape(), x.dtype(), x.device());
        detail::cross_entropy_backward(grad_logits, grad_losses, x, lse_saved.unpack(),
                                       targets_saved.unpack());
        return std::vector<Tensor>{grad_logits};
    };
}

}  // namespace kael::autograd
