// The docstrings of kael's module-level functions (docs_functions.h). Families whose texts differ
// in a few words (the reductions, the factories, softmax and log_softmax, cat and stack,
// scatter_add and its in-place form) are composed from one template each.
#include "docs_functions.h"

#include <string>

#include "docs_table.h"

namespace kael::python::docs {
namespace {

constexpr const char* kDeferredIndex = R"doc(An index outside the dim is an IndexError naming this op. On cuda, as on any GPU, the device
finds it after the call returns: the error is raised at the next call that waits for the
device (item(), tolist(), numpy(), kael.synchronize()), in whichever thread makes it, and its
message names the thread that issued the op.)doc";

struct Reduction {
    const char* name;
    const char* summary;
    const char* dtype_note;
    const char* values;  // the example's input
};

constexpr Reduction kReductions[] = {
    {"sum", "The sum of the elements", "integers and bool sum to int64",
     "[[1.0, 2.0], [3.0, 4.0]]"},
    {"mean", "The mean of the elements", "floating dtypes only", "[[1.0, 2.0], [3.0, 4.0]]"},
    {"prod", "The product of the elements", "integers and bool multiply to int64",
     "[[1.0, 2.0], [3.0, 4.0]]"},
    {"argmax",
     "The index of the largest element (the first one on ties, NaN counts as largest)",
     "int64 result; over the flattened tensor without dim", "[[1.0, 5.0], [3.0, 4.0]]"},
    {"argmin", "The index of the smallest element (the first one on ties)",
     "int64 result; over the flattened tensor without dim", "[[1.0, 5.0], [3.0, 4.0]]"},
    {"all", "True if every element is nonzero", "bool result", "[[True, False], [True, True]]"},
    {"any", "True if some element is nonzero", "bool result", "[[True, False], [False, False]]"},
};

void add_reductions(Docs& docs) {
    for (const Reduction& r : kReductions) {
        const std::string name = r.name;
        const bool differentiable = name == "sum" || name == "mean" || name == "prod";
        docs[name] = documented(
            name + "(input, dim=None, keepdim=False)",
            std::string(r.summary) + R"doc(, over all of input or over dim.

Args:
    input (Tensor): any shape, dtype and device ()doc" +
                r.dtype_note + R"doc().
    dim (int or tuple of ints, optional): the dimensions reduced; None reduces all of them.
    keepdim (bool): keep reduced dimensions with size 1.

Returns a tensor on input's device)doc" +
                (differentiable ? ", differentiable" : "") + R"doc(.

Example:

    >>> x = kael.tensor()doc" + r.values + ")\n    >>> kael." + name + "(x)\n    >>> kael." +
                name + "(x, dim=1)");
    }
}

void add_factories(Docs& docs) {
    const char* const factories[][3] = {
        {"zeros", "A tensor filled with 0.", "kael.zeros(2, 3)"},
        {"ones", "A tensor filled with 1.", "kael.ones((2, 3), dtype=kael.int64)"},
        {"empty",
         "A tensor of the given shape whose values are not set (read them only after writing "
         "them).",
         "kael.empty(2, 3).shape"},
    };
    for (const auto& [name, summary, example] : factories) {
        docs[name] = documented(std::string(name) +
                                    "(*size, dtype=None, device=None, requires_grad=False)",
                                std::string(summary) + R"doc(

Args:
    *size (ints, or one tuple or list of ints): the shape; () or nothing gives a 0-d tensor.
    dtype (kael.dtype, optional): float32 by default (any dtype).
    device (str or kael.device, optional): "cpu" by default; "cuda", "cuda:1", ...
    requires_grad (bool): make the result a leaf that records gradients.

Example:

    >>> )doc" + example);
    }
}

// softmax and log_softmax; cat and stack; scatter_add and scatter_add_.
void add_pairs(Docs& docs) {
    for (const auto& [name, summary] : {std::pair<std::string, std::string>{
                                            "softmax", "exp(x) / sum(exp(x))"},
                                        {"log_softmax", "x - logsumexp(x)"}}) {
        docs[name] = documented(name + "(input, dim)", summary + R"doc( along dim, computed in one fused kernel per row where the device has it.

Args:
    input (Tensor): f32 or f64, any shape and device; dim (int): the dimension normalised.

Returns a differentiable tensor of input's shape.

Example:

    >>> kael.)doc" + name + "(kael.tensor([[1.0, 2.0, 3.0]]), dim=1)");
    }
    for (const auto& [name, summary] :
         {std::pair<std::string, std::string>{
              "cat", "joined end to end along the existing dimension dim"},
          {"stack", "stacked along a new dimension dim"}}) {
        docs[name] = documented(name + "(tensors, dim=0)", "The tensors " + summary + R"doc(.

Args:
    tensors (sequence of Tensor): one dtype and device; shapes equal except)doc" +
                                                               (name == "cat" ? " along dim" : "") + R"doc(.
    dim (int): the dimension.

Returns a differentiable tensor.

Example:

    >>> a = kael.tensor([1, 2]); b = kael.tensor([3, 4])
    >>> kael.)doc" + name + "([a, b])");
    }
    for (const bool in_place : {false, true}) {
        const std::string name = in_place ? "scatter_add_" : "scatter_add";
        docs[name] = documented(
            name + "(input, dim, index, src)",
            std::string(in_place ? "Adds, in place," : "A copy of input with") +
                " src's values " + (in_place ? "" : "added ") +
                R"doc(at the positions index gives along dim (duplicates accumulate).

Args:
    input (Tensor), dim (int), index (Tensor): int64 of src's shape, src (Tensor).

)doc" + kDeferredIndex + "\n\nExample:\n\n    >>> kael." + name +
                "(kael.zeros(3), 0, kael.tensor([0, 0, 2]), kael.tensor([1.0, 2.0, 3.0]))");
    }
}

Docs make_docs() {
    Docs docs;
    add_reductions(docs);
    add_factories(docs);
    add_pairs(docs);
    add_device_docs(docs);
    add_tensor_docs(docs);
    add_class_docs(docs);
    docs["tensor"] = documented("tensor(data, *, dtype=None, device=None, requires_grad=False)", R"doc(A new tensor holding a copy of data.

Args:
    data: a number, a (nested) list or tuple of numbers or tensors, a numpy array, or a tensor.
        The dtype is inferred as PyTorch does: bools give bool, ints int64, floats float32
        (a numpy array keeps its dtype where kael has it: float64 stays float64).
    dtype (kael.dtype, optional), device (str or kael.device, optional), requires_grad (bool).

Example:

    >>> kael.tensor([[1, 2], [3, 4]])
    >>> kael.tensor(2.5, dtype=kael.float64))doc");
    docs["full"] = documented("full(size, fill_value, *, dtype=None, device=None, requires_grad=False)", R"doc(A tensor of shape size filled with fill_value.

Args:
    size (tuple or list of ints): the shape.
    fill_value (number): the value; the dtype is inferred from it (bool, int64 or float32)
        unless dtype is given.
    dtype, device, requires_grad: as for kael.zeros.

Example:

    >>> kael.full((2, 2), 7))doc");
    docs["arange"] = documented("arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False)", R"doc(The values start, start + step, ... below end (above end for a negative step), as a 1-D tensor;
arange(n) counts 0..n-1.

Args:
    start, end, step (numbers): int64 when all are integers, float32 otherwise (dtype overrides).
    dtype, device, requires_grad: as for kael.zeros.

Example:

    >>> kael.arange(5)
    >>> kael.arange(0, 1, 0.25))doc");
    docs["matmul"] = documented("matmul(input, other)", R"doc(The matrix product, with PyTorch's rules: 1-D by 1-D is a dot product, 2-D by 2-D a matrix
product, and leading dimensions of higher-rank operands broadcast as batches.

Args:
    input (Tensor), other (Tensor): f32 or f64 (int64 too), on one device; the inner sizes must
        agree (ValueError naming both shapes otherwise).

Returns a differentiable tensor. Also written input @ other.

Example:

    >>> a = kael.ones(2, 3); b = kael.ones(3, 4)
    >>> kael.matmul(a, b).shape)doc");
    docs["where"] = documented("where(condition, input, other)", R"doc(input where condition is True, other elsewhere, broadcasting all three.

Args:
    condition (Tensor): bool.
    input, other (Tensor or number): the values; they promote to one dtype.

Returns a tensor differentiable in input and other.

Example:

    >>> x = kael.tensor([-1.0, 2.0, -3.0])
    >>> kael.where(x > 0, x, 0.0))doc");
    docs["clamp"] = documented("clamp(input, min=None, max=None)", R"doc(Each element limited to [min, max] (either bound may be None); NaN stays NaN.

Args:
    input (Tensor): any dtype but bool.
    min, max (number, optional): the bounds.

Returns a tensor differentiable where the input lies inside the bounds.

Example:

    >>> kael.clamp(kael.tensor([-2.0, 0.5, 3.0]), min=-1, max=1))doc");
    docs["masked_fill"] = documented("masked_fill(input, mask, value)", R"doc(A copy of input with value wherever mask is True (mask broadcasts to input).

Args:
    input (Tensor), mask (Tensor): bool, broadcastable to input, value (number).

Example:

    >>> x = kael.zeros(3)
    >>> kael.masked_fill(x, kael.tensor([True, False, True]), 5.0))doc");
    docs["allclose"] = documented("allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)", R"doc(True if |input - other| <= atol + rtol * |other| everywhere (a Python bool: waits for the device).

Args:
    input (Tensor), other (Tensor): broadcastable, on one device.
    rtol, atol (float): tolerances; equal_nan (bool): NaNs in the same places count as equal.

Example:

    >>> kael.allclose(kael.tensor([1.0, 2.0]), kael.tensor([1.0, 2.0000001])))doc");
    docs["logsumexp"] = documented("logsumexp(input, dim, keepdim=False)", R"doc(log(sum(exp(input))) along dim, computed without overflow (the row maximum is taken out first).

Args:
    input (Tensor): f32 or f64; dim (int or tuple of ints: every listed dim is reduced);
    keepdim (bool).

Returns a differentiable tensor.

Example:

    >>> kael.logsumexp(kael.tensor([[0.0, 0.0]]), dim=1))doc");
    docs["gelu"] = documented("gelu(input, approximate='none')", R"doc(The Gaussian error linear unit x * Phi(x); approximate='tanh' uses GPT-2's tanh form.

Args:
    input (Tensor): f32 or f64; approximate (str): 'none' or 'tanh'.

Returns a differentiable tensor.

Example:

    >>> kael.gelu(kael.tensor([-1.0, 0.0, 1.0])))doc");
    docs["cumsum"] = documented("cumsum(input, dim)", R"doc(The running sum along dim: element i is the sum of elements 0..i.

Args:
    input (Tensor): any dtype (integers and bool sum to int64); dim (int).

Returns a differentiable tensor of input's shape.

Example:

    >>> kael.cumsum(kael.tensor([1, 2, 3, 4]), dim=0))doc");
    docs["sort"] = documented("sort(input, dim=-1, descending=False)", R"doc(input sorted along dim (stably: equal elements keep their order), as the named tuple
(values, indices).

Args:
    input (Tensor): any dtype; NaN sorts last (first when descending), as PyTorch.
    dim (int), descending (bool).

Example:

    >>> values, indices = kael.sort(kael.tensor([3.0, 1.0, 2.0]))
    >>> values, indices)doc");
    docs["argsort"] = documented("argsort(input, dim=-1, descending=False)", R"doc(The indices that sort input along dim (stably), int64.

Args:
    input (Tensor), dim (int), descending (bool).

Example:

    >>> kael.argsort(kael.tensor([3.0, 1.0, 2.0])))doc");
    docs["topk"] = documented("topk(input, k, dim=-1, largest=True)", R"doc(The k largest (or smallest) elements along dim, as the named tuple (values, indices), sorted.

Args:
    input (Tensor), k (int): 0 <= k <= input.size(dim), dim (int), largest (bool).

Example:

    >>> kael.topk(kael.tensor([1.0, 5.0, 3.0, 4.0]), 2))doc");
    docs["split"] = documented("split(input, split_size_or_sections, dim=0)", R"doc(Views of input in pieces along dim: of split_size each (the last may be smaller), or of the
given list of sizes.

Args:
    input (Tensor); split_size_or_sections (int or list of ints); dim (int).

Returns a tuple of views.

Example:

    >>> kael.split(kael.arange(5), 2))doc");
    docs["chunk"] = documented("chunk(input, chunks, dim=0)", R"doc(input split into at most chunks views of equal size along dim (the last may be smaller).

Args:
    input (Tensor), chunks (int) > 0, dim (int).

Example:

    >>> kael.chunk(kael.arange(6), 3))doc");
    docs["gather"] = documented("gather(input, dim, index)", std::string(R"doc(out[i][j] = input[index[i][j]][j] for dim 0 (and likewise for other dims): values picked along
dim by an int64 index of input's rank.

Args:
    input (Tensor), dim (int), index (Tensor): int64, each entry in [0, input.size(dim)).

Returns a tensor of index's shape, differentiable in input.

)doc") + kDeferredIndex +
                                                   R"doc(

Example:

    >>> x = kael.tensor([[1, 2], [3, 4]])
    >>> kael.gather(x, 1, kael.tensor([[1], [0]])))doc");
    docs["index_select"] = documented("index_select(input, dim, index)", std::string(R"doc(The slices of input along dim at the positions of a 1-D int64 index.

Args:
    input (Tensor), dim (int), index (Tensor): 1-D int64 in [0, input.size(dim)).

Returns a new, differentiable tensor.

)doc") + kDeferredIndex +
                                                   R"doc(

Example:

    >>> kael.index_select(kael.tensor([[1, 2], [3, 4], [5, 6]]), 0, kael.tensor([2, 0])))doc");
    return docs;
}

}  // namespace

const char* by_name(std::string_view name) {
    static const Docs docs = make_docs();
    const auto found = docs.find(name);
    return found == docs.end() ? nullptr : found->second.c_str();
}

std::string method_of(std::string_view name) {
    const char* function = by_name(name);
    if (function == nullptr) return "";
    const std::string_view text = function;
    const std::string opening = std::string(name) + "(input";
    const std::size_t end = text.find(")\n--\n");
    if (text.rfind(opening, 0) != 0 || end == std::string_view::npos) return "";
    const std::string rest(text.substr(opening.size(), end - opening.size()));  // ", dim=None"
    const std::string call = std::string(name) + "(self" + rest + ")";
    return documented(call, "kael." + call + ": see kael." + std::string(name) + ".");
}

}  // namespace kael::python::docs
