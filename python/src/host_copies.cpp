// Host copies of tensors as Python objects: lists, numbers and numpy arrays.
#include <pybind11/numpy.h>

#include <cstring>

#include "bind_common.h"

namespace kael::python {

namespace {

// A contiguous host copy without gradient history.
Tensor host_contiguous(const Tensor& tensor) { return tensor.detach().cpu().contiguous(); }

// The host copy Python numbers are read from: bfloat16 and float16 as float32, the narrow
// integers as int64 (exact).
Tensor host_values(const Tensor& tensor) {
    const Tensor host = host_contiguous(tensor);
    return host.to(compute_dtype(host.dtype()));
}

py::object element(const void* data, DType dtype, std::int64_t at) {
    switch (dtype) {
        case DType::F32: return py::float_(static_cast<const float*>(data)[at]);
        case DType::F64: return py::float_(static_cast<const double*>(data)[at]);
        case DType::I64: return py::int_(static_cast<const std::int64_t*>(data)[at]);
        default: return py::bool_(static_cast<const std::uint8_t*>(data)[at] != 0);
    }
}

py::object nested(const void* data, DType dtype, const Shape& shape, std::size_t depth,
                  std::int64_t& at) {
    if (depth == shape.size()) return element(data, dtype, at++);
    py::list items;
    for (std::int64_t i = 0; i < shape[depth]; ++i) {
        items.append(nested(data, dtype, shape, depth + 1, at));
    }
    return items;
}

}  // namespace

py::object to_list(const Tensor& tensor) {
    // One recursion level per dimension: bounded by the rank limit, whatever made the tensor.
    if (tensor.dim() > kMaxRank) {
        throw ValueError("tolist: tensor of " + std::to_string(tensor.dim()) +
                         " dimensions; at most " + std::to_string(kMaxRank) + " are supported");
    }
    const Tensor host = host_values(tensor);
    std::int64_t at = 0;
    return nested(host.device_data(), host.dtype(), host.shape(), 0, at);
}

py::object to_item(const Tensor& tensor) {
    if (tensor.numel() != 1) {
        throw py::value_error("item: expected a tensor with one element, got shape " +
                              to_string(tensor.shape()));
    }
    const Tensor host = host_values(tensor);
    return element(host.device_data(), host.dtype(), 0);
}

py::object to_numpy(const Tensor& tensor) {
    if (tensor.dtype() == DType::BF16) {  // as PyTorch: numpy has no bfloat16
        throw TypeError("numpy: numpy has no bfloat16; convert with .float() first");
    }
    const Tensor host = host_contiguous(tensor);
    const char* numpy_names[] = {"float32", "float64", "int64", "bool",  "bfloat16",
                                 "float16", "int32",   "int16", "int8", "uint8"};
    const py::dtype dtype(numpy_names[static_cast<int>(host.dtype())]);
    py::array array(dtype, std::vector<py::ssize_t>(host.shape().begin(), host.shape().end()));
    if (host.numel() > 0) {
        std::memcpy(array.mutable_data(), host.device_data(),
                    static_cast<std::size_t>(host.nbytes()));
    }
    return array;
}

}  // namespace kael::python
