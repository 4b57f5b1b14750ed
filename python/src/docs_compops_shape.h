#pragma once
// Docstrings of the shape and factory bindings (bind_composite_ops*.cpp): a text signature, then
// what the op does, its arguments, its result and an example.
namespace kael::python::docs {

inline constexpr const char* T = "Every dimension reversed (a view), on any rank, as torch's .T.";
inline constexpr const char* mT = "The last two dimensions swapped (a view); at least 2 dimensions.";

inline constexpr const char* narrow = R"doc(narrow(input, dim, start, length)
--

A view of length elements of dim starting at start (negative start counts from the end).

Args:
    input (Tensor): any shape, dtype and device.
    dim (int): the dimension to narrow.
    start (int): first index.
    length (int): number of elements kept.

Returns:
    Tensor: a view sharing input's storage.

Example:
    >>> x = kael.arange(6).view(2, 3)
    >>> x.narrow(1, 1, 2).tolist()
    [[1, 2], [4, 5]])doc";

inline constexpr const char* movedim = R"doc(movedim(input, source, destination)
--

Moves the dims source to the positions destination; the others keep their order.

Args:
    input (Tensor): any tensor.
    source (int or tuple of ints): dims to move.
    destination (int or tuple of ints): where they go.

Returns:
    Tensor: a view (a permutation of input's dims).

Example:
    >>> kael.zeros(2, 3, 4).movedim(0, -1).shape
    (3, 4, 2))doc";

inline constexpr const char* moveaxis = R"doc(moveaxis(input, source, destination)
--

numpy's name for kael.movedim: moves the dims source to the positions destination.

Example:
    >>> kael.zeros(2, 3, 4).moveaxis(0, -1).shape
    (3, 4, 2))doc";

inline constexpr const char* flatten = R"doc(flatten(input, start_dim=0, end_dim=-1)
--

Merges dims start_dim..end_dim into one (a 0-d input gives shape (1,)).

Args:
    input (Tensor): any tensor.
    start_dim (int): first dim merged.
    end_dim (int): last dim merged.

Returns:
    Tensor: a view when the layout allows, else a copy.

Example:
    >>> kael.zeros(2, 3, 4).flatten(1).shape
    (2, 12))doc";

inline constexpr const char* unflatten = R"doc(unflatten(input, dim, sizes)
--

Splits dim into sizes (one of them may be -1).

Args:
    input (Tensor): any tensor.
    dim (int): the dim to split.
    sizes (tuple of ints): their product is the size of dim.

Returns:
    Tensor: a view when the layout allows, else a copy.

Example:
    >>> kael.zeros(2, 12).unflatten(1, (3, -1)).shape
    (2, 3, 4))doc";

inline constexpr const char* squeeze = R"doc(squeeze(input, dim=None)
--

Removes dims of size 1: all of them, or those of dim (an int or a tuple) that have size 1.

Args:
    input (Tensor): any tensor.
    dim (None, int or tuple of ints): the dims to try.

Returns:
    Tensor: a view.

Example:
    >>> kael.zeros(1, 2, 1).squeeze((0, 1)).shape
    (2, 1))doc";

inline constexpr const char* unbind = R"doc(unbind(input, dim=0)
--

Removes dim, returning every slice along it.

Args:
    input (Tensor): at least 1-d.
    dim (int): the dim removed.

Returns:
    tuple of Tensor: views, one per index of dim.

Example:
    >>> a, b = kael.tensor([[1, 2], [3, 4]]).unbind(1)
    >>> a.tolist()
    [1, 3])doc";

inline constexpr const char* view_as = R"doc(view_as(self, other)
--

self viewed with other's shape (as view).

Args:
    other (Tensor): gives the shape.

Returns:
    Tensor: a view.

Example:
    >>> kael.arange(4).view_as(kael.zeros(2, 2)).shape
    (2, 2))doc";

inline constexpr const char* reshape_as = R"doc(reshape_as(self, other)
--

self reshaped to other's shape (a view when possible).

Args:
    other (Tensor): gives the shape.

Returns:
    Tensor: a view or a copy.

Example:
    >>> kael.arange(4).reshape_as(kael.zeros(2, 2)).shape
    (2, 2))doc";

inline constexpr const char* expand_as = R"doc(expand_as(self, other)
--

self broadcast to other's shape without copying.

Args:
    other (Tensor): gives the shape.

Returns:
    Tensor: a view (stride 0 on broadcast dims).

Example:
    >>> kael.tensor([1, 2]).expand_as(kael.zeros(3, 2)).shape
    (3, 2))doc";

inline constexpr const char* flip = R"doc(flip(input, dims)
--

Reverses the order of elements along dims.

Args:
    input (Tensor): any tensor.
    dims (int or tuple of ints): the dims reversed.

Returns:
    Tensor: a copy.

Example:
    >>> kael.tensor([[1, 2], [3, 4]]).flip(0).tolist()
    [[3, 4], [1, 2]])doc";

inline constexpr const char* fliplr = R"doc(fliplr(input)
--

flip(input, (1,)): columns in reverse order; needs at least 2 dims.

Args:
    input (Tensor): at least 2-d.

Returns:
    Tensor: a copy.

Example:
    >>> kael.tensor([[1, 2]]).fliplr().tolist()
    [[2, 1]])doc";

inline constexpr const char* flipud = R"doc(flipud(input)
--

flip(input, (0,)): rows in reverse order; needs at least 1 dim.

Args:
    input (Tensor): at least 1-d.

Returns:
    Tensor: a copy.

Example:
    >>> kael.tensor([1, 2]).flipud().tolist()
    [2, 1])doc";

inline constexpr const char* roll = R"doc(roll(input, shifts, dims=None)
--

Rotates elements along dims by shifts (elements past the end come back first); without dims, over the flattened tensor.

Args:
    input (Tensor): any tensor.
    shifts (int or tuple of ints): one shift per dim.
    dims (None, int or tuple of ints): the dims rolled.

Returns:
    Tensor: a copy of input's shape.

Example:
    >>> kael.tensor([1, 2, 3]).roll(1).tolist()
    [3, 1, 2])doc";

inline constexpr const char* repeat = R"doc(repeat(self, *sizes)
--

Tiles self sizes[i] times along each dim (leading sizes add dims).

Args:
    *sizes (ints or one tuple): at least self.dim() counts.

Returns:
    Tensor: a copy.

Example:
    >>> kael.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]])doc";

inline constexpr const char* tile = R"doc(tile(input, dims)
--

repeat, with dims padded with leading 1s to input's rank.

Args:
    input (Tensor): any tensor.
    dims (tuple of ints): counts per dim.

Returns:
    Tensor: a copy.

Example:
    >>> kael.tensor([[1], [2]]).tile((2,)).tolist()
    [[1, 1], [2, 2]])doc";

inline constexpr const char* repeat_interleave = R"doc(repeat_interleave(input, repeats, dim=None)
--

Repeats each element along dim (no dim: of the flattened input) repeats times.

Args:
    input (Tensor): any tensor.
    repeats (int or int64 Tensor): one count, or one per element of dim.
    dim (None or int): the dim repeated.

Returns:
    Tensor: a copy.

Example:
    >>> kael.tensor([1, 2]).repeat_interleave(kael.tensor([1, 2])).tolist()
    [1, 2, 2])doc";

inline constexpr const char* tril = R"doc(tril(input, diagonal=0)
--

Keeps the elements on and below the diagonal-th diagonal of the last two dims, zeroes the rest.

Args:
    input (Tensor): at least 2-d, any dtype.
    diagonal (int): 0 main, > 0 above, < 0 below.

Returns:
    Tensor: a copy.

Example:
    >>> kael.ones(2, 2).tril().tolist()
    [[1.0, 0.0], [1.0, 1.0]])doc";

inline constexpr const char* triu = R"doc(triu(input, diagonal=0)
--

Keeps the elements on and above the diagonal-th diagonal of the last two dims, zeroes the rest.

Args:
    input (Tensor): at least 2-d, any dtype.
    diagonal (int): 0 main, > 0 above, < 0 below.

Returns:
    Tensor: a copy.

Example:
    >>> kael.ones(2, 2).triu(1).tolist()
    [[0.0, 1.0], [0.0, 0.0]])doc";

inline constexpr const char* eye = R"doc(eye(n, m=None, *, dtype=None, device=None, requires_grad=False)
--

A 2-d tensor with ones on the diagonal and zeros elsewhere.

Args:
    n (int): rows.
    m (None or int): columns (default n).
    dtype: default float32.
    device: default cpu.
    requires_grad (bool): for a floating result.

Returns:
    Tensor: shape (n, m).

Example:
    >>> kael.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]])doc";

inline constexpr const char* linspace = R"doc(linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False)
--

steps values evenly spaced from start to end, both included.

Args:
    start, end (numbers): the first and last values.
    steps (int): how many values (>= 0).
    dtype: default float32.
    device: default cpu.
    requires_grad (bool).

Returns:
    Tensor: 1-d, steps elements.

Example:
    >>> kael.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0])doc";

inline constexpr const char* logspace = R"doc(logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False)
--

base ** linspace(start, end, steps).

Args:
    start, end (numbers): exponents of the first and last values.
    steps (int): how many values.
    base (float): the base.
    dtype, device, requires_grad: as linspace.

Returns:
    Tensor: 1-d, steps elements.

Example:
    >>> kael.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0])doc";

}  // namespace kael::python::docs
