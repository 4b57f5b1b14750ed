"""kael: tensors with views, autograd and nn, computed by plugin device backends.

    import kael
    x = kael.tensor([[1., 2.], [3., 4.]], device="cuda")
    y = (x @ x.T).sum(dim=1)
"""
from . import _kael
from . import _entry_points

# Before anything discovers plugins: the folders of installed plugin wheels (kael-cuda, a third
# party's), found through their entry points, are searched first.
_entry_points.register(_kael.add_plugin_folder)

from ._kael import *  # noqa: E402,F401,F403  (every public binding: Tensor, ops, factories, ...)

# Internals of the bindings stay in kael._kael, out of the public namespace (as torch._C).
for _internal in ("relu_backward", "sigmoid_backward", "gelu_backward", "silu_backward",
                  "Record", "values_indices"):
    globals().pop(_internal, None)
from ._kael import Tensor, from_dlpack  # noqa: F401
from ._kael import GPT2Tokenizer, TokenTextStream  # noqa: F401
from . import autograd, nn, optim, safetensors  # noqa: F401
from . import linalg  # noqa: F401
from ._format import format_tensor as _format_tensor
from ._format import format_tensor_str as _format_tensor_str
from ._format import set_printoptions  # noqa: F401
from ._dtype_info import finfo, iinfo  # noqa: F401
from . import amp  # noqa: F401
from . import backends  # noqa: F401
from . import cuda  # noqa: F401
from . import distributed  # noqa: F401
from . import distributions  # noqa: F401
from .amp import autocast  # noqa: F401
from .autograd import enable_grad, no_grad, set_grad_enabled  # noqa: F401

__version__ = _kael.core_version()

# Printing is done in Python: numbers formatted with a common width, like PyTorch.
Tensor.__repr__ = _format_tensor
Tensor.__str__ = _format_tensor_str  # "tensor(...)", as print shows a torch tensor


def from_numpy(array):
    """A tensor sharing the memory of a numpy array (zero-copy, through DLPack).

    Example:
        >>> import numpy as np
        >>> kael.from_numpy(np.array([1.0, 2.0])).dtype
        kael.float64
    """
    return from_dlpack(array)


def _require_tensor(input, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, not {type(input).__name__}")


def _like(factory):
    def like(input, *args, dtype=None, device=None, requires_grad=False):
        _require_tensor(input, like.__name__)
        return factory(*args, input.shape, dtype=dtype or input.dtype,
                       device=device or input.device, requires_grad=requires_grad)
    like.__name__ = factory.__name__ + "_like"
    like.__doc__ = (f"kael.{factory.__name__} with the shape, dtype and device of input (each "
                    f"may be overridden).\n\nExample:\n    >>> x = kael.ones(2, 3)\n"
                    f"    >>> kael.{like.__name__}(x).shape\n    (2, 3)\n")
    return like


zeros_like = _like(_kael.zeros)
ones_like = _like(_kael.ones)
empty_like = _like(_kael.empty)
rand_like = _like(_kael.rand)
randn_like = _like(_kael.randn)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    """kael.full with the shape, dtype and device of input.

    Example:
        >>> kael.full_like(kael.zeros(2), 7.0).tolist()
        [7.0, 7.0]
    """
    _require_tensor(input, "full_like")
    return _kael.full(input.shape, fill_value, dtype=dtype or input.dtype,
                      device=device or input.device, requires_grad=requires_grad)


def plugin_warnings():
    """What to fix though kael runs: a missing or older cpu plugin, a plugin choice not honoured,
    and each broken "kael.plugins" entry point of an installed distribution (which was skipped).

    Example:
        >>> isinstance(kael.plugin_warnings(), list)
    """
    return _kael.plugin_warnings() + list(_entry_points.warnings)

from . import utils  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from . import serialization as _serialization  # noqa: E402

_serialization.install_tensor_copying()

from . import _tensor_api  # noqa: E402
from ._compile import compile  # noqa: E402,F401

_tensor_api.install(globals())
