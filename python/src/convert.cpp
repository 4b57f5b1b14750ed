// Conversions from Python objects (see bind_common.h).
#include <cstring>
#include <variant>
#include <vector>

#include "bind_common.h"
#include "kael/ops.h"

namespace kael::python {

namespace {

// bool < int < float, the order in which Python scalars and dtypes promote.
enum class ScalarKind { Bool = 0, Int = 1, Float = 2 };

ScalarKind kind_of(DType dtype) {
    switch (dtype) {
        case DType::Bool: return ScalarKind::Bool;
        case DType::I64: return ScalarKind::Int;
        default: return ScalarKind::Float;
    }
}

DType default_dtype(ScalarKind kind) {
    switch (kind) {
        case ScalarKind::Bool: return DType::Bool;
        case ScalarKind::Int: return DType::I64;
        default: return DType::F32;
    }
}

bool numpy_loaded() { return py::module_::import("sys").attr("modules").contains("numpy"); }

// Python bool/int/float as is; numpy scalars and one-element arrays or tensors through their
// item(); anything else is null.
py::object plain_scalar(py::handle object) {
    if (PyBool_Check(object.ptr()) || PyLong_Check(object.ptr()) ||
        PyFloat_Check(object.ptr())) {
        return py::reinterpret_borrow<py::object>(object);
    }
    const bool numpy_scalar =
        numpy_loaded() &&
        py::isinstance(object, py::module_::import("numpy").attr("generic"));
    if (numpy_scalar) {
        py::object value = object.attr("item")();
        if (PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) ||
            PyFloat_Check(value.ptr())) {
            return value;
        }
    }
    return py::object();
}

ScalarKind scalar_kind(py::handle plain) {
    if (PyBool_Check(plain.ptr())) return ScalarKind::Bool;
    if (PyLong_Check(plain.ptr())) return ScalarKind::Int;
    return ScalarKind::Float;
}

Tensor scalar_tensor_of(py::handle plain, DType dtype, const Device& device) {
    if (dtype == DType::I64) {
        return full_int({}, plain.cast<std::int64_t>(), DType::I64, device);
    }
    return full({}, plain.cast<double>(), dtype, device);
}

// Leaves of nested sequences, in order, with the shape they fill.
struct Flattened {
    Shape shape;
    std::vector<py::object> leaves;
    ScalarKind kind = ScalarKind::Bool;
    bool any_leaf = false;
};

void flatten(py::handle data, std::size_t depth, Flattened& out) {
    if (py::isinstance<Tensor>(data)) {
        flatten(data.attr("tolist")(), depth, out);
        return;
    }
    py::object plain = plain_scalar(data);
    if (plain) {
        if (depth != out.shape.size()) {
            throw ValueError("tensor: a number where a sequence of length " +
                             std::to_string(out.shape[depth]) + " was expected (dimension " +
                             std::to_string(depth) + ")");
        }
        const ScalarKind kind = scalar_kind(plain);
        out.kind = out.any_leaf ? std::max(out.kind, kind) : kind;
        out.any_leaf = true;
        out.leaves.push_back(std::move(plain));
        return;
    }
    if (py::isinstance<py::str>(data) || py::isinstance<py::bytes>(data) ||
        !PySequence_Check(data.ptr())) {
        throw TypeError("tensor: cannot make a tensor element from an object of type " +
                        std::string(py::str(py::type::of(data).attr("__name__"))));
    }
    const py::sequence sequence = py::reinterpret_borrow<py::sequence>(data);
    const auto length = static_cast<std::int64_t>(py::len(sequence));
    const bool first_at_depth = out.leaves.empty() && depth == out.shape.size();
    if (first_at_depth) {
        out.shape.resize(depth + 1, length);  // push_back trips GCC 12's -Warray-bounds here
    } else if (depth >= out.shape.size() || out.shape[depth] != length) {
        throw ValueError("tensor: ragged nested sequence: length " + std::to_string(length) +
                         " at dimension " + std::to_string(depth) + " where " +
                         (depth < out.shape.size() ? std::to_string(out.shape[depth])
                                                   : std::string("a number")) +
                         " was expected");
    }
    for (const py::handle item : sequence) {
        flatten(item, depth + 1, out);
    }
}

template <typename T> void fill_host(const Flattened& flat, Tensor& host) {
    auto* values = static_cast<T*>(host.device_data());
    for (std::size_t i = 0; i < flat.leaves.size(); ++i) {
        if constexpr (std::is_same_v<T, bool>) {
            values[i] = flat.leaves[i].cast<double>() != 0;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
            // Floats into an integer tensor truncate, as in PyTorch.
            values[i] = PyFloat_Check(flat.leaves[i].ptr())
                            ? static_cast<std::int64_t>(flat.leaves[i].cast<double>())
                            : flat.leaves[i].cast<std::int64_t>();
        } else {
            values[i] = flat.leaves[i].cast<T>();
        }
    }
}

std::string numpy_name(DType dtype) {
    switch (dtype) {
        case DType::F32: return "float32";
        case DType::F64: return "float64";
        case DType::I64: return "int64";
        default: return "bool";
    }
}

DType dtype_of_numpy(py::handle numpy_dtype) {
    const std::string kind = py::str(numpy_dtype.attr("kind"));
    const auto size = numpy_dtype.attr("itemsize").cast<int>();
    if (kind == "f" && size <= 4) return DType::F32;
    if (kind == "f" && size == 8) return DType::F64;
    if (kind == "i" || kind == "u") return DType::I64;
    if (kind == "b") return DType::Bool;
    throw TypeError("kael has no dtype for numpy dtype " + std::string(py::str(numpy_dtype)) +
                    "; kael dtypes are float32, float64, int64 and bool");
}

Tensor from_numpy_copy(py::handle array, std::optional<DType> dtype, const Device& device) {
    const DType target = dtype.value_or(dtype_of_numpy(array.attr("dtype")));
    const py::module_ numpy = py::module_::import("numpy");
    py::object contiguous =
        numpy.attr("ascontiguousarray")(array, py::arg("dtype") = numpy_name(target));
    Tensor host = empty(sequence_to_shape(contiguous.attr("shape")), target, kCPU);
    const auto address = contiguous.attr("ctypes").attr("data").cast<std::uintptr_t>();
    if (host.numel() > 0) {
        std::memcpy(host.device_data(), reinterpret_cast<const void*>(address),
                    static_cast<std::size_t>(host.nbytes()));
    }
    return host.to(device);
}

}  // namespace

DType to_dtype(py::handle object) {
    if (py::isinstance<DType>(object)) {
        return object.cast<DType>();
    }
    if (py::isinstance<py::str>(object)) {
        const std::string name = object.cast<std::string>();
        return parse_dtype(name == "bool_" ? "bool" : name);
    }
    if (object.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::F64;
    if (object.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::I64;
    if (object.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
    if (numpy_loaded()) {
        try {
            return dtype_of_numpy(py::module_::import("numpy").attr("dtype")(object));
        } catch (const py::error_already_set&) {
            // Not something numpy understands as a dtype: the TypeError below says what is.
        }
    }
    throw TypeError("expected a kael dtype (kael.float32, kael.float64, kael.int64, kael.bool_ "
                    "or 'f32', 'f64', 'i64', 'bool'), got " + std::string(py::repr(object)));
}

std::optional<DType> to_optional_dtype(py::handle object) {
    if (object.is_none()) return std::nullopt;
    return to_dtype(object);
}

bool is_device_like(py::handle object) {
    return py::isinstance<Device>(object) || py::isinstance<py::str>(object);
}

Device to_device(py::handle object) {
    if (object.is_none()) return kCPU;
    if (py::isinstance<Device>(object)) return object.cast<Device>();
    if (py::isinstance<py::str>(object)) return Device(object.cast<std::string>());
    throw TypeError("expected a kael.device or a device name such as 'cpu' or 'cuda:0', got " +
                    std::string(py::repr(object)));
}

Shape sequence_to_shape(py::handle sequence) {
    Shape shape;
    for (const py::handle size : py::reinterpret_borrow<py::iterable>(sequence)) {
        shape.push_back(size.cast<std::int64_t>());
    }
    return shape;
}

Shape to_shape(const py::args& sizes) {
    if (sizes.size() == 1 && !PyLong_Check(sizes[0].ptr()) &&
        PySequence_Check(sizes[0].ptr())) {
        return sequence_to_shape(sizes[0]);
    }
    return sequence_to_shape(sizes);
}

bool is_python_scalar(py::handle object) { return static_cast<bool>(plain_scalar(object)); }

Tensor scalar_for(py::handle scalar, const Tensor& like) {
    py::object plain = plain_scalar(scalar);
    if (!plain) {
        throw TypeError("expected a tensor or a Python number, got " +
                        std::string(py::str(py::type::of(scalar).attr("__name__"))));
    }
    const ScalarKind kind = scalar_kind(plain);
    if (!like.defined()) {
        return scalar_tensor_of(plain, default_dtype(kind), kCPU);
    }
    const DType dtype = kind <= kind_of(like.dtype()) ? like.dtype() : default_dtype(kind);
    return scalar_tensor_of(plain, dtype, like.device());
}

Tensor operand(py::handle object, const Tensor& like) {
    if (py::isinstance<Tensor>(object)) return object.cast<Tensor>();
    return scalar_for(object, like);
}

std::pair<Tensor, Tensor> operands(py::handle a, py::handle b, const char* op) {
    const bool a_tensor = py::isinstance<Tensor>(a);
    const bool b_tensor = py::isinstance<Tensor>(b);
    if (!a_tensor && !b_tensor) {
        throw TypeError(std::string(op) + ": expected at least one tensor operand, got " +
                        std::string(py::str(py::type::of(a).attr("__name__"))) + " and " +
                        std::string(py::str(py::type::of(b).attr("__name__"))));
    }
    if (a_tensor && b_tensor) return {a.cast<Tensor>(), b.cast<Tensor>()};
    if (a_tensor) {
        const auto tensor = a.cast<Tensor>();
        return {tensor, scalar_for(b, tensor)};
    }
    const auto tensor = b.cast<Tensor>();
    return {scalar_for(a, tensor), tensor};
}

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, const Device& device) {
    if (py::isinstance<Tensor>(data)) {
        const Tensor source = data.cast<Tensor>().detach();
        return source.to(device).to(dtype.value_or(source.dtype())).clone();
    }
    if (numpy_loaded() && py::isinstance(data, py::module_::import("numpy").attr("ndarray"))) {
        return from_numpy_copy(data, dtype, device);
    }
    Flattened flat;
    flatten(data, 0, flat);
    // An empty list is f32, as in PyTorch.
    const DType target = dtype.value_or(flat.any_leaf ? default_dtype(flat.kind) : DType::F32);
    Tensor host = empty(flat.shape, target, kCPU);
    switch (target) {
        case DType::F32: fill_host<float>(flat, host); break;
        case DType::F64: fill_host<double>(flat, host); break;
        case DType::I64: fill_host<std::int64_t>(flat, host); break;
        case DType::Bool: fill_host<bool>(flat, host); break;
    }
    return host.to(device);
}

py::object tensor_or_none(const Tensor& tensor) {
    if (!tensor.defined()) return py::none();
    return py::cast(tensor);
}

Tensor optional_tensor(py::handle object) {
    if (object.is_none()) return Tensor();
    return object.cast<Tensor>();
}

}  // namespace kael::python
