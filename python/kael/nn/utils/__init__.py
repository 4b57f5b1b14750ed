"""kael.nn.utils: gradient clipping (clip_grad_norm_, clip_grad_value_), parameters as one
vector, and kael.nn.utils.rnn (packed sequences), as torch.nn.utils."""
from ..._kael import Tensor, _optim


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


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one 1-D tensor (all on one device).

    Example:
        >>> layer = kael.nn.Linear(2, 1)
        >>> kael.nn.utils.parameters_to_vector(layer.parameters()).shape
        (3,)
    """
    tensors = _parameter_list(parameters)
    if tensors and any(t.device != tensors[0].device for t in tensors):
        raise RuntimeError("parameters_to_vector: the parameters are on different devices")
    from ... import _kael
    return _kael.cat([t.reshape(-1) for t in tensors])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-D tensor vec into the parameters, in place.

    Example:
        >>> layer = kael.nn.Linear(2, 1)
        >>> kael.nn.utils.vector_to_parameters(kael.tensor([1.0, 2.0, 3.0]), layer.parameters())
        >>> layer.bias.tolist()
        [3.0]
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, not {type(vec).__name__}")
    from ...autograd import no_grad
    tensors = _parameter_list(parameters)
    total = sum(t.numel() for t in tensors)
    if vec.dim() != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vec must be 1-D with {total} elements, got "
                         f"shape {tuple(vec.shape)}")
    offset = 0
    with no_grad():
        for t in tensors:
            t.copy_(vec[offset:offset + t.numel()].view(*t.shape))
            offset += t.numel()


__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
