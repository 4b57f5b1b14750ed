"""torch.nn's transposed convolutions and fold with PyTorch's signatures: F.conv_transpose1d/2d/3d,
F.fold, nn.ConvTranspose1d/2d/3d and nn.Fold. The computing is kael/nn_conv.h's (the input
times the weight into windows of the output, summed where they lie), differentiable on every
device."""
from .._kael import _nn
from .._kael import float32 as _float32
from .._kael._nn import _conv as _c
from ._conv_functional import _sizes, _tensor
from ._conv_layers import _ConvAttributes


def _conv_transpose(n, input, weight, bias, stride, padding, output_padding, groups, dilation):
    op = f"conv_transpose{n}d"
    _tensor(input, op)
    _tensor(weight, op, "weight")
    if weight.dim() != n + 2:
        raise ValueError(f"{op}: weight must be {n + 2}-d, got {tuple(weight.shape)}")
    return _c.conv_transpose(input, weight, bias, _sizes(stride, n, op, "stride"),
                             _sizes(padding, n, op, "padding"),
                             _sizes(output_padding, n, op, "output_padding"), int(groups),
                             _sizes(dilation, n, op, "dilation"))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 1-d convolution (conv1d's gradient for its input), as
    torch.nn.functional.conv_transpose1d: weight [C, OC / groups, k].

    Example:
        >>> kael.nn.functional.conv_transpose1d(kael.ones(1, 1, 2), kael.ones(1, 1, 3)).tolist()
        [[[1.0, 2.0, 2.0, 1.0]]]
    """
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 2-d convolution, as torch.nn.functional.conv_transpose2d.

    Example:
        >>> x = kael.ones(1, 4, 7, 7)
        >>> kael.nn.functional.conv_transpose2d(x, kael.ones(4, 2, 4, 4), stride=2,
        ...                                     padding=1).shape
        (1, 2, 14, 14)
    """
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 3-d convolution, as torch.nn.functional.conv_transpose3d.

    Example:
        >>> kael.nn.functional.conv_transpose3d(kael.ones(1, 1, 2, 2, 2),
        ...                                     kael.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 3, 3, 3)
    """
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns [N, C * kH * kW, L] summed back into an image [N, C, H, W] (unfold's adjoint),
    as torch.nn.functional.fold.

    Example:
        >>> columns = kael.nn.functional.unfold(kael.ones(1, 1, 3, 3), 2)
        >>> kael.nn.functional.fold(columns, (3, 3), 2).tolist()
        [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    _tensor(input, "fold")
    size = _sizes(output_size, 2, "fold", "output_size")
    kernel = _sizes(kernel_size, 2, "fold", "kernel_size")
    dilations = _sizes(dilation, 2, "fold", "dilation")
    pads = _sizes(padding, 2, "fold", "padding")
    strides = _sizes(stride, 2, "fold", "stride")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    if x.dim() != 3 or x.shape[1] % (kernel[0] * kernel[1]) != 0:
        raise ValueError(f"fold: expected [N, C * {kernel[0] * kernel[1]}, L], got "
                         f"{tuple(input.shape)}")
    full = [size[i] + 2 * pads[i] for i in range(2)]
    blocks = [(full[i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise ValueError(f"fold: {x.shape[2]} blocks do not tile an output of {tuple(size)} "
                         f"({blocks[0]} x {blocks[1]} do)")
    n, channels = x.shape[0], x.shape[1] // (kernel[0] * kernel[1])
    windows = x.reshape(n, channels, kernel[0], kernel[1], blocks[0], blocks[1]) \
        .permute(0, 4, 5, 1, 2, 3)
    image = _c.fold_windows(windows.contiguous(), [n, channels] + full, kernel, strides,
                            dilations)
    image = image[:, :, pads[0]:pads[0] + size[0], pads[1]:pads[1] + size[1]]
    return image if input.dim() == 3 else image.squeeze(0)


class _ConvTransposeNd(_ConvAttributes, _nn._Conv):
    _spatial = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        n, op = self._spatial, type(self).__name__
        super().__init__(n, int(in_channels), int(out_channels),
                         _sizes(kernel_size, n, op, "kernel_size"), _sizes(stride, n, op, "stride"),
                         _sizes(padding, n, op, "padding"), "", _sizes(dilation, n, op, "dilation"),
                         int(groups), bool(bias), padding_mode, device, True,
                         _sizes(output_padding, n, op, "output_padding"))
        if dtype is not None and dtype != _float32:
            self.to(dtype)

    def forward(self, input, output_size=None):
        """The transposed convolution of input (output_size picks output_padding)."""
        if output_size is None:
            return super().forward(input)
        n = self._spatial
        wanted = list(output_size)[-n:]
        padding_out = [wanted[i] - ((input.shape[-n + i] - 1) * self.stride[i] -
                                    2 * self.padding[i] +
                                    self.dilation[i] * (self.kernel_size[i] - 1) + 1)
                       for i in range(n)]
        return _conv_transpose(n, input, self.weight, self.bias, self.stride, self.padding,
                               padding_out, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """A transposed 1-d convolution layer, as torch.nn.ConvTranspose1d.

    Example:
        >>> kael.nn.ConvTranspose1d(4, 2, 3, stride=2)(kael.ones(1, 4, 5)).shape
        (1, 2, 11)
    """
    _spatial = 1


class ConvTranspose2d(_ConvTransposeNd):
    """A transposed 2-d convolution layer (DCGAN's upsampling), as torch.nn.ConvTranspose2d:
    weight [in, out / groups, kH, kW].

    Example:
        >>> layer = kael.nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1, bias=False)
        >>> layer(kael.ones(2, 16, 4, 4)).shape
        (2, 8, 8, 8)
    """
    _spatial = 2


class ConvTranspose3d(_ConvTransposeNd):
    """A transposed 3-d convolution layer, as torch.nn.ConvTranspose3d.

    Example:
        >>> kael.nn.ConvTranspose3d(2, 1, 2)(kael.ones(1, 2, 2, 2, 2)).shape
        (1, 1, 3, 3, 3)
    """
    _spatial = 3


class Fold(_nn.Module):
    """F.fold as a layer, as torch.nn.Fold.

    Example:
        >>> kael.nn.Fold((3, 3), 2)(kael.ones(1, 4, 4)).shape
        (1, 1, 3, 3)
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        """The columns summed back into images."""
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

