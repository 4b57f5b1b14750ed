"""kael.distributions: the probability distributions training programs sample from and score
(torch.distributions' Categorical, Normal, Bernoulli and Uniform), written over kael's ops, so
log_prob and entropy are differentiable and rsample is reparameterized.

    dist = kael.distributions.Categorical(logits=scores)
    action = dist.sample()
    loss = -(dist.log_prob(action) * reward).mean()
"""
import math

from . import _kael
from ._dtype_info import finfo

__all__ = ["Distribution", "Categorical", "Normal", "Bernoulli", "Uniform"]


def _as_tensor(value, like=None):
    if isinstance(value, _kael.Tensor):
        return value
    if like is not None:
        return _kael.full((), float(value), dtype=like.dtype, device=like.device)
    return _kael.tensor(float(value))


def _shape(sample_shape):
    return tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)


class Distribution:
    """Base class: batch_shape, event_shape, sample(sample_shape), log_prob(value), entropy(),
    mean, variance and stddev, as torch.distributions.Distribution.

    Example:
        >>> isinstance(kael.distributions.Normal(0.0, 1.0), kael.distributions.Distribution)
        True
    """

    has_rsample = False

    @property
    def stddev(self):
        """The standard deviation (the square root of variance)."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample (no gradient) of shape sample_shape + batch_shape + event_shape."""
        from .autograd import no_grad
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._draw(
                _shape(sample_shape))

    def rsample(self, sample_shape=()):
        """A reparameterized sample (gradients flow to the parameters)."""
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sample")


class Categorical(Distribution):
    """A categorical distribution over the last dim of probs (normalized) or logits, as
    torch.distributions.Categorical.

    Example:
        >>> dist = kael.distributions.Categorical(probs=kael.tensor([0.0, 1.0, 0.0]))
        >>> dist.sample((3,)).tolist(), round(dist.log_prob(kael.tensor(1)).item(), 4)
        ([1, 1, 1], 0.0)
    """

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Categorical: give exactly one of probs or logits")
        if probs is not None:
            if not isinstance(probs, _kael.Tensor) or probs.dim() < 1:
                raise ValueError("Categorical: probs must be a tensor of at least one dim")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = _kael.log(_kael.clamp(self.probs, min=finfo(
                self.probs.dtype).tiny))
        else:
            if not isinstance(logits, _kael.Tensor) or logits.dim() < 1:
                raise ValueError("Categorical: logits must be a tensor of at least one dim")
            self.logits = logits - _kael.logsumexp(logits, -1, keepdim=True)
            self.probs = _kael.softmax(logits, -1)
        self.batch_shape = tuple(self.probs.shape[:-1])
        self.event_shape = ()

    @property
    def mean(self):
        """Undefined for a categorical distribution: NaN, as PyTorch."""
        return _kael.full(self.batch_shape, float("nan"), device=self.probs.device)

    @property
    def variance(self):
        """Undefined for a categorical distribution: NaN, as PyTorch."""
        return self.mean

    def _draw(self, shape):
        count = 1
        for size in shape:
            count *= size
        flat = self.probs.reshape(-1, self.probs.shape[-1])
        drawn = _kael.multinomial(flat, max(count, 1), replacement=True)  # [batch, count]
        drawn = drawn.T.reshape(*shape, *self.batch_shape) if count else drawn[:, :0]
        return drawn

    def log_prob(self, value):
        """log P(value) for class indices value (broadcast against batch_shape)."""
        value = value.long() if isinstance(value, _kael.Tensor) else _kael.tensor(value)
        logits = self.logits
        shape = tuple(value.shape)
        if shape != self.batch_shape:
            logits = logits.expand(*shape, self.logits.shape[-1]) if len(shape) >= len(
                self.batch_shape) else logits
        return _kael.gather(logits, -1, value.unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        """-sum p log p over the classes."""
        return -(self.probs * self.logits).sum(-1)


class Normal(Distribution):
    """A normal distribution N(loc, scale^2), elementwise, as torch.distributions.Normal.

    Example:
        >>> dist = kael.distributions.Normal(kael.tensor([0.0]), kael.tensor([2.0]))
        >>> round(dist.log_prob(kael.tensor([0.0])).item(), 4), dist.sample((5,)).shape
        (-1.6121, (5, 1))
    """

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        if not isinstance(loc, _kael.Tensor) and not isinstance(scale, _kael.Tensor):
            loc, scale = _kael.tensor(float(loc)), _kael.tensor(float(scale))
        like = loc if isinstance(loc, _kael.Tensor) else scale
        self.loc, self.scale = _as_tensor(loc, like), _as_tensor(scale, like)
        self.batch_shape = tuple((self.loc + self.scale).shape)
        self.event_shape = ()

    @property
    def mean(self):
        """The mean, loc (broadcast to batch_shape)."""
        return self.loc.expand(*self.batch_shape)

    @property
    def variance(self):
        """scale squared."""
        return (self.scale * self.scale).expand(*self.batch_shape)

    def rsample(self, sample_shape=()):
        """loc + scale * eps with eps ~ N(0, 1): differentiable in loc and scale."""
        shape = _shape(sample_shape) + self.batch_shape
        eps = _kael.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * eps

    def log_prob(self, value):
        """-(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))."""
        value = _as_tensor(value, self.loc)
        return (-((value - self.loc) ** 2) / (2 * self.scale * self.scale) -
                _kael.log(self.scale) - math.log(math.sqrt(2 * math.pi)))

    def entropy(self):
        """0.5 + 0.5 log(2 pi) + log(scale)."""
        return (0.5 + 0.5 * math.log(2 * math.pi) + _kael.log(self.scale)).expand(
            *self.batch_shape)


class Bernoulli(Distribution):
    """A Bernoulli distribution of probs (or logits), elementwise.

    Example:
        >>> kael.distributions.Bernoulli(probs=kael.tensor([1.0, 0.0])).sample().tolist()
        [1.0, 0.0]
    """

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Bernoulli: give exactly one of probs or logits")
        if probs is not None:
            self.probs = _as_tensor(probs)
            eps = finfo(self.probs.dtype).eps
            clamped = _kael.clamp(self.probs, eps, 1 - eps)
            self.logits = _kael.log(clamped) - _kael.log1p(-clamped)
        else:
            self.logits = _as_tensor(logits)
            self.probs = _kael.sigmoid(self.logits)
        self.batch_shape = tuple(self.probs.shape)
        self.event_shape = ()

    @property
    def mean(self):
        """The mean, probs (the chance of 1)."""
        return self.probs

    @property
    def variance(self):
        """probs (1 - probs)."""
        return self.probs * (1 - self.probs)

    def _draw(self, shape):
        return _kael.bernoulli(self.probs.expand(*shape, *self.batch_shape))

    def log_prob(self, value):
        """-binary_cross_entropy_with_logits(logits, value), elementwise."""
        value = _as_tensor(value, self.logits)
        return -(_kael.relu(self.logits) - self.logits * value +
                 _kael.log1p(_kael.exp(-_kael.abs(self.logits))))

    def entropy(self):
        """The binary entropy of probs."""
        return -(self.probs * _kael.log(_kael.clamp(self.probs, min=1e-30)) +
                 (1 - self.probs) * _kael.log(_kael.clamp(1 - self.probs, min=1e-30)))


class Uniform(Distribution):
    """A uniform distribution on [low, high), elementwise.

    Example:
        >>> x = kael.distributions.Uniform(2.0, 3.0).sample((100,))
        >>> bool(((x >= 2) & (x < 3)).all())
        True
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        like = low if isinstance(low, _kael.Tensor) else high if isinstance(
            high, _kael.Tensor) else None
        self.low, self.high = _as_tensor(low, like), _as_tensor(high, like)
        self.batch_shape = tuple((self.low + self.high).shape)
        self.event_shape = ()

    @property
    def mean(self):
        """(low + high) / 2."""
        return (self.low + self.high) / 2

    @property
    def variance(self):
        """(high - low)^2 / 12."""
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()):
        """low + (high - low) u with u ~ U[0, 1)."""
        shape = _shape(sample_shape) + self.batch_shape
        u = _kael.rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + (self.high - self.low) * u

    def log_prob(self, value):
        """-log(high - low) inside [low, high), -inf outside."""
        value = _as_tensor(value, self.low)
        inside = (value >= self.low) & (value < self.high)
        return _kael.where(inside, -_kael.log(self.high - self.low), float("-inf"))

    def entropy(self):
        """log(high - low)."""
        return _kael.log(self.high - self.low)
