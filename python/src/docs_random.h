#pragma once
// Docstrings of kael.Generator and the random functions (bind_random.cpp).

namespace kael::python::docs {

inline constexpr const char* Generator = R"doc(Generator(device='cpu')
--

A seeded random generator, as torch.Generator: pass it as generator= to rand, randn, randint,
randperm, multinomial, bernoulli and the in-place fills to draw from it instead of the process's
generator (kael.default_generator).

Args:
    device (str or kael.device): where the tensors drawn with it go by default is still the op's
        device argument; values are drawn on the host, so one seed gives the same values on
        every device. Kept as the device attribute, as PyTorch's.

Example:

    >>> g = kael.Generator().manual_seed(42)
    >>> a = kael.rand(3, generator=g)
)doc";

inline constexpr const char* generator_manual_seed = R"doc(manual_seed($self, seed)
--

Reseeds this generator and returns it.

Args:
    seed (int): any integer in [-2**63, 2**64); negative ones are taken modulo 2**64.

Example:

    >>> g = kael.Generator().manual_seed(0)
)doc";

inline constexpr const char* generator_seed = R"doc(seed($self)
--

Reseeds this generator from the operating system's entropy and returns the seed (an int).

Example:

    >>> s = kael.Generator().seed()
)doc";

inline constexpr const char* generator_initial_seed = R"doc(initial_seed($self)
--

The seed this generator was last seeded with (an int).

Example:

    >>> kael.Generator().manual_seed(7).initial_seed()
    7
)doc";

inline constexpr const char* generator_get_state = R"doc(get_state($self)
--

The generator's whole state as a 1-D int64 cpu tensor holding one byte (0..255) per element;
kael has no uint8 dtype, so this stands for PyTorch's ByteTensor. kael.save stores it.

Example:

    >>> g = kael.Generator()
    >>> state = g.get_state()
    >>> a = kael.rand(2, generator=g); _ = g.set_state(state)
    >>> bool((kael.rand(2, generator=g) == a).all())
    True
)doc";

inline constexpr const char* generator_set_state = R"doc(set_state($self, new_state)
--

Restores a state from get_state (the tensor, or the same values as bytes); later draws repeat
exactly. Returns the generator. A tensor or bytes that is not such a state is a ValueError.

Example:

    >>> g = kael.Generator(); _ = g.set_state(g.get_state())
)doc";

inline constexpr const char* manual_seed = R"doc(manual_seed(seed)
--

Seeds kael's process generator (kael.default_generator): rand, randn, randint, randperm,
dropout, sampling ... draw the same values after the same seed, on every device. Returns the
generator.

Args:
    seed (int): any integer in [-2**63, 2**64).

Example:

    >>> _ = kael.manual_seed(0)
    >>> a = kael.rand(3); _ = kael.manual_seed(0); bool((kael.rand(3) == a).all())
    True
)doc";

inline constexpr const char* seed = R"doc(seed()
--

Seeds the process generator from the operating system's entropy and returns the seed (an int).

Example:

    >>> s = kael.seed()
)doc";

inline constexpr const char* initial_seed = R"doc(initial_seed()
--

The seed the process generator was last seeded with (an int).

Example:

    >>> _ = kael.manual_seed(3); kael.initial_seed()
    3
)doc";

inline constexpr const char* get_rng_state = R"doc(get_rng_state()
--

The process generator's state (kael.default_generator.get_state()): a 1-D int64 cpu tensor of
bytes. Restoring it with set_rng_state repeats every later draw exactly.

Example:

    >>> state = kael.get_rng_state()
    >>> a = kael.randn(3); kael.set_rng_state(state)
    >>> bool((kael.randn(3) == a).all())
    True
)doc";

inline constexpr const char* set_rng_state = R"doc(set_rng_state(new_state)
--

Restores the process generator's state from get_rng_state (a tensor, or bytes). ValueError for
anything that is not such a state.

Example:

    >>> kael.set_rng_state(kael.get_rng_state())
)doc";

inline constexpr const char* rand = R"doc(rand(*size, generator=None, dtype=None, device=None, requires_grad=False)
--

Uniform random values in [0, 1), drawn on the host from generator (the process generator when
None): the same values on every device.

Args:
    *size (ints, or one tuple or list of ints): the shape; () or nothing gives a 0-d tensor.
    generator (kael.Generator, optional).
    dtype (kael.dtype, optional): float32 by default (floating only).
    device (str or kael.device, optional): "cpu" by default; "cuda", "cuda:1", ...
    requires_grad (bool): make the result a leaf that records gradients.

Example:

    >>> kael.rand(2, 3).shape
)doc";

inline constexpr const char* randn = R"doc(randn(*size, generator=None, dtype=None, device=None, requires_grad=False)
--

Standard normal random values (mean 0, variance 1), drawn on the host from generator (the
process generator when None): the same values on every device.

Args:
    *size (ints, or one tuple or list of ints): the shape.
    generator (kael.Generator, optional).
    dtype (kael.dtype, optional): float32 by default (floating only).
    device (str or kael.device, optional), requires_grad (bool): as for kael.rand.

Example:

    >>> kael.randn(4, generator=kael.Generator().manual_seed(1)).shape
)doc";

inline constexpr const char* randint = R"doc(randint(low, high, size, *, generator=None, dtype=None, device=None, requires_grad=False)
--

Uniform random integers in [low, high), int64, from generator (the process generator when None).
As PyTorch, randint(high, size) draws from [0, high).

Args:
    low (int), high (int): the range; ValueError unless low < high.
    size (tuple of ints): the shape.
    generator (kael.Generator, optional), dtype (an integer kael.dtype, optional: int64),
    device (str or kael.device, optional).

Example:

    >>> kael.randint(0, 10, (3,)).shape
    (3,)
    >>> kael.randint(10, (2, 2)).shape
    (2, 2)
)doc";

inline constexpr const char* randperm = R"doc(randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False)
--

A random permutation of 0, 1, ..., n-1 (Fisher-Yates, drawn on the host from generator).

Args:
    n (int): non-negative.
    generator (kael.Generator, optional).
    dtype (kael.dtype, optional): int64 by default; float32 or float64 also work.
    device (str or kael.device, optional), requires_grad (bool, floating only).

Returns a 1-D tensor of n elements.

Example:

    >>> sorted(kael.randperm(5).tolist())
    [0, 1, 2, 3, 4]
)doc";

inline constexpr const char* multinomial = R"doc(multinomial(input, num_samples, replacement=False, *, generator=None)
--

Category indices sampled from the weights in each row of input, as torch.multinomial.

Args:
    input (Tensor): 1-D (categories) or 2-D (rows, categories), floating, any device; weights
        need not sum to 1 but must be finite, >= 0 and not all 0 in a row (ValueError).
    num_samples (int): > 0; without replacement at most the number of categories.
    replacement (bool): whether an index may repeat within a row. Without replacement,
        zero-weight categories are drawn only after every other one, as in PyTorch.
    generator (kael.Generator, optional).

Returns an int64 tensor of shape (num_samples) or (rows, num_samples) on input's device.

Example:

    >>> kael.multinomial(kael.tensor([0.0, 1.0, 3.0]), 2)
)doc";

inline constexpr const char* bernoulli = R"doc(bernoulli(input, *, generator=None)
--

0 or 1 per element, 1 with the probability held by that element of input.

Args:
    input (Tensor): floating probabilities in [0, 1] (ValueError otherwise), any device.
    generator (kael.Generator, optional).

Returns a tensor of input's shape, dtype and device; not differentiable.

Example:

    >>> kael.bernoulli(kael.tensor([0.0, 1.0]))
    kael.tensor([0., 1.])
)doc";

inline constexpr const char* method_multinomial = R"doc(multinomial($self, num_samples, replacement=False, *, generator=None)
--

kael.multinomial(self, num_samples, replacement, generator=generator).

Example:

    >>> kael.tensor([1.0, 1.0]).multinomial(1).shape
)doc";

inline constexpr const char* method_bernoulli = R"doc(bernoulli($self, *, generator=None)
--

kael.bernoulli(self, generator=generator): 0 or 1 with the probability held by each element.

Example:

    >>> kael.tensor([1.0]).bernoulli()
)doc";

inline constexpr const char* uniform_ = R"doc(uniform_($self, a=0, b=1, *, generator=None)
--

Fills self in place with uniform values in [a, b) and returns self (floating self only;
ValueError when a > b). Gradients through the old values are zero, as copy_ of a constant.

Example:

    >>> w = kael.empty(2, 3).uniform_(-0.1, 0.1)
)doc";

inline constexpr const char* normal_ = R"doc(normal_($self, mean=0, std=1, *, generator=None)
--

Fills self in place with normal values of that mean and standard deviation (std >= 0) and
returns self (floating self only).

Example:

    >>> w = kael.empty(4).normal_(0.0, 0.02)
)doc";

inline constexpr const char* bernoulli_ = R"doc(bernoulli_($self, p=0.5, *, generator=None)
--

Fills self in place with 0 or 1, 1 with probability p, and returns self.

Args:
    p (float in [0, 1], or a Tensor of probabilities broadcastable to self).
    generator (kael.Generator, optional).

Example:

    >>> mask = kael.empty(5).bernoulli_(0.5)
)doc";

inline constexpr const char* exponential_ = R"doc(exponential_($self, lambd=1, *, generator=None)
--

Fills self in place with exponential values of rate lambd (> 0), and returns self.

Example:

    >>> t = kael.empty(3).exponential_(2.0)
)doc";

}  // namespace kael::python::docs
