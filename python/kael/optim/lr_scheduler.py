"""kael.optim.lr_scheduler: learning-rate schedules that rewrite optimizer.param_groups[i]["lr"],
value for value as torch.optim.lr_scheduler computes them (the same recursive formulas).

Example:
    >>> w = kael.ones(2, requires_grad=True)
    >>> optimizer = kael.optim.SGD([w], lr=1.0)
    >>> scheduler = kael.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for epoch in range(5):
    ...     optimizer.step()
    ...     scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
"""

from ._one_cycle_and_plateau import OneCycleLR, ReduceLROnPlateau
from ._scheduler_base import LRScheduler
from ._schedules import (CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, MultiStepLR,
                         SequentialLR, StepLR)

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "LinearLR", "SequentialLR", "OneCycleLR", "ReduceLROnPlateau"]

# Defined in the private files above by concern; named here, where users import them from.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name

_LRScheduler = LRScheduler  # PyTorch 1.x's name
