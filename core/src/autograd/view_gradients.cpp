// The gradients that flow between a view and its base (graph.cpp's view rebase and in-place
// writes through a view). Outside grad mode they write through a strided view of a new buffer;
// in grad mode (create_graph) the same values come from gather and scatter_add_ over the view's
// storage positions, so the gradient can be differentiated again (a strided view of a tensor
// that requires grad cannot be recorded).
#include "record.h"

namespace kael::autograd {

namespace {

// The base's storage position of every element of the view (base contiguous from offset 0),
// flattened in the view's order.
Tensor positions(const ViewGeometry& view, const Device& device) {
    const NoGradGuard no_grad;
    std::int64_t count = 1;
    for (const std::int64_t size : view.base_shape) {
        count *= size;
    }
    return arange_int(0, count, 1, DType::I64, device)
        .as_strided(view.shape, view.strides, view.offset)
        .reshape({-1});
}

std::int64_t base_numel(const ViewGeometry& view) {
    std::int64_t count = 1;
    for (const std::int64_t size : view.base_shape) {
        count *= size;
    }
    return count;
}

}  // namespace

Tensor view_into_base(const Tensor& grad, const ViewGeometry& view) {
    if (!is_grad_enabled()) {
        Tensor base_grad = zeros(view.base_shape, grad.dtype(), grad.device());
        base_grad.as_strided(view.shape, view.strides, view.offset).copy_(grad);
        return base_grad;
    }
    Tensor base_grad = zeros({base_numel(view)}, grad.dtype(), grad.device());
    scatter_add_(base_grad, 0, positions(view, grad.device()), grad.reshape({-1}));
    return base_grad.reshape(view.base_shape);
}

std::vector<Tensor> through_view(const Tensor& grad, const ViewGeometry& view,
                                 const BackwardFunction& backward) {
    if (!is_grad_enabled()) {
        Tensor base_grad = empty(view.base_shape, grad.dtype(), grad.device());
        base_grad.copy_(grad);
        Tensor region = base_grad.as_strided(view.shape, view.strides, view.offset);
        std::vector<Tensor> grads = backward(region.clone());
        if (grads.front().defined()) {
            region.copy_(grads.front());
        } else {
            region.fill_(0);
        }
        grads.front() = base_grad;
        return grads;
    }
    const Tensor places = positions(view, grad.device());
    const Tensor flat = grad.reshape({-1});
    std::vector<Tensor> grads = backward(gather(flat, 0, places).reshape(view.shape));
    Tensor outside;  // 1 outside the view, 0 inside
    {
        const NoGradGuard no_grad;
        outside = ones({base_numel(view)}, grad.dtype(), grad.device());
        scatter_add_(outside, 0, places, full({places.numel()}, -1.0, grad.dtype(), grad.device()));
    }
    Tensor base_grad = flat * outside;
    if (grads.front().defined()) {
        scatter_add_(base_grad, 0, places, grads.front().reshape({-1}));
    }
    grads.front() = base_grad.reshape(view.base_shape);
    return grads;
}

}  // namespace kael::autograd
