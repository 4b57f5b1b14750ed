"""The loss modules of kael.nn: each holds PyTorch's options and calls kael.nn.functional
(class weights are buffers, so .to() moves them and state_dict() saves them)."""
from .._kael import _nn
from . import functional as F

Module = _nn.Module


def _check_reduction(reduction, name):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{name}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return reduction


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction, type(self).__name__)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        if weight is None:
            self.weight = None
        else:
            self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """The cross entropy of logits and class targets, as torch.nn.CrossEntropyLoss: see
    kael.nn.functional.cross_entropy for the shapes and options.

    Example:
        >>> loss = kael.nn.CrossEntropyLoss(label_smoothing=0.1)
        >>> loss(kael.zeros(2, 3), kael.tensor([0, 2])).item() > 0
        True
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        """The loss of logits input and target (class indices or probabilities)."""
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood of log-probabilities, as torch.nn.NLLLoss (see
    kael.nn.functional.nll_loss).

    Example:
        >>> loss = kael.nn.NLLLoss()
        >>> loss(kael.tensor([[-0.5, -1.0]]), kael.tensor([1])).item()
        1.0
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        """The loss of log-probabilities input and class indices target."""
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(_Loss):
    """The mean (or sum, or elementwise) squared error, as torch.nn.MSELoss.

    Example:
        >>> kael.nn.MSELoss()(kael.tensor([1.0, 3.0]), kael.zeros(2)).item()
        5.0
    """

    def forward(self, input, target):
        """(input - target)^2, reduced."""
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """The mean (or sum, or elementwise) absolute error, as torch.nn.L1Loss.

    Example:
        >>> kael.nn.L1Loss(reduction="sum")(kael.tensor([1.0, -3.0]), kael.zeros(2)).item()
        4.0
    """

    def forward(self, input, target):
        """|input - target|, reduced."""
        return F.l1_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities, as torch.nn.BCELoss (see
    kael.nn.functional.binary_cross_entropy).

    Example:
        >>> loss = kael.nn.BCELoss()(kael.tensor([0.5]), kael.tensor([1.0]))
        >>> round(loss.item(), 4)
        0.6931
    """

    def forward(self, input, target):
        """The loss of probabilities input and targets in [0, 1]."""
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross entropy of logits, computed stably, as torch.nn.BCEWithLogitsLoss;
    pos_weight [C] scales the positive term per class.

    Example:
        >>> loss = kael.nn.BCEWithLogitsLoss(pos_weight=kael.tensor([2.0]))
        >>> round(loss(kael.zeros(1, 1), kael.ones(1, 1)).item(), 4)
        1.3863
    """

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(weight, reduction)
        if pos_weight is None:
            self.pos_weight = None
        else:
            self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        """The loss of logits input and targets in [0, 1]."""
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss"]
