// The docstrings of kael.Tensor, its methods and its properties (docs_table.h's
// add_tensor_docs), passed where bind_tensor.cpp, bind_autograd.cpp and bind_ops.cpp define
// them. The methods that are a kael.<name> function with self as input take theirs from the
// function (docs_functions.h's method_of).
#include "docs_table.h"

namespace kael::python::docs {
namespace {

struct Method {
    const char* name;
    const char* signature;
    const char* text;
};

constexpr Method kMethods[] = {
    {"__init__", "__init__(self, *sizes_or_data, dtype=None, device=None)",
     "As torch.Tensor: kael.Tensor(2, 3) is a float32 tensor of that shape (zeros, where "
     "PyTorch leaves the elements unset), kael.Tensor(data) a float32 copy of data "
     "(kael.tensor keeps data's own dtype); dtype and device choose others."},
    {"item", "item(self)",
     "The value of a one-element tensor as a Python number (waits for the device); ValueError "
     "for more elements."},
    {"tolist", "tolist(self)", "The values as nested Python lists (a number for a 0-d tensor)."},
    {"numpy", "numpy(self)",
     "A numpy array of a cpu tensor, sharing its memory (through DLPack); call .cpu() first for "
     "another device; a tensor that requires grad needs .detach() first, as PyTorch."},
    {"clone", "clone(self)", "A copy with its own memory, contiguous; differentiable."},
    {"contiguous", "contiguous(self)",
     "self if its elements are laid out in row-major order, else a contiguous copy."},
    {"is_contiguous", "is_contiguous(self)", "True if the elements are in row-major order."},
    {"detach", "detach(self)",
     "A view of the same memory that records no autograd history (requires_grad False)."},
    {"requires_grad_", "requires_grad_(self, requires_grad=True)",
     "Makes this leaf record gradients (or stop), in place; returns self."},
    {"backward", "backward(self, gradient=None, retain_graph=False)",
     "Computes the gradients of self with respect to the leaves that require grad and adds them "
     "to their .grad. gradient is d(loss)/d(self), needed unless self has one element; "
     "retain_graph keeps the graph for another backward."},
    {"zero_grad", "zero_grad(self)", "Sets .grad to None."},
    {"cpu", "cpu(self)", "self on the cpu (self when it is there), as self.to('cpu')."},
    {"cuda", "cuda(self, index=0)",
     "self on cuda:index, as self.to('cuda:index'); a RuntimeError with the plugin's reason "
     "when that device is missing."},
    {"to", "to(self, *args, **kwargs)",
     "self converted: to(device), to(dtype), to(device, dtype), to(other) or keywords device=, "
     "dtype=; self when nothing changes; differentiable."},
    {"move_to_", "move_to_(self, device)",
     "Moves this tensor's storage to device in place: every view of it follows; returns self."},
    {"pin_memory", "pin_memory(self, device=None)",
     "A copy of this cpu tensor in page-locked host memory, which device (default cuda:0) copies "
     "to and from at full speed; self when already pinned. RuntimeError where the tensor is not "
     "on cpu or no plugin serving device offers such memory (the cuda plugin's needs a GPU; the "
     "emulated device serves ordinary memory through the same path)."},
    {"is_pinned", "is_pinned(self, device=None)",
     "Whether this tensor's storage is page-locked host memory (pin_memory())."},
    {"float", "float(self)", "self as float32."},
    {"double", "double(self)", "self as float64."},
    {"half", "half(self)", "self as float16 (rounded to nearest even)."},
    {"bfloat16", "bfloat16(self)", "self as bfloat16 (rounded to nearest even)."},
    {"long", "long(self)", "self as int64."},
    {"bool", "bool(self)", "self as bool (nonzero is True)."},
    {"dim", "dim(self)", "The number of dimensions (self.ndim)."},
    {"numel", "numel(self)", "The number of elements."},
    {"size", "size(self, dim=None)", "The shape as a tuple, or the size of dim."},
    {"stride", "stride(self)", "The stride of each dimension in elements, as a tuple."},
    {"storage_offset", "storage_offset(self)",
     "Where the first element is in the storage, in elements."},
    {"data_ptr", "data_ptr(self)", "The address of the first element (a device address on a GPU)."},
    {"view", "view(self, *shape)",
     "A view with another shape and the same elements (one size may be -1); ValueError when "
     "the strides do not allow it (use reshape)."},
    {"reshape", "reshape(self, *shape)",
     "self with another shape: a view when the layout allows, else a copy (one size may be "
     "-1)."},
    {"permute", "permute(self, *dims)", "A view with the dimensions reordered."},
    {"transpose", "transpose(self, dim0, dim1)", "A view with dim0 and dim1 swapped."},
    {"t", "t(self)", "The transpose of a tensor of at most 2 dimensions (a view)."},
    {"expand", "expand(self, *sizes)",
     "A view broadcast to sizes (-1 keeps a size) without copying: expanded dimensions have "
     "stride 0."},
    {"unsqueeze", "unsqueeze(self, dim)", "A view with a new dimension of size 1 at dim."},
    {"select", "select(self, dim, index)",
     "The slice at index along dim, without that dimension (a view): x.select(0, i) is x[i]."},
    {"slice", "slice(self, dim, start, stop, step=1)", "A view of start:stop:step along dim."},
    {"as_strided", "as_strided(self, size, stride, storage_offset=0)",
     "A view with the given sizes and strides over self's storage (bounds checked)."},
    {"copy_", "copy_(self, source)",
     "Copies source (a tensor, broadcast, of any dtype and device, or a number) into self in "
     "place; returns self."},
    {"fill_", "fill_(self, value)", "Sets every element to value in place; returns self."},
    {"zero_", "zero_(self)", "Sets every element to 0 in place; returns self."},
    {"masked_fill_", "masked_fill_(self, mask, value)", "In place: value where mask is True."},
};

struct Property {
    const char* name;
    const char* text;
};

constexpr Property kProperties[] = {
    {"shape", "The size of each dimension, a tuple of ints."},
    {"dtype", "The element type: kael.float32, float64, bfloat16, float16, int64, int32, int16, "
              "int8, uint8 or bool."},
    {"device", "The device the elements live on (kael.device('cpu'), device('cuda:0'), ...)."},
    {"ndim", "The number of dimensions."},
    {"grad", "The gradient backward accumulated for this leaf, or None."},
    {"grad_fn", "The autograd node that made this tensor, or None for a leaf."},
    {"requires_grad", "True if autograd records operations on this tensor."},
    {"is_leaf", "True for a tensor not made by a recorded operation (gradients accumulate here)."},
    {"is_cpu", "True if the tensor lives on the cpu."},
    {"is_cuda", "True if the tensor lives on a cuda device (emulated or real)."},
    {"itemsize", "The size of one element in bytes."},
    {"nbytes", "The size of all elements in bytes."},
};

}  // namespace

void add_tensor_docs(Docs& docs) {
    docs["Tensor"] = R"doc(A multi-dimensional array of one dtype (float32, float64, bfloat16, float16, int64, int32, int16, int8, uint8, bool) on one device, with
views (reshape, transpose, slicing share memory), autograd (requires_grad, backward, grad) and
the operations of kael's module functions as methods.

Example:

    >>> x = kael.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (x @ x.T).sum().backward()
    >>> x.grad
)doc";
    for (const Method& method : kMethods) {
        docs[std::string("Tensor.") + method.name] = documented(method.signature, method.text);
    }
    for (const Property& property : kProperties) {
        docs[std::string("Tensor.") + property.name] = std::string(property.text) + "\n";
    }
}

}  // namespace kael::python::docs
