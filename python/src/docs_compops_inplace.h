#pragma once
// Docstrings of the in-place bindings (bind_composite_ops*.cpp): a text signature, then what
// the op does, its arguments, its result and an example.
namespace kael::python::docs {

// The one-input in-place methods share their text; the binding puts "name_(self)" before it.
inline constexpr const char* unary_in_place = R"doc(self = name(self), written into self's elements
(neg_, abs_, exp_, log_, sqrt_, sigmoid_, tanh_, relu_: the op of the method's name without _).

Args:
    (none)

Returns:
    self, written in place (its dtype must hold the result: exp_ of an int64 tensor is a
    TypeError).

Example:
    >>> kael.tensor([-1., 2.]).abs_().tolist()
    [1.0, 2.0])doc";

inline constexpr const char* add_ = R"doc(add_(self, other, *, alpha=1)
--

self += alpha * other.

Args:
    other (Tensor or number): broadcast to self.
    alpha (number): the scale of other.

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.tensor([1., 2.]).add_(1, alpha=2).tolist()
    [3.0, 4.0])doc";

inline constexpr const char* sub_ = R"doc(sub_(self, other, *, alpha=1)
--

self -= alpha * other.

Args:
    other (Tensor or number): broadcast to self.
    alpha (number): the scale of other.

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.tensor([1., 2.]).sub_(1).tolist()
    [0.0, 1.0])doc";

inline constexpr const char* mul_ = R"doc(mul_(self, other)
--

self *= other.

Args:
    other (Tensor or number): broadcast to self.

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.tensor([1., 2.]).mul_(3).tolist()
    [3.0, 6.0])doc";

inline constexpr const char* div_ = R"doc(div_(self, other, *, rounding_mode=None)
--

self /= other (true division; 'trunc' for integer tensors).

Args:
    other (Tensor or number): broadcast to self.
    rounding_mode (None or 'trunc').

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.tensor([1., 2.]).div_(2).tolist()
    [0.5, 1.0])doc";

inline constexpr const char* pow_ = R"doc(pow_(self, exponent)
--

self = self ** exponent.

Args:
    exponent (Tensor or number): broadcast to self.

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.tensor([2., 3.]).pow_(2).tolist()
    [4.0, 9.0])doc";

inline constexpr const char* clamp_ = R"doc(clamp_(self, min=None, max=None)
--

Clamps self into [min, max] in place (NaN stays NaN).

Args:
    min, max (None, number or Tensor): bounds, at least one given; tensors broadcast.

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.tensor([-1., 5.]).clamp_(0, 1).tolist()
    [0.0, 1.0])doc";

inline constexpr const char* index_add_ = R"doc(index_add_(self, dim, index, source, *, alpha=1)
--

Adds alpha * source[i] (along dim) to self at index[i] of dim; repeated indices add up.

Args:
    dim (int): the dim indexed.
    index (Tensor): 1-d int64 in [0, size).
    source (Tensor): self's shape with index's length along dim.
    alpha (number): the scale of source.

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.zeros(3).index_add_(0, kael.tensor([0, 0]), kael.tensor([1., 2.])).tolist()
    [3.0, 0.0, 0.0])doc";

inline constexpr const char* index_fill_ = R"doc(index_fill_(self, dim, index, value)
--

Writes value at the positions index along dim.

Args:
    dim (int): the dim indexed.
    index (Tensor): int64 in [0, size).
    value (number or one-element Tensor).

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.zeros(3).index_fill_(0, kael.tensor([1]), 5).tolist()
    [0.0, 5.0, 0.0])doc";

inline constexpr const char* scatter_ = R"doc(scatter_(self, dim, index, src=None, *, value=None, reduce=None)
--

self[index[i][j]][j] = src[i][j] (for dim 0); with reduce='add', adds instead.

Args:
    dim (int): the dim indexed.
    index (Tensor): int64, self's rank, within src's shape.
    src (Tensor): the values (or value: a number).
    reduce (None or 'add').

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.zeros(3).scatter_(0, kael.tensor([2]), kael.tensor([7.])).tolist()
    [0.0, 0.0, 7.0])doc";

inline constexpr const char* lerp_ = R"doc(lerp_(self, end, weight)
--

self += weight * (end - self).

Args:
    end (Tensor): broadcast to self.
    weight (number or Tensor).

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.zeros(2).lerp_(kael.ones(2), 0.25).tolist()
    [0.25, 0.25])doc";

inline constexpr const char* addcmul_ = R"doc(addcmul_(self, tensor1, tensor2, *, value=1)
--

self += value * tensor1 * tensor2.

Args:
    tensor1, tensor2 (Tensor): broadcast to self.
    value (number).

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.zeros(1).addcmul_(kael.tensor([2.]), kael.tensor([3.])).tolist()
    [6.0])doc";

inline constexpr const char* addcdiv_ = R"doc(addcdiv_(self, tensor1, tensor2, *, value=1)
--

self += value * tensor1 / tensor2.

Args:
    tensor1, tensor2 (Tensor): broadcast to self.
    value (number).

Returns:
    self, written in place (its dtype must hold the result).

Example:
    >>> kael.zeros(1).addcdiv_(kael.tensor([3.]), kael.tensor([2.])).tolist()
    [1.5])doc";

inline constexpr const char* index_add = R"doc(index_add(input, dim, index, source, *, alpha=1)
--

index_add_ on a copy of input.

Args:
    as index_add_.

Returns:
    Tensor: a new tensor.

Example:
    >>> kael.index_add(kael.zeros(2), 0, kael.tensor([1]), kael.tensor([4.])).tolist()
    [0.0, 4.0])doc";

inline constexpr const char* index_fill = R"doc(index_fill(input, dim, index, value)
--

index_fill_ on a copy of input.

Args:
    as index_fill_.

Returns:
    Tensor: a new tensor.

Example:
    >>> kael.index_fill(kael.zeros(2), 0, kael.tensor([0]), 1).tolist()
    [1.0, 0.0])doc";

inline constexpr const char* scatter = R"doc(scatter(input, dim, index, src=None, *, value=None, reduce=None)
--

scatter_ on a copy of input.

Args:
    as scatter_.

Returns:
    Tensor: a new tensor.

Example:
    >>> kael.scatter(kael.zeros(2), 0, kael.tensor([1]), kael.tensor([3.])).tolist()
    [0.0, 3.0])doc";

inline constexpr const char* lerp = R"doc(lerp(input, end, weight)
--

input + weight * (end - input), measured from the nearer end (exact at weight 0 and 1).

Args:
    input, end (Tensor): broadcast together.
    weight (number or Tensor).

Returns:
    Tensor: the broadcast shape.

Example:
    >>> kael.lerp(kael.zeros(1), kael.ones(1), 0.5).tolist()
    [0.5])doc";

inline constexpr const char* addcmul = R"doc(addcmul(input, tensor1, tensor2, *, value=1)
--

input + value * tensor1 * tensor2.

Args:
    input, tensor1, tensor2 (Tensor): broadcast together.
    value (number).

Returns:
    Tensor: the broadcast shape.

Example:
    >>> kael.addcmul(kael.ones(1), kael.tensor([2.]), kael.tensor([3.])).tolist()
    [7.0])doc";

inline constexpr const char* addcdiv = R"doc(addcdiv(input, tensor1, tensor2, *, value=1)
--

input + value * tensor1 / tensor2.

Args:
    input, tensor1, tensor2 (Tensor): broadcast together.
    value (number).

Returns:
    Tensor: the broadcast shape.

Example:
    >>> kael.addcdiv(kael.ones(1), kael.tensor([3.]), kael.tensor([2.])).tolist()
    [2.5])doc";

}  // namespace kael::python::docs
