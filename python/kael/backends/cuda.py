"""Settings of the cuda plugin's kernels, as torch.backends.cuda.

    kael.backends.cuda.matmul.allow_tf32 = True

is kael.set_float32_matmul_precision("high"); False is "highest".
"""
from .. import _kael


class MatmulSettings:
    """How the cuda plugin computes float32 matmul and linear (kael.backends.cuda.matmul).

    Example:
        >>> kael.backends.cuda.matmul.allow_tf32 = True
        >>> kael.get_float32_matmul_precision()
        'high'
        >>> kael.backends.cuda.matmul.allow_tf32 = False
    """

    __slots__ = ()

    @property
    def allow_tf32(self):
        """Whether float32 products may round their inputs to TF32 (a 10-bit mantissa) on
        tensor cores: True unless the float32 matmul precision is "highest" (the default).
        Setting True sets the precision "high", False "highest", as PyTorch does.

        Example:
            >>> kael.backends.cuda.matmul.allow_tf32
            False
        """
        return _kael.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, allowed):
        _kael.set_float32_matmul_precision("high" if allowed else "highest")

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            raise AttributeError(f"kael.backends.cuda.matmul has no setting {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"kael.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = MatmulSettings()
