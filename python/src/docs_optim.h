#pragma once
// Docstrings of kael._kael._optim, the C++ steps under kael.optim and kael.nn.utils.
namespace kael::python::docs {

inline constexpr const char* sgd_step = R"doc(sgd_step(params, state, *, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False)
--

One SGD step, in place, for the parameters of one group that have a gradient.

Arguments: params, a list of leaf tensors (any device, float dtypes); state, a mapping
from each parameter to its state dict (kael.optim.Optimizer.state), read and written as
PyTorch's SGD does ("momentum_buffer" when momentum is not 0); the group's hyperparameters.
Returns None. kael.optim.SGD.step calls it once per parameter group.

Example:
    >>> p = kael.ones(3, requires_grad=True)
    >>> p.grad = kael.ones(3)
    >>> kael._kael._optim.sgd_step([p], kael.optim.optimizer.ParamState(), lr=0.5)
    >>> p.tolist()
    [0.5, 0.5, 0.5]
)doc";

inline constexpr const char* adam_step = R"doc(adam_step(params, state, *, lr, beta1, beta2, eps, weight_decay, decoupled, capturable=False, lr_tensor=None)
--

One Adam (decoupled=False) or AdamW (decoupled=True) step, in place, for the parameters of
one group that have a gradient, through the fused device kernel where it applies.

Arguments: params, a list of leaf tensors; state, a mapping from each parameter to its state
dict: "step" (a float count), "exp_avg" and "exp_avg_sq" (tensors on the parameter's device,
created as zeros on the first step, moved to the parameter's device when it moved); the
group's hyperparameters. capturable=True keeps "step" as a 0-d f32 tensor on the device
(shared by the parameters that start together) and computes the bias corrections there, with
lr read from lr_tensor (a 0-d tensor) when given: a device graph can record the step.
Returns None.

Example:
    >>> p = kael.ones(3, requires_grad=True)
    >>> p.grad = kael.ones(3)
    >>> state = kael.optim.optimizer.ParamState()
    >>> kael._kael._optim.adam_step([p], state, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
    ...                             weight_decay=0.0, decoupled=False)
    >>> state[p]["step"]
    1.0
)doc";

inline constexpr const char* clip_grad_norm = R"doc(clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False)
--

Scales the gradients of parameters (a list of tensors) in place so that their total norm is
at most max_norm, computing and applying the scale min(1, max_norm / (norm + 1e-6)) on the
device without a host synchronisation.

Returns the total norm of all gradients together as a 0-d tensor on their device (float32
for float32 gradients). norm_type is p > 0 or float('inf'). Gradients on several devices are
a ValueError; error_if_nonfinite=True raises ValueError for a NaN or infinite norm.

Example:
    >>> p = kael.ones(4, requires_grad=True)
    >>> p.grad = kael.full((4,), 3.0)
    >>> kael._kael._optim.clip_grad_norm_([p], 1.0).item()
    6.0
)doc";

inline constexpr const char* clip_grad_value = R"doc(clip_grad_value_(parameters, clip_value)
--

Clamps the gradients of parameters (a list of tensors) into [-clip_value, clip_value] in
place. Returns None.

Example:
    >>> p = kael.ones(2, requires_grad=True)
    >>> p.grad = kael.tensor([-3.0, 0.5])
    >>> kael._kael._optim.clip_grad_value_([p], 1.0)
    >>> p.grad.tolist()
    [-1.0, 0.5]
)doc";

}  // namespace kael::python::docs
