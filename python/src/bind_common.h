#pragma once
// Conversions shared by the binding files: Python objects to dtypes, devices, shapes and
// tensors, following PyTorch's conventions for Python scalars.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <string>

#include "kael/error.h"
#include "kael/tensor.h"

namespace kael::python {

namespace py = pybind11;

// A Python number outside the range of the C++ type it goes to (an int >= 2^63 for int64); the
// module maps it to Python's OverflowError.
class OverflowError : public Error {
public:
    using Error::Error;
};

// Python numbers as C++ ones, with errors that name op (the function the user called) and what
// (the argument): ints (bools, numpy integers, anything with __index__) to int64, OverflowError
// outside its range, TypeError for a float or a non-number. Use these, never py::cast, for
// numbers from users: pybind11's cast errors name C++ types.
[[nodiscard]] std::int64_t to_int64(py::handle object, const char* op, const char* what);
// Ints, floats, bools and numpy numbers to double (OverflowError for an int beyond double's range).
[[nodiscard]] double to_double(py::handle object, const char* op, const char* what);
// An int, bool or numpy integer (not a float, not a tensor): what to_int64 takes exactly.
[[nodiscard]] bool is_integral_number(py::handle object);
// The name of object's type ('float', 'Tensor'), for messages.
[[nodiscard]] std::string type_name(py::handle object);
// object as T through pybind11, or a TypeError that names op, the argument (what), the types it
// takes (expected) and the one it got, for casts inside a binding (pybind11's own cast errors
// name C++ types and not the function).
template <typename T>
[[nodiscard]] T cast_argument(py::handle object, const char* op, const char* what,
                              const char* expected) {
    try {
        return object.cast<T>();
    } catch (const py::cast_error&) {
        throw TypeError(std::string(op) + ": " + what + " must be " + expected + ", not " +
                        type_name(object));
    }
}

// The docstring of a member pybind11 defines itself (py::enum_'s __init__ and value), where no
// def can pass one (docstrings.cpp).
void set_generated_doc(py::handle member, const char* doc);

// One registration function per binding file, called in this order by module.cpp.
void bind_devices(py::module_& module);
void bind_tensor(py::module_& module);
// After bind_tensor, so that signatures in errors say kael._kael.Tensor, not kael::Tensor.
void bind_factories(py::module_& module);
void bind_ops(py::module_& module);
// After bind_ops: the composite shape, selection and reduction ops (bind_composite_ops.cpp).
void bind_composite_ops(py::module_& module);
void bind_autograd(py::module_& module);
void bind_nn(py::module_& module);
void bind_dlpack(py::module_& module);
void bind_safetensors(py::module_& module);
void bind_tokenizer(py::module_& module);
// Last: two tensors' + - * / straight from the number slots (fast_operators.cpp).
void bind_fast_operators(py::module_& module);
void bind_elemops(py::module_& module);
// kael.Generator, RNG state and the random ops (bind_random.cpp).
void bind_random(py::module_& module);
void bind_distributed(py::module_& module);

// kael.float32 (or any kael dtype), a name ('f32', 'float32', 'int64', 'bool', ...) or a numpy
// dtype / scalar type (np.float32, float, bool).
// A TypeError for anything else names op when given.
[[nodiscard]] DType to_dtype(py::handle object, const char* op = nullptr);
[[nodiscard]] std::optional<DType> to_optional_dtype(py::handle object, const char* op = nullptr);
// kael.device or text ('cpu', 'cuda', 'cuda:1'); None gives cpu.
[[nodiscard]] Device to_device(py::handle object, const char* op = nullptr);
[[nodiscard]] bool is_device_like(py::handle object);
// The device and dtype of a to(...) call (Tensor.to, Module.to): positional devices, dtypes, a
// tensor (its device and dtype) or a string of either; keywords device= and dtype=.
[[nodiscard]] std::pair<std::optional<Device>, std::optional<DType>> to_arguments(
    const py::args& args, const py::kwargs& kwargs, const char* op);
// Sizes given as f(2, 3) or f((2, 3)) / f([2, 3]); op names the function in errors.
[[nodiscard]] Shape to_shape(const py::args& sizes, const char* op);
[[nodiscard]] Shape sequence_to_shape(py::handle sequence, const char* op);
// A tuple or list of ints passed as argument what of op (TypeError naming both otherwise), or
// also a single int (as a list of one): dims, sizes, shifts, pad, normalized_shape.
[[nodiscard]] Shape int_sequence(py::handle sequence, const char* op, const char* what);
[[nodiscard]] Shape int_or_ints(py::handle object, const char* op, const char* what);
// An int size or a sequence of them, as full(size, ...) and randint(..., size) take.
[[nodiscard]] Shape size_argument(py::handle size, const char* op);

// str, bytes or os.PathLike (pathlib.Path), as the bytes the OS sees (bind_nn.cpp).
[[nodiscard]] std::string path_argument(py::handle path);

[[nodiscard]] bool is_python_scalar(py::handle object);
// A Python number as a 0-d tensor that joins an op with like the way PyTorch's "weak" scalars
// do: it takes like's dtype unless it is of a higher kind (bool < int < float), then the
// default dtype of its kind (bool, i64, f32). It lives on like's device. op names the function
// in errors (an int too large for int64, a non-number).
[[nodiscard]] Tensor scalar_for(py::handle scalar, const Tensor& like, const char* op);
// A tensor operand: tensors as they are, Python scalars through scalar_for (like may be
// undefined: then the scalar's own default dtype on cpu). The default op is for t[key] = value.
[[nodiscard]] Tensor operand(py::handle object, const Tensor& like,
                             const char* op = "__setitem__");
// Whether object is a kael Tensor (or subclass), and its Tensor, without pybind11's per-call
// type lookup (a hash of the C++ type's name); tensor_of needs is_tensor(object).
[[nodiscard]] bool is_tensor(py::handle object);
[[nodiscard]] Tensor tensor_of(py::handle object);
// The Tensor inside object's instance, not a copy (null when it holds none); valid while object
// lives. Needs is_tensor(object).
[[nodiscard]] const Tensor* tensor_pointer(py::handle object);

// Both operands of a binary op, either of which may be a Python scalar (not both).
[[nodiscard]] std::pair<Tensor, Tensor> operands(py::handle a, py::handle b, const char* op);

// Nested sequences, Python scalars, numpy arrays or tensors as a new tensor (always a copy).
[[nodiscard]] Tensor tensor_from_data(py::handle data, std::optional<DType> dtype,
                                      const Device& device);
// gelu's approximate argument, 'none' or 'tanh' as in PyTorch (ValueError naming gelu otherwise):
// whether the tanh approximation is asked for. For kael.gelu and nn.GELU alike.
[[nodiscard]] bool gelu_uses_tanh(py::handle approximate);
// The tensor, or None when it is undefined (a missing gradient or bias).
[[nodiscard]] py::object tensor_or_none(const Tensor& tensor);
// None or a tensor (TypeError naming op and what for anything else).
[[nodiscard]] Tensor optional_tensor(py::handle object, const char* op, const char* what);
// A tensor argument (TypeError naming op and what for anything else).
[[nodiscard]] Tensor tensor_argument(py::handle object, const char* op, const char* what);

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
