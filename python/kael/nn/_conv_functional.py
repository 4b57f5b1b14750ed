"""torch.nn.functional's convolution, pooling, normalisation and resampling with PyTorch's
signatures: conv1d/2d/3d, max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d, batch_norm, group_norm, instance_norm, pad (every mode), unfold,
interpolate and pixel_shuffle/unshuffle. The computing is kael/nn_conv.h's, in C++: sliding
windows and one matrix product, differentiable on every device."""
import math

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
                                  _sizes(dilation, n, op, "dilation"), bool(ceil_mode))
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


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of [N, C, H, W] as columns [N, C * kH * kW, L] (im2col), as
    torch.nn.functional.unfold.

    Example:
        >>> kael.nn.functional.unfold(kael.ones(1, 2, 3, 3), 2).shape
        (1, 8, 4)
    """
    _tensor(input, "unfold")
    kernel = _sizes(kernel_size, 2, "unfold", "kernel_size")
    pads = _sizes(padding, 2, "unfold", "padding")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    if any(pads):
        x = _pad_constant(x, [pads[1], pads[1], pads[0], pads[0]])
    windows = _c.sliding_windows(x, kernel, _sizes(stride, 2, "unfold", "stride"),
                                 _sizes(dilation, 2, "unfold", "dilation"))
    n, channels = x.shape[0], x.shape[1]
    columns = windows.reshape(n, -1, channels * kernel[0] * kernel[1]).transpose(1, 2)
    return columns if input.dim() == 4 else columns.squeeze(0)


def pixel_shuffle(input, upscale_factor):
    """[*, C r^2, H, W] -> [*, C, H r, W r], as torch.nn.functional.pixel_shuffle.

    Example:
        >>> kael.nn.functional.pixel_shuffle(kael.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
        [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    _tensor(input, "pixel_shuffle")
    r = _ints(upscale_factor, "pixel_shuffle", "upscale_factor")[0]
    *batch, c, h, w = input.shape
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    k = len(batch)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H r, W r] -> [*, C r^2, H, W], pixel_shuffle's inverse.

    Example:
        >>> x = kael.arange(4.0).reshape(1, 1, 2, 2)
        >>> kael.nn.functional.pixel_unshuffle(x, 2).reshape(-1).tolist()
        [0.0, 1.0, 2.0, 3.0]
    """
    _tensor(input, "pixel_unshuffle")
    r = _ints(downscale_factor, "pixel_unshuffle", "downscale_factor")[0]
    *batch, c, h, w = input.shape
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    k = len(batch)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def _source_positions(out, size, scale, align_corners, nearest):
    """Each output position's source coordinate along one dim, as PyTorch computes it."""
    if nearest:
        ratio = size / out if scale is None else 1.0 / scale
        return [min(int(math.floor(i * ratio)), size - 1) for i in range(out)]
    if align_corners:
        ratio = (size - 1) / (out - 1) if out > 1 else 0.0
        return [i * ratio for i in range(out)]
    ratio = size / out if scale is None else 1.0 / scale
    return [max((i + 0.5) * ratio - 0.5, 0.0) for i in range(out)]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims of [N, C, *spatial]: mode nearest, linear, bilinear or
    trilinear (each dim in turn, as they are separable), as torch.nn.functional.interpolate.

    Example:
        >>> x = kael.tensor([[[1.0, 2.0]]])
        >>> kael.nn.functional.interpolate(x, scale_factor=2).tolist()
        [[[1.0, 1.0, 2.0, 2.0]]]
        >>> kael.nn.functional.interpolate(x, size=3, mode="linear", align_corners=True).tolist()
        [[[1.0, 1.5, 2.0]]]
    """
    _tensor(input, "interpolate")
    n = input.dim() - 2
    if mode not in ("nearest", "linear", "bilinear", "trilinear"):
        raise ValueError(f"interpolate: mode {mode!r} is not supported (nearest, linear, "
                         f"bilinear, trilinear)")
    if antialias:
        raise ValueError("interpolate: antialias is not supported")
    nearest = mode == "nearest"
    if nearest and align_corners is not None:
        raise ValueError("interpolate: align_corners only applies to the linear modes")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    scales = [None] * n
    if size is not None:
        sizes = _sizes(size, n, "interpolate", "size")
    else:
        factors = [float(scale_factor)] * n if isinstance(scale_factor, (int, float)) \
            else [float(f) for f in scale_factor]
        sizes = [int(math.floor(input.shape[2 + i] * f)) for i, f in enumerate(factors)]
        if not recompute_scale_factor:
            scales = factors
    result = input
    for i in range(n):
        dim, length, out = 2 + i, input.shape[2 + i], sizes[i]
        where = _source_positions(out, length, scales[i], bool(align_corners), nearest)
        if nearest:
            result = result.index_select(dim, _kael.tensor(where).to(input.device))
            continue
        low = [min(int(math.floor(p)), length - 1) for p in where]
        high = [min(lo + 1, length - 1) for lo in low]
        shape = [1] * input.dim()
        shape[dim] = out
        weight = _kael.tensor([p - lo for p, lo in zip(where, low)],
                              dtype=input.dtype).reshape(shape).to(input.device)
        below = result.index_select(dim, _kael.tensor(low).to(input.device))
        above = result.index_select(dim, _kael.tensor(high).to(input.device))
        result = below + (above - below) * weight
    return result
