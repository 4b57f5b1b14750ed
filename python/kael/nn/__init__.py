"""kael.nn: Module (subclass it in Python), the built-in layers and GPT.

Attributes of a Module subclass that are modules, or leaf tensors requiring grad (see
Parameter), are registered when assigned, so parameters(), to(), save() and the optimizers see
them:

    class Net(kael.nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = kael.nn.Linear(4, 8)
            self.scale = kael.nn.Parameter(kael.ones(8))

        def forward(self, x):
            return kael.relu(self.hidden(x)) * self.scale

A plain list or dict of modules cannot be assigned (its modules would not be registered): use
ModuleList or ModuleDict. `del module.name` unregisters a parameter or submodule.
"""
import collections

from .. import _kael
from .._kael import Tensor as _Tensor
from .._kael import _nn
from . import functional, init  # noqa: F401
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss,  # noqa: F401
                   NLLLoss)

Module = _nn.Module
Linear = _nn.Linear
Embedding = _nn.Embedding
LayerNorm = _nn.LayerNorm
ReLU = _nn.ReLU
GELU = _nn.GELU
Sigmoid = _nn.Sigmoid
Tanh = _nn.Tanh
Dropout = _nn.Dropout
SiLU = _nn.SiLU
Identity = _nn.Identity
Flatten = _nn.Flatten
Unflatten = _nn.Unflatten
Softmax = _nn.Softmax
LogSoftmax = _nn.LogSoftmax
MultiheadAttention = _nn.MultiheadAttention
GPT = _nn.GPT
GPTConfig = _nn.GPTConfig


class _ParameterType(type):
    # kael's parameters are tensors: a leaf that requires grad is one (what Module registers).
    def __instancecheck__(cls, instance):
        return isinstance(instance, _Tensor) and instance.is_leaf and instance.requires_grad


class Parameter(metaclass=_ParameterType):
    """A leaf that requires grad, sharing data's memory: registered when assigned to a Module.
    Parameter(data=None, requires_grad=True) as PyTorch's; isinstance(t, kael.nn.Parameter) is
    True for every leaf tensor that requires grad (kael's parameters are plain tensors).

    Example:
        >>> p = kael.nn.Parameter(kael.zeros(3))
        >>> p.requires_grad, isinstance(p, kael.nn.Parameter)
        (True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _kael.empty(0)
        if not isinstance(data, _Tensor):
            raise TypeError(f"Parameter: data must be a Tensor, not {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))


class Sequential(Module):
    """Runs its modules in order; their parameters are named "0.weight", "1.bias", ...

    Example:
        >>> model = kael.nn.Sequential(kael.nn.Linear(4, 2), kael.nn.ReLU())
        >>> model(kael.ones(3, 4)).shape
        (3, 2)
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict):
            named = list(modules[0].items())  # Sequential(OrderedDict(name=module, ...))
        else:
            named = [(str(index), module) for index, module in enumerate(modules)]
        object.__setattr__(self, "_layers", [module for _, module in named])
        for name, module in named:  # registered one by one
            setattr(self, name, module)

    def forward(self, input):
        for module in self._layers:
            input = module(input)
        return input

    def __getitem__(self, index):
        return self._layers[index]

    def __len__(self):
        return len(self._layers)

    def __iter__(self):
        return iter(self._layers)


def _check_module(value, container):
    if not isinstance(value, Module):
        raise TypeError(f"{container} holds modules only, got {type(value).__name__}")
    return value


class ModuleList(Module):
    """A list of registered modules; their parameters are named "0.weight", "1.bias", ...

    Example:
        >>> layers = kael.nn.ModuleList([kael.nn.Linear(2, 2) for _ in range(3)])
        >>> len(layers.parameters())
        6
    """

    def __init__(self, modules=()):
        super().__init__()
        object.__setattr__(self, "_items", [])
        self.extend(modules)

    def append(self, module):
        """Adds module at the end (registered as str(len(self))); returns self."""
        self._register_child(str(len(self._items)), _check_module(module, "ModuleList"))
        self._items.append(module)
        return self

    def extend(self, modules):
        """Appends every module of an iterable; returns self."""
        for module in modules:
            self.append(module)
        return self

    def _index(self, index):
        if not isinstance(index, int):
            raise TypeError(f"ModuleList indices must be integers or slices, not "
                            f"{type(index).__name__}")
        if not -len(self._items) <= index < len(self._items):
            raise IndexError(f"ModuleList index {index} is out of range for length "
                             f"{len(self._items)}")
        return index % len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList(self._items[index])
        return self._items[self._index(index)]

    def __setitem__(self, index, module):
        index = self._index(index)
        _check_module(module, "ModuleList")
        # Re-register every later child too, so parameter order stays the list's order.
        tail = [module] + self._items[index + 1:]
        for position in range(index, len(self._items)):
            self._unregister_child(str(position))
        del self._items[index:]
        self.extend(tail)

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def forward(self, input):
        raise TypeError("ModuleList has no forward; call its modules")


class ModuleDict(Module):
    """A dict of registered modules (insertion order); parameters are named "<key>.weight".

    Example:
        >>> heads = kael.nn.ModuleDict({"a": kael.nn.Linear(2, 1)})
        >>> [name for name, _ in heads.named_parameters()]
        ['a.weight', 'a.bias']
    """

    def __init__(self, modules=None):
        super().__init__()
        object.__setattr__(self, "_items", {})
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key, module):
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict keys must be str, got {type(key).__name__}")
        _check_module(module, "ModuleDict")
        if key in self._items:
            del self[key]
        self._register_child(key, module)
        self._items[key] = module

    def __getitem__(self, key):
        return self._items[key]

    def __getattr__(self, name):
        # Reached only when normal lookup fails: the dict's modules read as attributes too
        # (self.transformer.wte), as in PyTorch.
        items = self.__dict__.get("_items", {})
        if name in items:
            return items[name]
        raise AttributeError(f"'ModuleDict' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if isinstance(value, Module) and not name.startswith("_"):
            self[name] = value  # an attribute module joins the dict, as in PyTorch
        else:
            super().__setattr__(name, value)

    def __delitem__(self, key):
        del self._items[key]
        self._unregister_child(key)

    def update(self, modules):
        """Adds (key, module) pairs from a dict or an iterable of pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module

    def __contains__(self, key):
        return key in self._items

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def keys(self):
        """The keys, in insertion order."""
        return self._items.keys()

    def values(self):
        """The modules, in insertion order."""
        return self._items.values()

    def items(self):
        """(key, module) pairs, in insertion order."""
        return self._items.items()

    def forward(self, input):
        raise TypeError("ModuleDict has no forward; call its modules")


__all__ = ["Module", "Linear", "Embedding", "LayerNorm", "ReLU", "GELU", "Sigmoid", "Tanh",
           "Dropout", "SiLU", "Identity", "Flatten", "Unflatten", "Softmax", "LogSoftmax",
           "MultiheadAttention", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss",
           "BCEWithLogitsLoss", "Sequential", "ModuleList", "ModuleDict", "Parameter", "GPT",
           "GPTConfig", "LeakyReLU", "ELU", "Softplus", "Mish", "Hardswish", "CosineSimilarity",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss"]

from . import utils  # noqa: E402,F401  (kael.nn.utils: gradient clipping)
from . import parallel  # noqa: E402,F401  (DistributedDataParallel)
from . import _module_api  # noqa: E402
from ._composed_modules import (CosineSimilarity, ELU, Hardswish, HuberLoss,  # noqa: E402,F401
                            KLDivLoss, LeakyReLU, Mish, SmoothL1Loss, Softplus)
from ._conv_layers import (AdaptiveAvgPool1d, AdaptiveAvgPool2d,  # noqa: E402,F401
                           AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                           AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, Conv1d, Conv2d,
                           Conv3d, MaxPool1d, MaxPool2d, MaxPool3d, PixelShuffle, PixelUnshuffle,
                           Unfold, Upsample)
from ._norm_layers import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm,  # noqa: E402,F401
                           InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)
from ._conv_transpose import (ConvTranspose1d, ConvTranspose2d,  # noqa: E402,F401
                              ConvTranspose3d, Fold)
from ._rnn_layers import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNCell  # noqa: E402,F401

_module_api.install()

from ._transformer_layers import (Transformer, TransformerDecoder,  # noqa: E402,F401
                                  TransformerDecoderLayer, TransformerEncoder,
                                  TransformerEncoderLayer)
