"""OneCycleLR and ReduceLROnPlateau (kael.optim.lr_scheduler), as PyTorch computes them."""
import math

from ._scheduler_base import LRScheduler, _per_group
from .optimizer import Optimizer


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr rises from max_lr / div_factor to max_lr over pct_start of
    total_steps, then falls to initial_lr / final_div_factor ('cos' or 'linear' annealing),
    momentum (or Adam's beta1) cycling the other way. Step it after every batch.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = kael.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=10)
        >>> [round(lr, 6) for lr in scheduler.get_last_lr()]
        [0.04]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is None and (epochs is None or steps_per_epoch is None):
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if total_steps is None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(value, int) or value <= 0:
                    raise ValueError(f"Expected positive integer {name}, but got {value}")
            total_steps = epochs * steps_per_epoch
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.optimizer = optimizer
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr",
                 "base_momentum", "max_momentum"),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, _per_group("max_lr", optimizer, max_lr)):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum with `cycle_momentum` option "
                                 "enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group, high, low in zip(groups,
                                            _per_group("max_momentum", optimizer, max_momentum),
                                            _per_group("base_momentum", optimizer, base_momentum)):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0
            for index, (end, lr_from, lr_to, m_from, m_to) in enumerate(self._schedule_phases):
                if step <= end or index == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_from], group[m_to], pct))
                    break
                start = end
        return lrs


class ReduceLROnPlateau:
    """Multiplies the learning rate by factor once the metric passed to step() has not improved
    (by threshold, 'rel' or 'abs', in mode 'min' or 'max') for patience epochs, then waits
    cooldown epochs; never below min_lr.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1)
        >>> for loss in [1.0, 1.0, 1.0]:
        ...     scheduler.step(loss)
        >>> scheduler.get_last_lr()
        [0.1]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer = optimizer
        self.factor = factor
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.patience = patience
        self.cooldown = cooldown
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.eps = eps
        self.last_epoch = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def is_better(self, a, best):
        """Whether metric a improves on best by the threshold.

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> kael.optim.lr_scheduler.ReduceLROnPlateau(optimizer).is_better(0.5, 1.0)
            True
        """
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics):
        """Records one epoch's metric (a number or one-element tensor) and reduces the learning
        rates when it has stopped improving.

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> scheduler = kael.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
            >>> scheduler.step(0.3)
            >>> scheduler.best
            0.3
        """
        current = float(metrics)
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown are ignored
        if self.num_bad_epochs > self.patience:
            for group, low in zip(self.optimizer.param_groups, self.min_lrs):
                new_lr = max(float(group["lr"]) * self.factor, low)
                if float(group["lr"]) - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        """The groups' learning rates after the last step().

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> kael.optim.lr_scheduler.ReduceLROnPlateau(optimizer).get_last_lr()
            [1.0]
        """
        return self._last_lr

    def state_dict(self):
        """Every attribute but the optimizer.

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> kael.optim.lr_scheduler.ReduceLROnPlateau(optimizer).state_dict()["patience"]
            10
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restores a state_dict().

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> scheduler = kael.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
            >>> scheduler.load_state_dict({**scheduler.state_dict(), "best": 0.5})
            >>> scheduler.best
            0.5
        """
        self.__dict__.update(state_dict)
