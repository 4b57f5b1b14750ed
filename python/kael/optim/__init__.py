"""kael.optim: optimizers that update parameters in place (SGD, Adam, AdamW)."""
from .._kael import _optim

Optimizer = _optim.Optimizer
SGD = _optim.SGD
Adam = _optim.Adam
AdamW = _optim.AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
