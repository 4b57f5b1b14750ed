// Conversions from Python objects (see bind_common.h).
#include <cstdint>
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
        case DType::I64:
        case DType::I32:
        case DType::I16:
        case DType::I8:
        case DType::U8: return ScalarKind::Int;
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

std::string op_prefix(const char* op) { return op == nullptr ? "" : std::string(op) + ": "; }

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

// Operands from Python numbers come from the core's per-thread cache of shared 0-d tensors
// (no allocation and fill per op); they are only ever read. An int beyond 2^53 is made afresh,
// as a double would not hold it.
Tensor scalar_tensor_of(py::handle plain, DType dtype, const Device& device, const char* op) {
    if (is_integer(dtype)) {
        const std::int64_t value = wrap_integer(to_int64(plain, op, "value"), dtype);
        constexpr std::int64_t kExactInDouble = std::int64_t{1} << 53;
        if (value > kExactInDouble || value < -kExactInDouble) {
            return full_int({}, value, dtype, device);
        }
        return cached_scalar(static_cast<double>(value), dtype, device);
    }
    if (dtype == DType::Bool) {
        return cached_scalar(PyObject_IsTrue(plain.ptr()) ? 1 : 0, dtype, device);
    }
    return cached_scalar(to_double(plain, op, "value"), dtype, device);
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
                        type_name(data));
    }
    // Deeper data could not become a tensor anyway; the check also bounds this recursion.
    if (depth >= static_cast<std::size_t>(kMaxRank)) {
        throw ValueError("tensor: sequences nested more than " + std::to_string(kMaxRank) +
                         " deep (the most dimensions a tensor may have)");
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
    // By index, holding each item: a numpy array makes a new scalar per item, which a handle
    // from py::sequence's iterator would outlive; and exactly length items, as the shape says.
    for (std::int64_t i = 0; i < length; ++i) {
        const auto item = py::reinterpret_steal<py::object>(
            PySequence_GetItem(data.ptr(), static_cast<Py_ssize_t>(i)));
        if (!item) throw py::error_already_set();
        flatten(item, depth + 1, out);
    }
}

// PyTorch's check on a Python int stored into a narrow integer dtype.
void check_integer_range(std::int64_t value, DType dtype, const char* op) {
    const auto [low, high] = integer_range(dtype);
    if (value < low || value > high) {
        throw OverflowError(std::string(op) + ": value " + std::to_string(value) +
                            " cannot be converted to type " + kael::to_string(dtype) +
                            " without overflow");
    }
}

template <typename T>
void fill_host(const Flattened& flat, Tensor& host, DType target = dtype_of_v<T>) {
    auto* values = static_cast<T*>(host.device_data());
    for (std::size_t i = 0; i < flat.leaves.size(); ++i) {
        const py::handle leaf = flat.leaves[i];
        if constexpr (std::is_same_v<T, bool>) {
            values[i] = PyObject_IsTrue(leaf.ptr()) == 1;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
            // Floats into an integer tensor truncate, as in PyTorch.
            values[i] = PyFloat_Check(leaf.ptr())
                            ? static_cast<std::int64_t>(PyFloat_AS_DOUBLE(leaf.ptr()))
                            : to_int64(leaf, "tensor", "element");
            if (target != DType::I64) {
                check_integer_range(values[i], target, "tensor");
            }
        } else {
            values[i] = static_cast<T>(to_double(leaf, "tensor", "element"));
        }
    }
}

std::string numpy_name(DType dtype) {
    switch (dtype) {
        case DType::F32: return "float32";
        case DType::F64: return "float64";
        case DType::I64: return "int64";
        case DType::I32: return "int32";
        case DType::I16: return "int16";
        case DType::I8: return "int8";
        case DType::U8: return "uint8";
        case DType::F16: return "float16";
        case DType::BF16: return "bfloat16";  // numpy has none: it refuses the name
        default: return "bool";
    }
}

[[noreturn]] void no_kael_dtype(py::handle numpy_dtype, const char* op = nullptr) {
    throw TypeError(op_prefix(op) + "kael has no dtype for numpy dtype " +
                    std::string(py::str(numpy_dtype)) +
                    "; kael dtypes are float32, float64, float16, bfloat16, int64, int32, int16, "
                    "int8, uint8 and bool");
}

// numpy_dtype's kael dtype, or nothing when kael has none (uint16, uint32, uint64, complex).
std::optional<DType> same_dtype_of_numpy(py::handle numpy_dtype) {
    const std::string kind = py::str(numpy_dtype.attr("kind"));
    const auto size = numpy_dtype.attr("itemsize").cast<int>();
    if (kind == "f" && size == 2) return DType::F16;
    if (kind == "f" && size == 4) return DType::F32;
    if (kind == "f" && size == 8) return DType::F64;
    if (kind == "i" && size == 8) return DType::I64;
    if (kind == "i" && size == 4) return DType::I32;
    if (kind == "i" && size == 2) return DType::I16;
    if (kind == "i" && size == 1) return DType::I8;
    if (kind == "u" && size == 1) return DType::U8;
    if (kind == "b") return DType::Bool;
    return std::nullopt;
}

// The kael dtype that holds every value of numpy_dtype: its own, or for uint16 .. uint64 the
// next wider signed integer (uint64 must then fit int64).
DType holding_dtype_of_numpy(py::handle numpy_dtype) {
    if (const std::optional<DType> same = same_dtype_of_numpy(numpy_dtype)) return *same;
    const std::string kind = py::str(numpy_dtype.attr("kind"));
    const auto size = numpy_dtype.attr("itemsize").cast<int>();
    if (kind == "u") return size == 2 ? DType::I32 : DType::I64;
    no_kael_dtype(numpy_dtype);
}

// A numpy dtype asked for as a tensor's dtype must be one kael has: uint16 is no int32.
DType exact_dtype_of_numpy(py::handle numpy_dtype, const char* op) {
    if (const std::optional<DType> same = same_dtype_of_numpy(numpy_dtype)) return *same;
    no_kael_dtype(numpy_dtype, op);
}

// uint64 values of 2**63 and more would wrap to negative int64 values.
void check_fits_int64(py::handle array, DType target) {
    const py::object numpy_dtype = array.attr("dtype");
    const bool unsigned64 = std::string(py::str(numpy_dtype.attr("kind"))) == "u" &&
                            numpy_dtype.attr("itemsize").cast<int>() == 8;
    const bool empty_array = array.attr("size").cast<std::int64_t>() == 0;
    if (!unsigned64 || target != DType::I64 || empty_array) return;
    const py::int_ largest(array.attr("max")());  // a Python int: numpy would compare as floats
    if (largest > py::int_(INT64_MAX)) {
        throw OverflowError("tensor: uint64 value " + std::string(py::str(py::handle(largest))) +
                            " is outside the range of int64 [-2**63, 2**63 - 1]");
    }
}

Tensor from_numpy_copy(py::handle array, std::optional<DType> dtype, const Device& device) {
    if (array.attr("ndim").cast<std::int64_t>() > kMaxRank) {
        throw ValueError("tensor: a numpy array of more than " + std::to_string(kMaxRank) +
                         " dimensions");
    }
    const DType target = dtype.value_or(holding_dtype_of_numpy(array.attr("dtype")));
    check_fits_int64(array, target);
    const py::module_ numpy = py::module_::import("numpy");
    // asarray, not ascontiguousarray, which makes a 0-d array 1-d.
    py::object contiguous = numpy.attr("asarray")(array, py::arg("dtype") = numpy_name(target),
                                                  py::arg("order") = "C");
    Tensor host = empty(sequence_to_shape(contiguous.attr("shape"), "tensor"), target, kCPU);
    const auto address = contiguous.attr("ctypes").attr("data").cast<std::uintptr_t>();
    if (host.numel() > 0) {
        std::memcpy(host.device_data(), reinterpret_cast<const void*>(address),
                    static_cast<std::size_t>(host.nbytes()));
    }
    return host.to(device);
}

}  // namespace

DType to_dtype(py::handle object, const char* op) {
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
            return exact_dtype_of_numpy(py::module_::import("numpy").attr("dtype")(object), op);
        } catch (const py::error_already_set&) {
            // Not something numpy understands as a dtype: the TypeError below says what is.
        }
    }
    throw TypeError(op_prefix(op) +
                    "expected a kael dtype (kael.float32, kael.float64, kael.bfloat16, "
                    "kael.float16, kael.int64, kael.int32, kael.int16, kael.int8, kael.uint8, "
                    "kael.bool_ or a name such as 'f32' or 'int8'), got " +
                    std::string(py::repr(object)));
}

std::optional<DType> to_optional_dtype(py::handle object, const char* op) {
    if (object.is_none()) return std::nullopt;
    return to_dtype(object, op);
}

bool is_device_like(py::handle object) {
    return py::isinstance<Device>(object) || py::isinstance<py::str>(object);
}

Device to_device(py::handle object, const char* op) {
    if (object.is_none()) return kCPU;
    if (py::isinstance<Device>(object)) return object.cast<Device>();
    if (py::isinstance<py::str>(object)) return Device(object.cast<std::string>());
    throw TypeError(op_prefix(op) +
                    "expected a kael.device or a device name such as 'cpu' or 'cuda:0', got " +
                    std::string(py::repr(object)));
}

Shape int_sequence(py::handle sequence, const char* op, const char* what) {
    if (!PySequence_Check(sequence.ptr()) || py::isinstance<py::str>(sequence)) {
        throw TypeError(std::string(op) + ": " + what + " must be a tuple or list of ints, got " +
                        type_name(sequence));
    }
    Shape values;
    // py::iter, not py::sequence, whose iteration ignores a failing len().
    for (const py::handle value : py::iter(sequence)) {
        values.push_back(to_int64(value, op, what));
    }
    return values;
}

Shape int_or_ints(py::handle object, const char* op, const char* what) {
    if (PyIndex_Check(object.ptr())) {
        return {to_int64(object, op, what)};
    }
    if (!PySequence_Check(object.ptr()) || py::isinstance<py::str>(object)) {
        throw TypeError(std::string(op) + ": " + what + " must be an int or a tuple of ints, got " +
                        type_name(object));
    }
    return int_sequence(object, op, what);
}

Shape sequence_to_shape(py::handle sequence, const char* op) {
    return int_sequence(sequence, op, "size");
}

namespace {

// One size: an int, or a 0-d tensor (a tensor's len() would refuse it).
bool is_single_size(py::handle object) {
    return is_integral_number(object) ||
           (py::isinstance<Tensor>(object) && object.cast<Tensor>().dim() == 0);
}

}  // namespace

Shape to_shape(const py::args& sizes, const char* op) {
    if (sizes.size() == 1 && !is_single_size(sizes[0]) && PySequence_Check(sizes[0].ptr())) {
        return sequence_to_shape(sizes[0], op);
    }
    return sequence_to_shape(sizes, op);
}

Shape size_argument(py::handle size, const char* op) {
    if (is_single_size(size) || !PySequence_Check(size.ptr())) {
        return Shape{to_int64(size, op, "size")};
    }
    return sequence_to_shape(size, op);
}

bool is_python_scalar(py::handle object) { return static_cast<bool>(plain_scalar(object)); }

Tensor scalar_for(py::handle scalar, const Tensor& like, const char* op) {
    py::object plain = plain_scalar(scalar);
    if (!plain) {
        throw TypeError(std::string(op) + ": expected a tensor or a Python number, got " +
                        type_name(scalar));
    }
    const ScalarKind kind = scalar_kind(plain);
    if (!like.defined()) {
        return scalar_tensor_of(plain, default_dtype(kind), kCPU, op);
    }
    const DType dtype = kind <= kind_of(like.dtype()) ? like.dtype() : default_dtype(kind);
    return scalar_tensor_of(plain, dtype, like.device(), op);
}

// Tensor's Python type, looked up once: pybind11's isinstance and cast find it by hashing the
// C++ type's name on every call, about a quarter of a small op's time from Python.
PyTypeObject* tensor_python_type() {
    static PyTypeObject* const type =
        reinterpret_cast<PyTypeObject*>(py::type::of<Tensor>().ptr());
    return type;
}

bool is_tensor(py::handle object) {
    PyTypeObject* const type = Py_TYPE(object.ptr());
    return type == tensor_python_type() || PyType_IsSubtype(type, tensor_python_type()) != 0;
}

const Tensor* tensor_pointer(py::handle object) {
    auto* const instance = reinterpret_cast<py::detail::instance*>(object.ptr());
    return instance->get_value_and_holder().value_ptr<Tensor>();
}

// object's Tensor (is_tensor(object) holds), read from its pybind11 instance directly.
Tensor tensor_of(py::handle object) {
    const Tensor* value = tensor_pointer(object);
    return value != nullptr ? *value : object.cast<Tensor>();  // cast names what is wrong
}

Tensor operand(py::handle object, const Tensor& like, const char* op) {
    if (is_tensor(object)) return tensor_of(object);
    return scalar_for(object, like, op);
}

std::pair<Tensor, Tensor> operands(py::handle a, py::handle b, const char* op) {
    const bool a_tensor = is_tensor(a);
    const bool b_tensor = is_tensor(b);
    if (!a_tensor && !b_tensor) {
        throw TypeError(std::string(op) + ": expected at least one tensor operand, got " +
                        type_name(a) + " and " + type_name(b));
    }
    if (a_tensor && b_tensor) return {tensor_of(a), tensor_of(b)};
    if (a_tensor) {
        const Tensor tensor = tensor_of(a);
        return {tensor, scalar_for(b, tensor, op)};
    }
    const Tensor tensor = tensor_of(b);
    return {scalar_for(a, tensor, op), tensor};
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
    // bfloat16 and float16 are rounded from float32, as PyTorch rounds Python floats to them;
    // the narrow integers are checked in int64, as PyTorch refuses a value they do not hold.
    Tensor host = empty(flat.shape, compute_dtype(target), kCPU);
    switch (host.dtype()) {
        case DType::F32: fill_host<float>(flat, host); break;
        case DType::F64: fill_host<double>(flat, host); break;
        case DType::I64: fill_host<std::int64_t>(flat, host, target); break;
        case DType::Bool: fill_host<bool>(flat, host); break;
        default: break;  // compute_dtype is one of the four above
    }
    return host.to(target).to(device);
}

// PyTorch's spellings: 'none' (exact erf) or 'tanh'.
bool gelu_uses_tanh(py::handle approximate) {
    if (PyBool_Check(approximate.ptr())) return approximate.ptr() == Py_True;  // kael's old form
    if (!py::isinstance<py::str>(approximate)) {
        throw TypeError("gelu: approximate must be 'none' or 'tanh', got " +
                        type_name(approximate));
    }
    const auto name = approximate.cast<std::string>();
    if (name != "none" && name != "tanh") {
        throw ValueError("gelu: approximate must be 'none' or 'tanh', got '" + name + "'");
    }
    return name == "tanh";
}

py::object tensor_or_none(const Tensor& tensor) {
    if (!tensor.defined()) return py::none();
    return py::cast(tensor);
}

Tensor optional_tensor(py::handle object, const char* op, const char* what) {
    if (object.is_none()) return Tensor();
    return tensor_argument(object, op, what);
}

Tensor tensor_argument(py::handle object, const char* op, const char* what) {
    if (!py::isinstance<Tensor>(object)) {
        throw TypeError(std::string(op) + ": " + what + " must be a tensor, got " +
                        type_name(object));
    }
    return object.cast<Tensor>();
}

}  // namespace kael::python
