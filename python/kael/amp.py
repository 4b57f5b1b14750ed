"""Mixed precision, as torch.amp: autocast regions, in which matmul, linear and attention run in
bfloat16 or float16 while softmax, log_softmax, layer_norm, cross_entropy, sum and mse_loss run in
float32 (kael/autocast.h), and GradScaler, float16's dynamic loss scaling."""
import functools

from . import _kael


class autocast:
    """A region (a with-block, or a decorated function) in which the ops on tensors of
    device_type run in mixed precision, as torch.autocast: matmul, linear and
    scaled_dot_product_attention in dtype; softmax, log_softmax, layer_norm, cross_entropy,
    mse_loss and l1-type losses, sum, prod, cumsum, cumprod, logsumexp and norms in float32
    (torch's cuda lists, on every device type). Parameters stay float32: their casts are made
    once per region and recorded by autograd, so their gradients are float32. Call backward()
    after the region.

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


def _scaled(outputs, scale):
    if isinstance(outputs, _kael.Tensor):
        return outputs * scale
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(_scaled(output, scale) for output in outputs)
    raise TypeError(f"GradScaler.scale: expected a tensor or a list or tuple of them, "
                    f"got {type(outputs).__name__}")


class GradScaler:
    """Dynamic loss scaling for float16 training, as torch.amp.GradScaler: scale(loss) before
    backward, then step(optimizer), which unscales the gradients, checks them for inf and NaN on
    their devices (one host read per step) and skips the step when any is found, then update(),
    which halves the scale after a skipped step and doubles it after growth_interval good ones.

    Args:
        device (str): accepted for PyTorch's signature (the checks run where the gradients are).
        init_scale (float), growth_factor (float), backoff_factor (float),
        growth_interval (int): as PyTorch's, with its defaults.
        enabled (bool): False makes every method a pass-through.

    Example:
        >>> w = kael.tensor([1.0, 2.0], requires_grad=True)
        >>> optimizer = kael.optim.SGD([w], lr=0.1)
        >>> scaler = kael.amp.GradScaler()
        >>> scaler.scale((w * w).sum()).backward()
        >>> scaler.step(optimizer)
        >>> scaler.update()
        >>> [round(x, 4) for x in w.tolist()]
        [0.8, 1.6]
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        if growth_factor <= 1.0 or not 0.0 < backoff_factor < 1.0 or growth_interval < 1:
            raise ValueError("GradScaler: growth_factor must be above 1, backoff_factor in "
                             "(0, 1) and growth_interval at least 1")
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._optimizers = {}  # id(optimizer) -> {"found_inf": tensor or None, "stepped": bool}

    def is_enabled(self):
        """True unless made with enabled=False."""
        return self._enabled

    def get_scale(self):
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """outputs (a tensor, or a list or tuple of them) times the scale."""
        return _scaled(outputs, self._scale) if self._enabled else outputs

    def _state(self, optimizer):
        return self._optimizers.setdefault(id(optimizer), {"found_inf": None, "unscaled": False,
                                                           "stepped": False})

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale, in place, and notes on their devices
        whether any is inf or NaN; once per optimizer between updates (RuntimeError twice)."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        inverse = 1.0 / self._scale
        found = {}
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                grad = parameter.grad
                if grad is None:
                    continue
                grad.mul_(inverse)
                bad = _kael.logical_not(_kael.isfinite(grad)).any()
                key = str(grad.device)
                found[key] = bad if key not in found else _kael.logical_or(found[key], bad)
        state["found_inf"] = found
        state["unscaled"] = True

    def step(self, optimizer, *args, **kwargs):
        """unscale_(optimizer) if not done yet, then optimizer.step(*args, **kwargs) unless a
        gradient is inf or NaN; returns what optimizer.step returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._state(optimizer)
        if state["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        if not state["unscaled"]:
            self.unscale_(optimizer)
        state["stepped"] = True
        state["skipped"] = any(bool(flag.item()) for flag in state["found_inf"].values())
        return None if state["skipped"] else optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """The scale for the next iteration: new_scale if given; else backoff_factor times it
        after a skipped step, growth_factor times it after growth_interval steps in a row."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, _kael.Tensor)
                                else new_scale)
            self._growth_tracker = 0
        elif any(state.get("skipped") for state in self._optimizers.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._optimizers.clear()

    def state_dict(self):
        """The scale and the growth state, as PyTorch's keys."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        """Restores what state_dict returned."""
        if not state_dict:
            raise RuntimeError("GradScaler.load_state_dict: the state_dict is empty (it came "
                               "from a disabled scaler)")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
