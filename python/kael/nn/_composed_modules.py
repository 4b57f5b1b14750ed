"""Module forms of kael.nn.functional's composed activations and losses (torch.nn.LeakyReLU,
ELU, Softplus, Mish, Hardswish, SmoothL1Loss, HuberLoss, KLDivLoss, CosineSimilarity)."""
from .._kael import _nn
from . import _composed_functional as F
from .loss import _Loss


class LeakyReLU(_nn.Module):
    """F.leaky_relu as a module.

    Example:
        >>> kael.nn.LeakyReLU(0.5)(kael.tensor([-2.0])).tolist()
        [-1.0]
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        """leaky_relu(input)."""
        return F.leaky_relu(input, self.negative_slope)


class ELU(_nn.Module):
    """F.elu as a module.

    Example:
        >>> kael.nn.ELU()(kael.tensor([2.0])).tolist()
        [2.0]
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha

    def forward(self, input):
        """elu(input)."""
        return F.elu(input, self.alpha)


class Softplus(_nn.Module):
    """F.softplus as a module.

    Example:
        >>> round(kael.nn.Softplus()(kael.tensor([0.0])).item(), 4)
        0.6931
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        """softplus(input)."""
        return F.softplus(input, self.beta, self.threshold)


class Mish(_nn.Module):
    """F.mish as a module.

    Example:
        >>> round(kael.nn.Mish()(kael.tensor([1.0])).item(), 4)
        0.8651
    """

    def forward(self, input):
        """mish(input)."""
        return F.mish(input)


class Hardswish(_nn.Module):
    """F.hardswish as a module.

    Example:
        >>> kael.nn.Hardswish()(kael.tensor([4.0])).tolist()
        [4.0]
    """

    def forward(self, input):
        """hardswish(input)."""
        return F.hardswish(input)


class CosineSimilarity(_nn.Module):
    """F.cosine_similarity over dim as a module.

    Example:
        >>> round(kael.nn.CosineSimilarity(dim=0)(kael.ones(2), kael.ones(2)).item(), 4)
        1.0
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        """cosine_similarity(x1, x2)."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class SmoothL1Loss(_Loss):
    """F.smooth_l1_loss as a module.

    Example:
        >>> kael.nn.SmoothL1Loss()(kael.tensor([0.5, 3.0]), kael.zeros(2)).item()
        1.3125
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input, target):
        """smooth_l1_loss(input, target)."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """F.huber_loss as a module.

    Example:
        >>> kael.nn.HuberLoss()(kael.tensor([0.5, 3.0]), kael.zeros(2)).item()
        1.3125
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, target):
        """huber_loss(input, target)."""
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_nn.Module):
    """F.kl_div as a module (reduction may be "batchmean").

    Example:
        >>> logp = kael.log(kael.tensor([[0.5, 0.5]]))
        >>> kael.nn.KLDivLoss(reduction="sum")(logp, kael.tensor([[0.5, 0.5]])).item()
        0.0
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        """kl_div(input, target)."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
