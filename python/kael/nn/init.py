"""kael.nn.init: PyTorch's weight initializations. Each fills its tensor in place under
no_grad (so it works on parameters) and returns it; fans are computed as PyTorch computes them
(fan_in = size(1) * receptive field, fan_out = size(0) * receptive field).

    w = kael.nn.Linear(4, 8).weight
    kael.nn.init.kaiming_uniform_(w, nonlinearity="relu")
"""
import math
import statistics

from .. import _kael
from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_",
           "ones_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_"]

_LINEAR_GAIN = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid"}


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity, as torch.nn.init.calculate_gain.

    linear, conv* and sigmoid: 1; tanh: 5/3; relu: sqrt(2); leaky_relu: sqrt(2 / (1 + slope^2))
    with slope param (default 0.01); selu: 3/4.

    Example:
        >>> kael.nn.init.calculate_gain("tanh")
        1.6666666666666667
    """
    if nonlinearity in _LINEAR_GAIN:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         f"dimensions (got shape {list(tensor.shape)})")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(tensor, mode, op):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor):
    # PyTorch leaves zero-element tensors alone (their fans would divide by zero).
    return tensor.numel() == 0


def _write(tensor, values):
    # Drawn on the host generator (one seed gives one initialization on every device).
    with no_grad():
        tensor.copy_(values.to(tensor.device))
    return tensor


def _random(factory, tensor):
    return factory(*tensor.shape, dtype=tensor.dtype)


def uniform_(tensor, a=0.0, b=1.0):
    """Fills tensor with values drawn uniformly from [a, b); returns it.

    Example:
        >>> w = kael.nn.init.uniform_(kael.empty(3, 4), -0.1, 0.1)
        >>> bool((w.abs() <= 0.1).all())
        True
    """
    return _write(tensor, _random(_kael.rand, tensor) * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0):
    """Fills tensor with values drawn from N(mean, std^2); returns it.

    Example:
        >>> w = kael.nn.init.normal_(kael.empty(100, 100), mean=1.0, std=0.01)
        >>> round(w.mean().item())
        1
    """
    return _write(tensor, _random(_kael.randn, tensor) * std + mean)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Fills tensor from N(mean, std^2) restricted to [a, b] (absolute bounds, as PyTorch's);
    returns it. Values outside are drawn again; bounds far in a tail use the inverse CDF.

    Example:
        >>> w = kael.nn.init.trunc_normal_(kael.empty(64, 64), std=0.02, a=-0.04, b=0.04)
        >>> bool((w.abs() <= 0.04).all())
        True
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: a ({a}) must be below b ({b})")
    normal = statistics.NormalDist(mean, std)
    low, high = normal.cdf(a), normal.cdf(b)
    if high - low < 0.05:  # rejection would take many rounds: invert the CDF on the host
        uniform = _random(_kael.rand, tensor).flatten().tolist()
        values = [normal.inv_cdf(min(max(low + u * (high - low), 1e-300), 1 - 1e-16))
                  for u in uniform]
        return _write(tensor, _kael.tensor(values, dtype=tensor.dtype).view(*tensor.shape))
    values = _random(_kael.randn, tensor) * std + mean
    outside = (values < a).logical_or(values > b)
    while outside.any().item():
        values = _kael.where(outside, _random(_kael.randn, tensor) * std + mean, values)
        outside = (values < a).logical_or(values > b)
    return _write(tensor, values)


def constant_(tensor, val):
    """Fills tensor with val; returns it.

    Example:
        >>> kael.nn.init.constant_(kael.empty(2), 0.5).tolist()
        [0.5, 0.5]
    """
    with no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor):
    """Fills tensor with 0; returns it.

    Example:
        >>> kael.nn.init.zeros_(kael.empty(2)).tolist()
        [0.0, 0.0]
    """
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fills tensor with 1; returns it.

    Example:
        >>> kael.nn.init.ones_(kael.empty(2)).tolist()
        [1.0, 1.0]
    """
    return constant_(tensor, 1.0)


def eye_(tensor):
    """Fills the 2-d tensor with the identity (ones on the diagonal, also when not square);
    returns it.

    Example:
        >>> kael.nn.init.eye_(kael.empty(2, 3)).tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.dim() != 2:
        raise ValueError(f"eye_: only 2-d tensors are supported, got shape {list(tensor.shape)}")
    return _write(tensor, _kael.eye(*tensor.shape, dtype=tensor.dtype))


def xavier_uniform_(tensor, gain=1.0):
    """Glorot uniform: U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out)); returns
    tensor.

    Example:
        >>> w = kael.nn.init.xavier_uniform_(kael.empty(8, 4))
        >>> bool((w.abs() <= 1.0).all())
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)); returns tensor.

    Example:
        >>> w = kael.nn.init.xavier_normal_(kael.empty(8, 4))
        >>> w.shape
        (8, 4)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain =
    calculate_gain(nonlinearity, a) and fan the fan_in or fan_out (mode); returns tensor.

    Example:
        >>> w = kael.nn.init.kaiming_uniform_(kael.empty(8, 4), nonlinearity="relu")
        >>> bool((w.abs() <= (6 / 4) ** 0.5).all())
        True
    """
    if _is_empty(tensor):
        return tensor
    fan = _fan(tensor, mode, "kaiming_uniform_")
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He normal: N(0, std^2) with std = calculate_gain(nonlinearity, a) / sqrt(fan); returns
    tensor.

    Example:
        >>> w = kael.nn.init.kaiming_normal_(kael.empty(8, 4), mode="fan_out")
        >>> w.shape
        (8, 4)
    """
    if _is_empty(tensor):
        return tensor
    fan = _fan(tensor, mode, "kaiming_normal_")
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))
