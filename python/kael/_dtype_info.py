"""kael.finfo: the numerical limits of a floating dtype, as torch.finfo."""
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
