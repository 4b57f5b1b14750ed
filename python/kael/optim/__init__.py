"""kael.optim: optimizers that update parameters in place (SGD, Adam, AdamW, RMSprop, Adagrad,
Adadelta, LBFGS), with parameter
groups and state dicts as in PyTorch, the Optimizer base class to subclass, and lr_scheduler.

Example:
    >>> model = kael.nn.Linear(3, 1)
    >>> optimizer = kael.optim.AdamW(model.parameters(), lr=1e-3)
    >>> model(kael.ones(2, 3)).sum().backward()
    >>> optimizer.step()
    >>> optimizer.zero_grad()
"""
from . import lr_scheduler  # noqa: F401
from ._lbfgs import LBFGS
from ._adaptive_optimizers import Adadelta, Adagrad, RMSprop
from ._optimizers import SGD, Adam, AdamW
from .optimizer import Optimizer

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS"]
