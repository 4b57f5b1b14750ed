"""torch.nn's batch, group and instance normalisation layers with PyTorch's signatures,
attributes, buffers and state_dict keys: BatchNorm1d/2d/3d, GroupNorm, InstanceNorm1d/2d/3d.
BatchNorm and GroupNorm are kael/nn_conv.h's C++ modules underneath."""
from .._kael import _nn
from .._kael import float32 as _float32
from . import _conv_functional as F


class _BatchNormNd(_nn._BatchNorm):
    _spatial = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__(self._spatial, int(num_features), float(eps), momentum, bool(affine),
                         bool(track_running_stats), device)
        if dtype is not None and dtype != _float32:
            self.to(dtype)

    affine = property(lambda self: self.weight is not None, doc="Whether it scales and shifts.")
    track_running_stats = property(lambda self: "running_mean" in dict(self.named_buffers()),
                                   doc="Whether it keeps running statistics.")


class BatchNorm1d(_BatchNormNd):
    """Batch normalisation over [N, C] or [N, C, L], as torch.nn.BatchNorm1d.

    Example:
        >>> bn = kael.nn.BatchNorm1d(3)
        >>> bn(kael.randn(4, 3)).shape, sorted(bn.state_dict())
        ((4, 3), ['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight'])
    """
    _spatial = 1


class BatchNorm2d(_BatchNormNd):
    """Batch normalisation over [N, C, H, W], as torch.nn.BatchNorm2d: batch statistics in
    training (moving running_mean and running_var by momentum), the running ones in eval.

    Example:
        >>> bn = kael.nn.BatchNorm2d(8)
        >>> bn(kael.randn(2, 8, 5, 5)).shape
        (2, 8, 5, 5)
        >>> bn
        BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
    """
    _spatial = 2


class BatchNorm3d(_BatchNormNd):
    """Batch normalisation over [N, C, D, H, W].

    Example:
        >>> kael.nn.BatchNorm3d(2)(kael.randn(2, 2, 2, 2, 2)).shape
        (2, 2, 2, 2, 2)
    """
    _spatial = 3


class GroupNorm(_nn._GroupNorm):
    """Normalises groups of channels of each sample, as torch.nn.GroupNorm.

    Example:
        >>> kael.nn.GroupNorm(2, 4)(kael.randn(3, 4, 5)).shape
        (3, 4, 5)
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__(int(num_groups), int(num_channels), float(eps), bool(affine), device)
        self.num_channels, self.affine = int(num_channels), bool(affine)
        if dtype is not None and dtype != _float32:
            self.to(dtype)


class _InstanceNormNd(_nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        import kael  # the factories, at call time (kael imports this module)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = kael.nn.Parameter(kael.ones(num_features, device=device))
            self.bias = kael.nn.Parameter(kael.zeros(num_features, device=device))
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", kael.zeros(num_features, device=device))
            self.register_buffer("running_var", kael.ones(num_features, device=device))

    def forward(self, input):
        """Each sample's channels normalised over their positions."""
        tracked = self.track_running_stats
        return F.instance_norm(input, self.running_mean if tracked else None,
                               self.running_var if tracked else None, self.weight, self.bias,
                               self.training or not tracked, self.momentum, self.eps)

    def extra_repr(self):
        """PyTorch's printout of the options."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNormNd):
    """Instance normalisation over [N, C, L], as torch.nn.InstanceNorm1d.

    Example:
        >>> kael.nn.InstanceNorm1d(3)(kael.randn(2, 3, 5)).shape
        (2, 3, 5)
    """


class InstanceNorm2d(_InstanceNormNd):
    """Instance normalisation over [N, C, H, W], as torch.nn.InstanceNorm2d.

    Example:
        >>> kael.nn.InstanceNorm2d(3)(kael.randn(2, 3, 4, 4)).shape
        (2, 3, 4, 4)
    """


class InstanceNorm3d(_InstanceNormNd):
    """Instance normalisation over [N, C, D, H, W].

    Example:
        >>> kael.nn.InstanceNorm3d(1)(kael.randn(2, 1, 2, 2, 2)).shape
        (2, 1, 2, 2, 2)
    """
