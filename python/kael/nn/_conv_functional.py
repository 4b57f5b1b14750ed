"""torch.nn.functional's convolution, pooling, normalisation and resampling with PyTorch's
signatures: conv1d/2d/3d, max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d, batch_norm, group_norm, instance_norm and pad (every mode). The computing is kael/nn_conv.h's, in C++: sliding
windows and one matrix product, differentiable on every device."""
from .. import _kael
from .._kael import Tensor
from .._kael._nn import _conv as _c
from .._kael._nn._functional import pad as _pad_constant


def _tensor(value, op, name="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, not {type(value).__name__}")
    return value


def _ints(value, op, name):
    """value as a list of ints: an int, or a tuple or list of them."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if not isinstance(value, (tuple, list)) or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{op}: {name} must be an int or a tuple of ints, not "
                        f"{type(value).__name__}")
    return list(value)


def _sizes(value, n, op, name):
    sizes = _ints(value, op, name)
    if len(sizes) == 1:
        return sizes * n
    if len(sizes) != n:
        raise ValueError(f"{op}: {name} needs 1 or {n} numbers, got {len(sizes)}")
    return sizes


def _conv(n, input, weight, bias, stride, padding, dilation, groups):
    op = f"conv{n}d"
    _tensor(input, op)
    _tensor(weight, op, "weight")
    if weight.dim() != n + 2:
        raise ValueError(f"{op}: weight must be {n + 2}-d, got {tuple(weight.shape)}")
    stride, dilation = _sizes(stride, n, op, "stride"), _sizes(dilation, n, op, "dilation")
    if isinstance(padding, str):
        return _c.conv_named(input, weight, bias, stride, padding, dilation, int(groups))
    return _c.conv(input, weight, bias, stride, _sizes(padding, n, op, "padding"), dilation,
                   int(groups))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over [N, C, L] (or [C, L]), as torch.nn.functional.conv1d.

    Example:
        >>> x = kael.ones(1, 1, 5)
        >>> kael.nn.functional.conv1d(x, kael.ones(1, 1, 3)).tolist()
        [[[3.0, 3.0, 3.0]]]
    """
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over [N, C, H, W] (or [C, H, W]); padding may be "same" or "valid".

    Example:
        >>> x = kael.ones(1, 1, 4, 4)
        >>> kael.nn.functional.conv2d(x, kael.ones(2, 1, 3, 3), padding=1).shape
        (1, 2, 4, 4)
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over [N, C, D, H, W] (or [C, D, H, W]).

    Example:
        >>> x = kael.ones(1, 1, 3, 3, 3)
        >>> kael.nn.functional.conv3d(x, kael.ones(1, 1, 3, 3, 3)).tolist()
        [[[[[27.0]]]]]
    """
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    op = f"max_pool{n}d"
    _tensor(input, op)
    stride = [] if stride is None or stride == [] or stride == () else \
        _sizes(stride, n, op, "stride")
    values, indices = _c.max_pool(input, n, _sizes(kernel_size, n, op, "kernel_size"), stride,
                                  _sizes(padding, n, op, "padding"),
                                  _sizes(dilation, n, op, "dilation"), bool(ceil_mode),
                                  bool(return_indices))
    return (values, indices) if return_indices else values


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of [N, C, L], as torch.nn.functional.max_pool1d.

    Example:
        >>> kael.nn.functional.max_pool1d(kael.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
        [[[3.0, 2.0]]]
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of [N, C, H, W]; indices are flat positions in each H x W plane.

    Example:
        >>> x = kael.arange(16.0).reshape(1, 1, 4, 4)
        >>> kael.nn.functional.max_pool2d(x, 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of [N, C, D, H, W].

    Example:
        >>> kael.nn.functional.max_pool3d(kael.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
        [[[[[7.0]]]]]
    """
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    op = f"avg_pool{n}d"
    _tensor(input, op)
    stride = [] if stride is None or stride == [] or stride == () else \
        _sizes(stride, n, op, "stride")
    return _c.avg_pool(input, n, _sizes(kernel_size, n, op, "kernel_size"), stride,
                       _sizes(padding, n, op, "padding"), bool(ceil_mode),
                       bool(count_include_pad), divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Mean over windows of [N, C, L], as torch.nn.functional.avg_pool1d.

    Example:
        >>> kael.nn.functional.avg_pool1d(kael.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
        [[[2.0, 1.0]]]
    """
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over windows of [N, C, H, W], as torch.nn.functional.avg_pool2d.

    Example:
        >>> x = kael.arange(16.0).reshape(1, 1, 4, 4)
        >>> kael.nn.functional.avg_pool2d(x, 2).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over windows of [N, C, D, H, W].

    Example:
        >>> kael.nn.functional.avg_pool3d(kael.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
        [[[[[3.5]]]]]
    """
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _output_size(n, input, output_size, op):
    _tensor(input, op)
    sizes = [output_size] * n if isinstance(output_size, int) or output_size is None \
        else list(output_size)
    if len(sizes) != n:
        raise ValueError(f"{op}: output_size needs {n} numbers")
    spatial = input.shape[-n:]
    return [int(spatial[i]) if s is None else int(s) for i, s in enumerate(sizes)]


def adaptive_avg_pool1d(input, output_size):
    """Means over output_size bins of [N, C, L] (or [C, L]).

    Example:
        >>> kael.nn.functional.adaptive_avg_pool1d(kael.arange(4.0).reshape(1, 1, 4), 1).tolist()
        [[[1.5]]]
    """
    return _c.adaptive_avg_pool(input, _output_size(1, input, output_size, "adaptive_avg_pool1d"))


def adaptive_avg_pool2d(input, output_size):
    """Means over output_size bins of [N, C, H, W]; a None size keeps the input's.

    Example:
        >>> x = kael.arange(16.0).reshape(1, 1, 4, 4)
        >>> kael.nn.functional.adaptive_avg_pool2d(x, (1, 1)).tolist()
        [[[[7.5]]]]
    """
    return _c.adaptive_avg_pool(input, _output_size(2, input, output_size, "adaptive_avg_pool2d"))


def adaptive_avg_pool3d(input, output_size):
    """Means over output_size bins of [N, C, D, H, W].

    Example:
        >>> x = kael.ones(1, 1, 2, 2, 2)
        >>> kael.nn.functional.adaptive_avg_pool3d(x, 1).tolist()
        [[[[[1.0]]]]]
    """
    return _c.adaptive_avg_pool(input, _output_size(3, input, output_size, "adaptive_avg_pool3d"))


def _adaptive_max(n, input, output_size, return_indices):
    values, indices = _c.adaptive_max_pool(
        input, _output_size(n, input, output_size, f"adaptive_max_pool{n}d"))
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Maxima over output_size bins of [N, C, L].

    Example:
        >>> kael.nn.functional.adaptive_max_pool1d(kael.arange(4.0).reshape(1, 1, 4), 2).tolist()
        [[[1.0, 3.0]]]
    """
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maxima over output_size bins of [N, C, H, W].

    Example:
        >>> x = kael.arange(16.0).reshape(1, 1, 4, 4)
        >>> kael.nn.functional.adaptive_max_pool2d(x, 1).tolist()
        [[[[15.0]]]]
    """
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Maxima over output_size bins of [N, C, D, H, W].

    Example:
        >>> kael.nn.functional.adaptive_max_pool3d(kael.ones(1, 1, 2, 2, 2), 1).tolist()
        [[[[[1.0]]]]]
    """
    return _adaptive_max(3, input, output_size, return_indices)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalises over dim 1 with the batch's statistics (training, which also moves the
    running ones by momentum) or the running ones, as torch.nn.functional.batch_norm.

    Example:
        >>> x = kael.tensor([[1.0], [3.0]])
        >>> y = kael.nn.functional.batch_norm(x, None, None, training=True)
        >>> [round(v, 4) for v in y.reshape(-1).tolist()]
        [-1.0, 1.0]
    """
    _tensor(input, "batch_norm")
    return _c.batch_norm(input, running_mean, running_var, weight, bias, bool(training),
                         float(momentum), float(eps))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises each sample's groups of channels, as torch.nn.functional.group_norm.

    Example:
        >>> x = kael.tensor([[1.0, 3.0]])
        >>> [round(v, 4) for v in kael.nn.functional.group_norm(x, 1).reshape(-1).tolist()]
        [-1.0, 1.0]
    """
    _tensor(input, "group_norm")
    if isinstance(num_groups, bool) or not isinstance(num_groups, int):
        raise TypeError(f"group_norm: num_groups must be an int, not {type(num_groups).__name__}")
    return _c.group_norm(input, int(num_groups), weight, bias, float(eps))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalises each sample's channels over their spatial positions, as
    torch.nn.functional.instance_norm (running statistics averaged over the batch).

    Example:
        >>> x = kael.tensor([[[1.0, 3.0]]])
        >>> [round(v, 4) for v in kael.nn.functional.instance_norm(x).reshape(-1).tolist()]
        [-1.0, 1.0]
    """
    _tensor(input, "instance_norm")
    for name, value in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        if value is not None:
            _tensor(value, "instance_norm", name)
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims, got "
                         f"{tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    folded = input.reshape(1, n * c, *input.shape[2:])
    mean = running_mean.repeat(n) if running_mean is not None else None
    var = running_var.repeat(n) if running_var is not None else None
    result = batch_norm(folded, mean, var, None, None, use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None:
        import kael  # no_grad, at call time (kael imports this module)
        with kael.no_grad():  # the batch's mean of each channel's moved statistics
            running_mean.copy_(mean.reshape(n, c).mean(0))
            running_var.copy_(var.reshape(n, c).mean(0))
    result = result.reshape(input.shape)
    view = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        result = result * weight.reshape(view)
    if bias is not None:
        result = result + bias.reshape(view)
    return result


def pad(input, pad, mode="constant", value=None):
    """Pads the last dims by (before, after) pairs from the last dim backwards; mode constant
    (value, default 0), reflect, replicate or circular, as torch.nn.functional.pad.

    Example:
        >>> kael.nn.functional.pad(kael.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
        [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    _tensor(input, "pad")
    amounts = _ints(pad, "pad", "pad")
    if not isinstance(mode, str):
        raise TypeError(f"pad: mode must be a str, not {type(mode).__name__}")
    if mode == "constant":
        return _pad_constant(input, amounts, value=0.0 if value is None else float(value))
    return _c.pad_mode(input, amounts, mode)
