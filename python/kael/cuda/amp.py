"""kael.cuda.amp: the older spelling of kael.amp for the cuda device type (torch.cuda.amp).

    scaler = kael.cuda.amp.GradScaler(enabled=True)
    with kael.cuda.amp.autocast(dtype=kael.bfloat16):
        ...
"""
from .. import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """kael.autocast("cuda", dtype, enabled): a region (or decorator) in mixed precision on
    cuda devices, as torch.cuda.amp.autocast (float16 unless dtype says otherwise).

    Example:
        >>> with kael.cuda.amp.autocast(dtype=kael.bfloat16):
        ...     kael.amp.is_autocast_enabled("cuda")
        True
    """

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """kael.amp.GradScaler("cuda", ...), as torch.cuda.amp.GradScaler.

    Example:
        >>> kael.cuda.amp.GradScaler(enabled=False).is_enabled()
        False
    """

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
