"""Mixed precision, as torch.amp: autocast regions, in which matmul, linear and attention run in
bfloat16 or float16 while softmax, log_softmax, layer_norm, cross_entropy, sum and mse_loss run in
float32 (kael/autocast.h)."""
import functools

from . import _kael


class autocast:
    """A region (a with-block, or a decorated function) in which the ops on tensors of
    device_type run in mixed precision, as torch.autocast: matmul, linear and
    scaled_dot_product_attention in dtype; softmax, log_softmax, layer_norm, cross_entropy, sum
    and mse_loss in float32. Parameters stay float32: their casts are made once per region and
    recorded by autograd, so their gradients are float32. Call backward() after the region.

    Args:
        device_type (str): 'cpu' or 'cuda' (a device's type; 'cuda:0' reads as 'cuda').
        dtype (kael.dtype, optional): kael.bfloat16 or kael.float16; bfloat16 on cpu and
            float16 elsewhere by default, as PyTorch.
        enabled (bool): False makes a region without autocast (inside another one, too).
        cache_enabled (bool): accepted for PyTorch's signature; casts are always cached.

    Example:
        >>> model = kael.nn.Linear(4, 2)
        >>> with kael.autocast("cpu", dtype=kael.bfloat16):
        ...     out = model(kael.ones(3, 4))
        >>> out.dtype
        kael.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=True):
        if not isinstance(device_type, str):
            raise TypeError(f"autocast: device_type must be a str such as 'cuda' or 'cpu', "
                            f"not {type(device_type).__name__}")
        self.device_type = device_type.split(":")[0]
        if dtype is None:
            dtype = _kael.bfloat16 if self.device_type == "cpu" else _kael.float16
        if enabled and dtype not in (_kael.bfloat16, _kael.float16):
            raise ValueError(f"autocast: dtype must be kael.bfloat16 or kael.float16, "
                             f"got {dtype!r}")
        self.fast_dtype = dtype
        self.enabled = bool(enabled)
        self._regions = []

    def __enter__(self):
        self._regions.append(_kael._autocast_region(self.device_type, self.fast_dtype,
                                                    self.enabled))
        return self

    def __exit__(self, *exception):
        self._regions.pop().close()
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def in_region(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return function(*args, **kwargs)
        return in_region


def is_autocast_enabled(device_type="cuda"):
    """True inside an autocast region for device_type on this thread.

    Example:
        >>> with kael.autocast("cpu"):
        ...     kael.amp.is_autocast_enabled("cpu")
        True
    """
    return _kael._autocast_enabled(device_type)
