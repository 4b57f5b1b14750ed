"""torch.nn.functional's resampling with PyTorch's signatures: unfold (im2col), interpolate
(nearest, linear, bilinear, trilinear; separable, one dim at a time) and pixel_shuffle/unshuffle,
composed from kael's ops (differentiable on every device)."""
import math

from .. import _kael
from .._kael._nn import _conv as _c
from .._kael._nn._functional import pad as _pad_constant
from ._conv_functional import _ints, _sizes, _tensor


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
