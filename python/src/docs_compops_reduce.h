#pragma once
// Docstrings of the selection and reduction bindings (bind_composite_ops*.cpp): a text signature,
// then what the op does, its arguments, its result and an example.
namespace kael::python::docs {

inline constexpr const char* nonzero = R"doc(nonzero(input, *, as_tuple=False)
--

Coordinates of the non-zero elements, in row-major order (synchronises once for the count).

Args:
    input (Tensor): any dtype and device.
    as_tuple (bool): one 1-d tensor per dim instead.

Returns:
    Tensor: int64 (count, input.dim()); or a tuple of int64 (count,) tensors.

Example:
    >>> kael.tensor([[0, 1], [2, 0]]).nonzero().tolist()
    [[0, 1], [1, 0]])doc";

inline constexpr const char* argwhere = R"doc(argwhere(input)
--

nonzero(input): the coordinates of the non-zero elements.

Args:
    input (Tensor): any dtype and device.

Returns:
    Tensor: int64 (count, input.dim()).

Example:
    >>> kael.tensor([0, 3, 4]).argwhere().tolist()
    [[1], [2]])doc";

inline constexpr const char* unique = R"doc(unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)
--

The distinct elements (or slices along dim), sorted.

Args:
    input (Tensor): any dtype and device.
    sorted (bool): always sorted, as torch on cpu.
    return_inverse (bool): also where each element went.
    return_counts (bool): also how often each value occurs.
    dim (None or int): compare whole slices along dim.

Returns:
    Tensor, or a tuple (values, inverse?, counts?) when asked; inverse and counts are int64.

Example:
    >>> kael.unique(kael.tensor([3, 1, 3]), return_counts=True)[1].tolist()
    [1, 2])doc";

inline constexpr const char* unique_consecutive = R"doc(unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)
--

Collapses each run of equal consecutive elements (or slices along dim) to one.

Args:
    input (Tensor): any dtype and device.
    return_inverse (bool): also each element's run.
    return_counts (bool): also each run's length.
    dim (None or int): compare whole slices along dim.

Returns:
    Tensor, or a tuple (values, inverse?, counts?) when asked.

Example:
    >>> kael.unique_consecutive(kael.tensor([1, 1, 2, 1])).tolist()
    [1, 2, 1])doc";

inline constexpr const char* bincount = R"doc(bincount(input, weights=None, minlength=0)
--

Counts of each value of a 1-d non-negative int64 tensor (or the sums of weights at them).

Args:
    input (Tensor): 1-d int64, values >= 0.
    weights (None or Tensor): input's shape.
    minlength (int): the least length of the result.

Returns:
    Tensor: int64 counts, or sums in weights' floating dtype (float64 for integer weights); length max(input) + 1 or minlength.

Example:
    >>> kael.bincount(kael.tensor([0, 2, 2])).tolist()
    [1, 0, 2])doc";

inline constexpr const char* median = R"doc(median(input, dim=None, keepdim=False)
--

The lower median of all elements, or (values, indices) along dim; NaN when there is one.

Args:
    input (Tensor): any dtype and device.
    dim (None or int): the dim reduced.
    keepdim (bool): keep dim with size 1.

Returns:
    Tensor (no dim), or return_types.median (values, indices).

Example:
    >>> kael.tensor([3., 1., 2., 4.]).median().item()
    2.0)doc";

inline constexpr const char* kthvalue = R"doc(kthvalue(input, k, dim=-1, keepdim=False)
--

The k-th smallest element along dim (k from 1) and its index.

Args:
    input (Tensor): any dtype and device.
    k (int): 1 <= k <= size of dim.
    dim (int): the dim reduced.
    keepdim (bool): keep dim with size 1.

Returns:
    return_types.kthvalue (values, indices).

Example:
    >>> kael.tensor([3., 1., 2.]).kthvalue(2).values.item()
    2.0)doc";

inline constexpr const char* searchsorted = R"doc(searchsorted(sorted_sequence, input, *, right=False)
--

Indices where input's values would be inserted into the last dim of sorted_sequence to keep it sorted.

Args:
    sorted_sequence (Tensor): sorted along its last dim; 1-d or input's leading dims.
    input (Tensor): the values.
    right (bool): after equal elements instead of before.

Returns:
    Tensor: int64 of input's shape.

Example:
    >>> kael.searchsorted(kael.tensor([1, 3, 5]), kael.tensor([3, 6])).tolist()
    [1, 3])doc";

inline constexpr const char* amax = R"doc(amax(input, dim=(), keepdim=False)
--

The maximum over dim (an int or a tuple; () is every dim); the gradient is shared evenly by ties.

Args:
    input (Tensor): any dtype and device; reduced dims non-empty.
    dim (int or tuple of ints): the dims reduced.
    keepdim (bool): keep them with size 1.

Returns:
    Tensor: input's dtype.

Example:
    >>> kael.tensor([[1, 5], [7, 2]]).amax(1).tolist()
    [5, 7])doc";

inline constexpr const char* amin = R"doc(amin(input, dim=(), keepdim=False)
--

The minimum over dim (an int or a tuple; () is every dim); the gradient is shared evenly by ties.

Args:
    input (Tensor): any dtype and device; reduced dims non-empty.
    dim (int or tuple of ints): the dims reduced.
    keepdim (bool): keep them with size 1.

Returns:
    Tensor: input's dtype.

Example:
    >>> kael.tensor([[1, 5], [7, 2]]).amin(1).tolist()
    [1, 2])doc";

inline constexpr const char* aminmax = R"doc(aminmax(input, *, dim=None, keepdim=False)
--

amin and amax at once.

Args:
    input (Tensor): any dtype and device.
    dim (None or int): the dim reduced (None: all).
    keepdim (bool): keep it with size 1.

Returns:
    return_types.aminmax (min, max).

Example:
    >>> kael.tensor([3, 1, 2]).aminmax().max.item()
    3)doc";

inline constexpr const char* max = R"doc(max(input, dim=None, keepdim=False)
--

The largest element; with dim, return_types.max (values, indices) along it; with a tensor, the elementwise maximum.

Args:
    input (Tensor): any dtype and device.
    dim (None, int or Tensor): the dim reduced, or the other operand of maximum.
    keepdim (bool): keep dim with size 1.

Returns:
    Tensor, or return_types.max (values, indices) with dim.

Example:
    >>> values, indices = kael.tensor([[1, 5], [7, 2]]).max(1)
    >>> indices.tolist()
    [1, 0])doc";

inline constexpr const char* min = R"doc(min(input, dim=None, keepdim=False)
--

The smallest element; with dim, return_types.min (values, indices) along it; with a tensor, the elementwise minimum.

Args:
    input (Tensor): any dtype and device.
    dim (None, int or Tensor): the dim reduced, or the other operand of minimum.
    keepdim (bool): keep dim with size 1.

Returns:
    Tensor, or return_types.min (values, indices) with dim.

Example:
    >>> kael.tensor([[1, 5], [7, 2]]).min(1).values.tolist()
    [1, 2])doc";

inline constexpr const char* norm = R"doc(norm(input, p="fro", dim=None, keepdim=False)
--

The p-norm over dim (all elements by default); "fro" is the 2-norm.

Args:
    input (Tensor): floating.
    p ("fro" or number): 0, 1, 2, inf, -inf or any other order.
    dim (None, int or tuple of ints): the dims reduced.
    keepdim (bool): keep them with size 1.

Returns:
    Tensor: input's dtype.

Example:
    >>> kael.tensor([3., 4.]).norm().item()
    5.0)doc";

inline constexpr const char* vector_norm = R"doc(vector_norm(x, ord=2, dim=None, keepdim=False)
--

torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over dim; ord 0 counts non-zeros, inf/-inf are the largest/smallest |x|.

Args:
    x (Tensor): floating.
    ord (number): the order.
    dim (None, int or tuple of ints): the dims reduced.
    keepdim (bool): keep them with size 1.

Returns:
    Tensor: x's dtype.

Example:
    >>> kael.linalg.vector_norm(kael.tensor([3., -4.]), ord=1).item()
    7.0)doc";

inline constexpr const char* var = R"doc(var(input, dim=None, correction=1, keepdim=False)
--

The variance over dim (an int or a tuple), divided by n - correction.

Args:
    input (Tensor): floating.
    dim (None, int or tuple of ints): the dims reduced.
    correction (int): 1 is Bessel's correction.
    keepdim (bool): keep them with size 1.

Returns:
    Tensor: input's dtype.

Example:
    >>> kael.tensor([1., 3.]).var().item()
    2.0)doc";

inline constexpr const char* std_ = R"doc(std(input, dim=None, correction=1, keepdim=False)
--

The standard deviation over dim (an int or a tuple), divided by n - correction.

Args:
    input (Tensor): floating.
    dim (None, int or tuple of ints): the dims reduced.
    correction (int): 1 is Bessel's correction.
    keepdim (bool): keep them with size 1.

Returns:
    Tensor: input's dtype.

Example:
    >>> kael.tensor([1., 3.]).std(correction=0).item()
    1.0)doc";

inline constexpr const char* cumprod = R"doc(cumprod(input, dim)
--

Inclusive prefix products along dim, exact with zeros and negatives, differentiable.

Args:
    input (Tensor): any dtype and device.
    dim (int): the dim scanned.

Returns:
    Tensor: input's dtype (int64 for integers and bool).

Example:
    >>> kael.tensor([1, 2, 3]).cumprod(0).tolist()
    [1, 2, 6])doc";

inline constexpr const char* einsum = R"doc(einsum(equation, *operands)
--

Sums of products of operands' elements named by the equation's subscripts (letters, '...'), contracted left to right through matmul.

Args:
    equation (str): e.g. 'ij,jk->ik'; without '->' the output is the subscripts used once, sorted.
    *operands (Tensors, or one list of them).

Returns:
    Tensor: the promoted dtype.

Example:
    >>> kael.einsum('ij,j->i', kael.ones(2, 3), kael.ones(3)).tolist()
    [3.0, 3.0])doc";

}  // namespace kael::python::docs
