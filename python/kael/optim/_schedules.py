"""The schedules computed from the epoch by a closed or recursive formula, as PyTorch computes
them (kael.optim.lr_scheduler): LambdaLR, StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR,
LinearLR and SequentialLR."""
import math
import types
from bisect import bisect_right

from ._scheduler_base import LRScheduler, _per_group


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch), one function or one per group. Only callable objects'
    attributes are saved in state_dict (functions and lambdas are not), as in PyTorch.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.9 ** epoch)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [0.9]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        if isinstance(lr_lambda, (list, tuple)) and len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                             f"{len(lr_lambda)}")
        self.lr_lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiplies the learning rate by gamma every step_size epochs.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [0.7]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the learning rate by gamma at each milestone epoch (a repeated milestone
    multiplies once per repetition).

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.MultiStepLR(optimizer, [1, 3], gamma=0.5)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        times = self.milestones.count(self.last_epoch)
        if times == 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma ** times for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        passed = bisect_right(self.milestones, self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the learning rate by gamma every epoch.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
        >>> scheduler.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from base_lr to eta_min over T_max epochs (SGDR without restarts),
    computed recursively from the current lr as PyTorch does.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=2)
        >>> scheduler.step()
        >>> [round(lr, 6) for lr in scheduler.get_last_lr()]
        [0.5]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups, t, period = self.optimizer.param_groups, self.last_epoch, self.T_max
        if t == 0:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and t > 0:
            return [self.eta_min + (base - self.eta_min) * (1 + math.cos(t * math.pi / period)) / 2
                    for base in self.base_lrs]
        if (t - 1 - period) % (2 * period) == 0:
            return [group["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / period)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales the learning rate linearly from start_factor to end_factor times base_lr over
    total_iters epochs (a warm-up), then keeps it.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = kael.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.5,
        ...                                              total_iters=2)
        >>> scheduler.get_last_lr(), (scheduler.step(), scheduler.get_last_lr())[1]
        ([0.5], [0.75])
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if not 0 < start_factor <= 1.0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if not 0 <= end_factor <= 1.0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (self.total_iters * self.start_factor
                                 + (self.last_epoch - 1) * change)
        return [group["lr"] * factor for group in groups]

    def _closed_form_lr(self):
        change = self.end_factor - self.start_factor
        return [base * (self.start_factor + change * min(self.total_iters, self.last_epoch)
                        / self.total_iters) for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """Runs schedulers one after another, switching at the milestone epochs (e.g. a LinearLR
    warm-up, then CosineAnnealingLR); the next scheduler restarts from epoch 0 at its milestone.

    Example:
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> warmup = kael.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.5, total_iters=1)
        >>> decay = kael.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
        >>> scheduler = kael.optim.lr_scheduler.SequentialLR(optimizer, [warmup, decay],
        ...                                                  milestones=[2])
        >>> lrs = [scheduler.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     scheduler.step()
        ...     lrs.append(scheduler.get_last_lr()[0])
        >>> lrs
        [0.5, 1.0, 1.0, 0.5]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        for index, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError("Sequential Schedulers expects all schedulers to belong to the "
                                 f"same optimizer, but got schedulers at index {index} to be "
                                 "different than the optimizer passed in.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:  # undo the step each made when it was built
            scheduler.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._restart()
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, state in zip(self._schedulers, saved):
            scheduler.load_state_dict(state)
