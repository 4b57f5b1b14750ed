"""LRScheduler, the base every kael.optim.lr_scheduler schedule derives from, and the
per-group argument helper they share."""
from .optimizer import Optimizer


def _per_group(name, optimizer, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"expected {len(optimizer.param_groups)} values for {name}, "
                             f"got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class: sets each group's "initial_lr" (base_lrs), counts epochs in last_epoch and,
    on step(), writes get_lr() into the groups. state_dict() holds everything but the optimizer.

    Example:
        >>> class Halving(kael.optim.lr_scheduler.LRScheduler):
        ...     def get_lr(self):
        ...         return [base / 2 ** self.last_epoch for base in self.base_lrs]
        >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
        >>> scheduler = Halving(optimizer)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self.step()

    def get_lr(self):
        """The learning rates of the groups at last_epoch; subclasses implement it.

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=0.1)
            >>> scheduler = kael.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5 ** epoch)
            >>> scheduler.last_epoch = 2
            >>> scheduler.get_lr()
            [0.025]
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def get_last_lr(self):
        """The learning rates the last step() set, one per group.

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=0.1)
            >>> kael.optim.lr_scheduler.StepLR(optimizer, step_size=1).get_last_lr()
            [0.1]
        """
        return self._last_lr

    def step(self):
        """Advances one epoch and writes the new learning rates into the optimizer's groups.

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> scheduler = kael.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
            >>> scheduler.step()
            >>> optimizer.param_groups[0]["lr"]
            0.5
        """
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _restart(self):
        """PyTorch's scheduler.step(0) (SequentialLR at a milestone): epoch 0 again, through the
        closed form where the scheduler has one."""
        self._step_count += 1
        self.last_epoch = 0
        closed = getattr(self, "_closed_form_lr", None)
        values = closed() if closed else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Every attribute but the optimizer (save the optimizer's state_dict beside it).

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> kael.optim.lr_scheduler.StepLR(optimizer, step_size=3).state_dict()["step_size"]
            3
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restores a state_dict() (the optimizer's own state is loaded separately).

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=1.0)
            >>> scheduler = kael.optim.lr_scheduler.StepLR(optimizer, step_size=3)
            >>> scheduler.load_state_dict({**scheduler.state_dict(), "last_epoch": 7})
            >>> scheduler.last_epoch
            7
        """
        self.__dict__.update(state_dict)
