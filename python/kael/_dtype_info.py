"""kael.finfo and kael.iinfo: the numerical limits of a dtype, as torch.finfo and torch.iinfo."""
from . import _kael

# bits, eps, max, smallest normal, resolution (10 ** -digits) of each floating dtype.
_FLOATING = {
    _kael.float32: (32, 2.0 ** -23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-06),
    _kael.float64: (64, 2.0 ** -52, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022, 1e-15),
    _kael.bfloat16: (16, 2.0 ** -7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 0.01),
    _kael.float16: (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
}


class finfo:
    """The limits of a floating dtype (kael.float32 by default), as torch.finfo: bits, eps (the
    step above 1.0), max, min (= -max), tiny and smallest_normal (the least positive normal
    value), resolution and dtype.

    Example:
        >>> kael.finfo(kael.bfloat16).eps
        0.0078125
        >>> kael.finfo(kael.float16).max
        65504.0
    """

    def __init__(self, type=None):
        dtype = _kael.float32 if type is None else type
        if dtype not in _FLOATING:
            raise TypeError(f"finfo: expected a floating dtype, got {dtype!r}")
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _FLOATING[dtype]
        self.min = -self.max
        self.tiny = self.smallest_normal
        self.dtype = repr(dtype).split(".")[1]  # 'bfloat16', as torch.finfo names it

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


# bits, min, max of each integer dtype.
_INTEGER = {
    _kael.uint8: (8, 0, 255),
    _kael.int8: (8, -2 ** 7, 2 ** 7 - 1),
    _kael.int16: (16, -2 ** 15, 2 ** 15 - 1),
    _kael.int32: (32, -2 ** 31, 2 ** 31 - 1),
    _kael.int64: (64, -2 ** 63, 2 ** 63 - 1),
}


class iinfo:
    """The limits of an integer dtype, as torch.iinfo: bits, min, max and dtype.

    Example:
        >>> kael.iinfo(kael.int8).min
        -128
        >>> kael.iinfo(kael.uint8).max
        255
    """

    def __init__(self, type):
        if type not in _INTEGER:
            raise TypeError(f"iinfo: expected an integer dtype, got {type!r}")
        self.bits, self.min, self.max = _INTEGER[type]
        self.dtype = repr(type).split(".")[1]

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
