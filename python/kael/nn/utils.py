"""kael.nn.utils: gradient clipping (clip_grad_norm_, clip_grad_value_), as torch.nn.utils."""
from .._kael import Tensor, _optim


def _parameter_list(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients of parameters (a tensor or an iterable of them) in place so that
    their total norm, taken over all gradients as if concatenated, is at most max_norm.

    The scale min(1, max_norm / (total_norm + 1e-6)) is computed and applied on the gradients'
    device, without a host synchronisation. norm_type is p > 0 or float('inf'). Returns the
    total norm as a 0-d tensor on that device (float32 for float32 gradients). Gradients on
    several devices are a ValueError; error_if_nonfinite=True raises ValueError for a NaN or
    infinite total norm (reading it on the host).

    Example:
        >>> w = kael.ones(4, requires_grad=True)
        >>> (3 * w).sum().backward()
        >>> kael.nn.utils.clip_grad_norm_(w, max_norm=1.0).item()
        6.0
        >>> [round(g, 4) for g in w.grad.tolist()]
        [0.5, 0.5, 0.5, 0.5]
    """
    return _optim.clip_grad_norm_(_parameter_list(parameters), float(max_norm),
                                  float(norm_type), bool(error_if_nonfinite))


def clip_grad_value_(parameters, clip_value):
    """Clamps the gradients of parameters (a tensor or an iterable of them) into
    [-clip_value, clip_value] in place. Returns None.

    Example:
        >>> w = kael.ones(2, requires_grad=True)
        >>> (w * kael.tensor([-3.0, 0.5])).sum().backward()
        >>> kael.nn.utils.clip_grad_value_(w, 1.0)
        >>> w.grad.tolist()
        [-1.0, 0.5]
    """
    _optim.clip_grad_value_(_parameter_list(parameters), float(clip_value))


__all__ = ["clip_grad_norm_", "clip_grad_value_"]
