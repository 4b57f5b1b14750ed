#pragma once
// Conversions shared by the binding files: Python objects to dtypes, devices, shapes and
// tensors, following PyTorch's conventions for Python scalars.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "kael/tensor.h"

namespace kael::python {

namespace py = pybind11;

// One registration function per binding file, called in this order by module.cpp.
void bind_devices(py::module_& module);
void bind_tensor(py::module_& module);
void bind_ops(py::module_& module);
void bind_autograd(py::module_& module);
void bind_nn(py::module_& module);
void bind_dlpack(py::module_& module);

// kael.float32 (or any kael dtype), a name ('f32', 'float32', 'int64', 'bool', ...) or a numpy
// dtype / scalar type (np.float32, float, bool).
[[nodiscard]] DType to_dtype(py::handle object);
[[nodiscard]] std::optional<DType> to_optional_dtype(py::handle object);
// kael.device or text ('cpu', 'cuda', 'cuda:1'); None gives cpu.
[[nodiscard]] Device to_device(py::handle object);
[[nodiscard]] bool is_device_like(py::handle object);
// Sizes given as f(2, 3) or f((2, 3)) / f([2, 3]).
[[nodiscard]] Shape to_shape(const py::args& sizes);
[[nodiscard]] Shape sequence_to_shape(py::handle sequence);

[[nodiscard]] bool is_python_scalar(py::handle object);
// A Python number as a 0-d tensor that joins an op with like the way PyTorch's "weak" scalars
// do: it takes like's dtype unless it is of a higher kind (bool < int < float), then the
// default dtype of its kind (bool, i64, f32). It lives on like's device.
[[nodiscard]] Tensor scalar_for(py::handle scalar, const Tensor& like);
// A tensor operand: tensors as they are, Python scalars through scalar_for (like may be
// undefined: then the scalar's own default dtype on cpu).
[[nodiscard]] Tensor operand(py::handle object, const Tensor& like);
// Both operands of a binary op, either of which may be a Python scalar (not both).
[[nodiscard]] std::pair<Tensor, Tensor> operands(py::handle a, py::handle b, const char* op);

// Nested sequences, Python scalars, numpy arrays or tensors as a new tensor (always a copy).
[[nodiscard]] Tensor tensor_from_data(py::handle data, std::optional<DType> dtype,
                                      const Device& device);
// The tensor, or None when it is undefined (a missing gradient or bias).
[[nodiscard]] py::object tensor_or_none(const Tensor& tensor);
// None or a tensor.
[[nodiscard]] Tensor optional_tensor(py::handle object);

}  // namespace kael::python

namespace kael::python {

// t[key] with numpy's and PyTorch's rules: ints, slices (positive steps), None and Ellipsis give
// views; index tensors, lists and bool masks (any leading shape) select pointwise (a copy).
[[nodiscard]] Tensor get_item(const Tensor& self, py::handle key);
// t[key] = value: writes through the view of key (copy_, with broadcasting), or index_put_.
void set_item(const Tensor& self, py::handle key, py::handle value);

// Host copies: nested lists of Python numbers, a number, a numpy array.
[[nodiscard]] py::object to_list(const Tensor& tensor);
[[nodiscard]] py::object to_item(const Tensor& tensor);
[[nodiscard]] py::object to_numpy(const Tensor& tensor);

}  // namespace kael::python
