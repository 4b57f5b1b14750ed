"""torch.nn.functional's activations, normalization and losses that kael composes from its
ops (autograd follows the composition): leaky_relu, elu, softplus, mish, hardswish, normalize,
cosine_similarity, smooth_l1_loss, huber_loss and kl_div, with PyTorch's signatures."""
from .. import _kael, linalg
from .._kael import Tensor


def _tensor(value, op, name="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, not {type(value).__name__}")
    return value


def _number(value, op, name):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}: {name} must be a number, not {type(value).__name__}")
    return float(value)


def _reduce(loss, reduction, op):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x >= 0, negative_slope * x below, as torch.nn.functional.leaky_relu.

    Example:
        >>> kael.nn.functional.leaky_relu(kael.tensor([-2.0, 3.0]), 0.1).tolist()
        [-0.20000000298023224, 3.0]
    """
    _tensor(input, "leaky_relu")
    slope = _number(negative_slope, "leaky_relu", "negative_slope")
    return _kael.where(input >= 0, input, input * slope)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, alpha * (exp(x) - 1) below, as torch.nn.functional.elu.

    Example:
        >>> [round(v, 4) for v in kael.nn.functional.elu(kael.tensor([-1.0, 2.0])).tolist()]
        [-0.6321, 2.0]
    """
    _tensor(input, "elu")
    alpha = _number(alpha, "elu", "alpha")
    return _kael.where(input > 0, input, _kael.expm1(_kael.clamp(input, max=0.0)) * alpha)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, x itself where beta x > threshold, as PyTorch's.

    Example:
        >>> [round(v, 4) for v in kael.nn.functional.softplus(kael.tensor([0.0, 30.0])).tolist()]
        [0.6931, 30.0]
    """
    _tensor(input, "softplus")
    beta = _number(beta, "softplus", "beta")
    threshold = _number(threshold, "softplus", "threshold")
    scaled = input * beta
    # log1p(exp(-|z|)) + max(z, 0): never exponentiates a large positive number
    smooth = (_kael.log1p(_kael.exp(-_kael.abs(scaled))) + _kael.relu(scaled)) / beta
    return _kael.where(scaled > threshold, input, smooth)


def mish(input, inplace=False):
    """x * tanh(softplus(x)), as torch.nn.functional.mish.

    Example:
        >>> round(kael.nn.functional.mish(kael.tensor([1.0])).item(), 4)
        0.8651
    """
    return _tensor(input, "mish") * _kael.tanh(softplus(input))


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6, as torch.nn.functional.hardswish.

    Example:
        >>> kael.nn.functional.hardswish(kael.tensor([-4.0, 0.0, 4.0])).tolist()
        [-0.0, 0.0, 4.0]
    """
    _tensor(input, "hardswish")
    return input * _kael.clamp(input + 3.0, 0.0, 6.0) / 6.0


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps), as torch.nn.functional.normalize.

    Example:
        >>> kael.nn.functional.normalize(kael.tensor([[3.0, 4.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    _tensor(input, "normalize")
    norm = linalg.vector_norm(input, _number(p, "normalize", "p"), dim=dim, keepdim=True)
    return input / _kael.clamp(norm, min=_number(eps, "normalize", "eps"))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / max(||x1|| ||x2||, eps) over dim (broadcast), as PyTorch's.

    Example:
        >>> kael.nn.functional.cosine_similarity(kael.tensor([[1.0, 0.0]]),
        ...                                      kael.tensor([[1.0, 1.0]])).tolist()
        [0.7071067690849304]
    """
    _tensor(x1, "cosine_similarity", "x1"), _tensor(x2, "cosine_similarity", "x2")
    eps = _number(eps, "cosine_similarity", "eps")
    dot = (x1 * x2).sum(dim)
    norms = _kael.sqrt((x1 * x1).sum(dim)) * _kael.sqrt((x2 * x2).sum(dim))
    return dot / _kael.clamp(norms, min=eps)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target), reduced,
    as torch.nn.functional.smooth_l1_loss.

    Example:
        >>> kael.nn.functional.smooth_l1_loss(kael.tensor([0.5, 3.0]), kael.zeros(2)).item()
        1.3125
    """
    _tensor(input, "smooth_l1_loss"), _tensor(target, "smooth_l1_loss", "target")
    beta = _number(beta, "smooth_l1_loss", "beta")
    d = _kael.abs(input - target)
    loss = d - 0.5 * beta if beta == 0 else _kael.where(d < beta, 0.5 * d * d / beta,
                                                          d - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere, reduced, as PyTorch's.

    Example:
        >>> kael.nn.functional.huber_loss(kael.tensor([0.5, 3.0]), kael.zeros(2)).item()
        1.3125
    """
    _tensor(input, "huber_loss"), _tensor(target, "huber_loss", "target")
    delta = _number(delta, "huber_loss", "delta")
    d = _kael.abs(input - target)
    loss = _kael.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction, "huber_loss")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log target - input) summed as reduction says (input holds log-probabilities;
    with log_target, target does too), 0 where target is 0, as torch.nn.functional.kl_div.
    "batchmean" divides the sum by the batch size.

    Example:
        >>> logp = kael.log(kael.tensor([[0.5, 0.5]]))
        >>> round(kael.nn.functional.kl_div(logp, kael.tensor([[0.25, 0.75]]),
        ...                                 reduction="batchmean").item(), 4)
        0.1308
    """
    _tensor(input, "kl_div"), _tensor(target, "kl_div", "target")
    if log_target:
        loss = _kael.exp(target) * (target - input)
    else:
        safe = _kael.where(target > 0, target, 1.0)  # log of positive targets only
        loss = _kael.where(target > 0, target * (_kael.log(safe) - input), target * 0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() > 0 else 1)
    return _reduce(loss, reduction, "kl_div")
