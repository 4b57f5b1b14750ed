"""torch.nn's convolution, pooling and resampling layers with PyTorch's signatures,
attributes and state_dict keys: Conv1d/2d/3d, MaxPool1d/2d/3d, AvgPool1d/2d/3d,
AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, Upsample, PixelShuffle, PixelUnshuffle and
Unfold (the normalisation layers are in _norm_layers.py). The layers with
parameters are kael/nn_conv.h's C++ modules underneath."""
from .._kael import _nn
from .._kael import float32 as _float32
from . import _conv_functional as F
from . import _resampling


def _tuple(value, n, name):
    sizes = F._sizes(value, n, name, name)
    return tuple(sizes)


class _ConvAttributes:
    """PyTorch's attributes of Conv and ConvTranspose layers, read from the C++ layer."""
    in_channels = property(lambda self: self._options["in_channels"], doc="Input channels.")
    out_channels = property(lambda self: self._options["out_channels"], doc="Output channels.")
    kernel_size = property(lambda self: self._options["kernel_size"], doc="Kernel sizes.")
    stride = property(lambda self: self._options["stride"], doc="Strides.")
    padding = property(lambda self: self._options["padding"], doc="Padding sizes or name.")
    output_padding = property(lambda self: self._options["output_padding"],
                              doc="Extra output cells on one side of each dim (transposed).")
    dilation = property(lambda self: self._options["dilation"], doc="Dilations.")
    groups = property(lambda self: self._options["groups"], doc="Channel groups.")
    padding_mode = property(lambda self: self._options["padding_mode"], doc="Padding mode.")


class _ConvNd(_ConvAttributes, _nn._Conv):
    _spatial = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        n = self._spatial
        named = padding if isinstance(padding, str) else ""
        sizes = [0] if named else list(_tuple(padding, n, "padding"))
        super().__init__(n, int(in_channels), int(out_channels),
                         list(_tuple(kernel_size, n, "kernel_size")),
                         list(_tuple(stride, n, "stride")), sizes, named,
                         list(_tuple(dilation, n, "dilation")), int(groups), bool(bias),
                         padding_mode, device)
        if dtype is not None and dtype != _float32:
            self.to(dtype)



class Conv1d(_ConvNd):
    """1-d convolution layer, as torch.nn.Conv1d (weight [out, in / groups, k]).

    Example:
        >>> layer = kael.nn.Conv1d(2, 4, 3, padding=1)
        >>> layer(kael.ones(1, 2, 10)).shape
        (1, 4, 10)
    """
    _spatial = 1


class Conv2d(_ConvNd):
    """2-d convolution layer, as torch.nn.Conv2d (weight [out, in / groups, kH, kW], bias
    [out], uniform in +-1/sqrt(fan_in)); padding sizes, "same" or "valid"; padding_mode zeros,
    reflect, replicate or circular.

    Example:
        >>> layer = kael.nn.Conv2d(1, 8, 3, stride=2)
        >>> layer(kael.ones(5, 1, 28, 28)).shape
        (5, 8, 13, 13)
        >>> layer
        Conv2d(1, 8, kernel_size=(3, 3), stride=(2, 2))
    """
    _spatial = 2


class Conv3d(_ConvNd):
    """3-d convolution layer, as torch.nn.Conv3d.

    Example:
        >>> kael.nn.Conv3d(1, 2, 3)(kael.ones(1, 1, 4, 4, 4)).shape
        (1, 2, 2, 2, 2)
    """
    _spatial = 3


def _given(value):
    """Sizes as the user gave them (one number stays one, as PyTorch prints it)."""
    return [int(value)] if isinstance(value, int) else [int(v) for v in value]


class _PoolNd(_nn._Pool):
    _spatial, _max = 0, True

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, count_include_pad=True, divisor_override=None):
        n = self._spatial
        super().__init__(n, self._max, _given(kernel_size),
                         [] if stride is None else _given(stride), _given(padding),
                         _given(dilation), bool(ceil_mode), bool(count_include_pad),
                         divisor_override)
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.ceil_mode, self.return_indices = dilation, ceil_mode, return_indices

    def forward(self, input):
        """The pooled input (and, for max pooling with return_indices, the indices)."""
        if self._max and self.return_indices:
            return F._max_pool(self._spatial, input, self.kernel_size, self.stride, self.padding,
                               self.dilation, self.ceil_mode, True)
        return super().forward(input)


def _max_pool_init(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                   ceil_mode=False):
    _PoolNd.__init__(self, kernel_size, stride, padding, dilation, return_indices, ceil_mode)


def _avg_pool_init(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
    _PoolNd.__init__(self, kernel_size, stride, padding, 1, False, ceil_mode, count_include_pad,
                     divisor_override)


def _pool_class(name, n, is_max, doc):
    init = _max_pool_init if is_max else _avg_pool_init
    return type(name, (_PoolNd,), {"_spatial": n, "_max": is_max, "__init__": init,
                                   "__doc__": doc, "__module__": __name__})


MaxPool1d = _pool_class("MaxPool1d", 1, True, """Max pooling over [N, C, L], as torch.nn.MaxPool1d.

    Example:
        >>> kael.nn.MaxPool1d(2)(kael.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
        [[[3.0, 2.0]]]
    """)
MaxPool2d = _pool_class("MaxPool2d", 2, True, """Max pooling over [N, C, H, W], as torch.nn.MaxPool2d.

    Example:
        >>> kael.nn.MaxPool2d(2)(kael.ones(1, 3, 28, 28)).shape
        (1, 3, 14, 14)
    """)
MaxPool3d = _pool_class("MaxPool3d", 3, True, """Max pooling over [N, C, D, H, W].

    Example:
        >>> kael.nn.MaxPool3d(2)(kael.ones(1, 1, 4, 4, 4)).shape
        (1, 1, 2, 2, 2)
    """)
AvgPool1d = _pool_class("AvgPool1d", 1, False, """Average pooling over [N, C, L].

    Example:
        >>> kael.nn.AvgPool1d(2)(kael.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
        [[[2.0, 1.0]]]
    """)
AvgPool2d = _pool_class("AvgPool2d", 2, False, """Average pooling over [N, C, H, W], as torch.nn.AvgPool2d.

    Example:
        >>> kael.nn.AvgPool2d(2)(kael.ones(1, 3, 8, 8)).shape
        (1, 3, 4, 4)
    """)
AvgPool3d = _pool_class("AvgPool3d", 3, False, """Average pooling over [N, C, D, H, W].

    Example:
        >>> kael.nn.AvgPool3d(2)(kael.ones(1, 1, 4, 4, 4)).shape
        (1, 1, 2, 2, 2)
    """)


class _AdaptivePoolNd(_nn._AdaptivePool):
    _spatial, _max = 0, False

    def __init__(self, output_size, return_indices=False):
        n = self._spatial
        sizes = [output_size] * n if isinstance(output_size, int) or output_size is None \
            else list(output_size)
        self._none_sizes = any(s is None for s in sizes)
        super().__init__(self._max, [1 if s is None else int(s) for s in sizes])
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        """The pooled input (and, for max pooling with return_indices, the indices)."""
        if self._max:
            return F._adaptive_max(self._spatial, input, self.output_size, self.return_indices)
        if self._none_sizes:
            return F._c.adaptive_avg_pool(input, F._output_size(self._spatial, input,
                                                                self.output_size, "pool"))
        return super().forward(input)


def _adaptive_class(name, n, is_max, doc):
    return type(name, (_AdaptivePoolNd,), {"_spatial": n, "_max": is_max, "__doc__": doc,
                                           "__module__": __name__})


AdaptiveAvgPool1d = _adaptive_class("AdaptiveAvgPool1d", 1, False, """Means over output_size bins of [N, C, L].

    Example:
        >>> kael.nn.AdaptiveAvgPool1d(1)(kael.ones(2, 3, 5)).shape
        (2, 3, 1)
    """)
AdaptiveAvgPool2d = _adaptive_class("AdaptiveAvgPool2d", 2, False, """Means over output_size bins of [N, C, H, W], as torch.nn.AdaptiveAvgPool2d.

    Example:
        >>> kael.nn.AdaptiveAvgPool2d((1, 1))(kael.ones(2, 3, 7, 7)).shape
        (2, 3, 1, 1)
    """)
AdaptiveAvgPool3d = _adaptive_class("AdaptiveAvgPool3d", 3, False, """Means over output_size bins of [N, C, D, H, W].

    Example:
        >>> kael.nn.AdaptiveAvgPool3d(1)(kael.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 1, 1, 1)
    """)
AdaptiveMaxPool1d = _adaptive_class("AdaptiveMaxPool1d", 1, True, """Maxima over output_size bins of [N, C, L].

    Example:
        >>> kael.nn.AdaptiveMaxPool1d(2)(kael.ones(1, 1, 5)).shape
        (1, 1, 2)
    """)
AdaptiveMaxPool2d = _adaptive_class("AdaptiveMaxPool2d", 2, True, """Maxima over output_size bins of [N, C, H, W].

    Example:
        >>> kael.nn.AdaptiveMaxPool2d(1)(kael.ones(1, 2, 5, 5)).shape
        (1, 2, 1, 1)
    """)
AdaptiveMaxPool3d = _adaptive_class("AdaptiveMaxPool3d", 3, True, """Maxima over output_size bins of [N, C, D, H, W].

    Example:
        >>> kael.nn.AdaptiveMaxPool3d(1)(kael.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 1, 1, 1)
    """)


class Upsample(_nn.Module):
    """F.interpolate as a layer, as torch.nn.Upsample.

    Example:
        >>> kael.nn.Upsample(scale_factor=2)(kael.ones(1, 1, 2, 2)).shape
        (1, 1, 4, 4)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        """The resized input."""
        return _resampling.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)


class PixelShuffle(_nn.Module):
    """F.pixel_shuffle as a layer.

    Example:
        >>> kael.nn.PixelShuffle(2)(kael.ones(1, 8, 3, 3)).shape
        (1, 2, 6, 6)
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        """The shuffled input."""
        return _resampling.pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(_nn.Module):
    """F.pixel_unshuffle as a layer.

    Example:
        >>> kael.nn.PixelUnshuffle(2)(kael.ones(1, 2, 6, 6)).shape
        (1, 8, 3, 3)
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        """The unshuffled input."""
        return _resampling.pixel_unshuffle(input, self.downscale_factor)


class Unfold(_nn.Module):
    """F.unfold as a layer.

    Example:
        >>> kael.nn.Unfold(2)(kael.ones(1, 2, 3, 3)).shape
        (1, 8, 4)
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        """The input's sliding blocks as columns."""
        return _resampling.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)
