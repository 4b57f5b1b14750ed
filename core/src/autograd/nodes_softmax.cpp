// Backward formulas of the fused softmax family: one softmax_backward or cross_entropy_backward
// kernel each, from the saved forward outputs (PyTorch saves the same ones).
#include "../kernel_calls.h"
#include "kael/ops.h"
#include "record.h"

namespace kael::autograd {

BackwardFunction softmax_backward(const Tensor& out, std::int64_t outer, std::int64_t size,
                                  std::int64_t inner, bool log) {
    return [out_saved = saved(out), outer, size, inner, log](const Tensor& g) {
        const Tensor out = out_saved.unpack();
        const Tensor grad_out = g.to(out.dtype()).contiguous();
        Tensor grad_in = empty(out.shape(), out.dtype(), out.device());
        detail::softmax_backward(grad_in, grad_out, out, outer, size, inner, log);
        return std::vector<Tensor>{grad_in};
    };
}

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
        // Sum and mean share one value among the rows: a one-element tensor, grad_stride 0.
        grad_losses = reduction == Reduction::None ? grad_losses.contiguous()
                                                   : grad_losses.reshape({1}).contiguous();
        Tensor grad_logits = empty(logits.shape(), logits.dtype(), logits.device());
        detail::cross_entropy_backward(grad_logits, grad_losses, logits, lse_saved.unpack(),
                                       targets_saved.unpack());
        return std::vector<Tensor>{grad_logits};
    };
}

}  // namespace kael::autograd
