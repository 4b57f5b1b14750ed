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
"""
from ._kael import _nn

Module = _nn.Module
Linear = _nn.Linear
Embedding = _nn.Embedding
LayerNorm = _nn.LayerNorm
ReLU = _nn.ReLU
GELU = _nn.GELU
Sigmoid = _nn.Sigmoid
Tanh = _nn.Tanh
Dropout = _nn.Dropout
GPT = _nn.GPT
GPTConfig = _nn.GPTConfig


def Parameter(tensor):
    """A leaf that requires grad, sharing tensor's memory: registered when assigned to a Module."""
    return tensor.detach().requires_grad_(True)


class Sequential(Module):
    """Runs its modules in order; their parameters are named "0.weight", "1.bias", ..."""

    def __init__(self, *modules):
        super().__init__()
        self._layers = list(modules)
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

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


__all__ = ["Module", "Linear", "Embedding", "LayerNorm", "ReLU", "GELU", "Sigmoid", "Tanh",
           "Dropout", "Sequential", "Parameter", "GPT", "GPTConfig"]
