// Python numbers as C++ numbers, with errors that name the op (see bind_common.h).
#include "bind_common.h"

namespace kael::python {

namespace {

std::string prefix(const char* op, const char* what) {
    return std::string(op) + ": " + what;
}

// The value for a message; a huge int is described by its size, since Python refuses to print
// ints of more than 4300 digits.
std::string describe_int(py::handle integer) {
    const auto bits = integer.attr("bit_length")().cast<std::int64_t>();
    if (bits > 256) return "an int of " + std::to_string(bits) + " bits";
    return std::string(py::str(integer));
}

bool is_numpy_number(py::handle object) {
    const py::object modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("numpy")) return false;
    return py::isinstance(object, modules["numpy"].attr("number")) ||
           py::isinstance(object, modules["numpy"].attr("bool_"));
}

}  // namespace

std::string type_name(py::handle object) {
    return std::string(py::str(py::type::of(object).attr("__name__")));
}

bool is_integral_number(py::handle object) {
    if (PyLong_Check(object.ptr())) return true;
    const py::object modules = py::module_::import("sys").attr("modules");
    return modules.contains("numpy") && py::isinstance(object, modules["numpy"].attr("integer"));
}

std::int64_t to_int64(py::handle object, const char* op, const char* what) {
    const bool integral = !PyFloat_Check(object.ptr()) &&
                          (PyLong_Check(object.ptr()) || PyIndex_Check(object.ptr()));
    if (!integral) {
        throw TypeError(prefix(op, what) + " must be an int, got " + type_name(object));
    }
    // PyNumber_Index gives the int of numpy integers and one-element int tensors.
    const auto integer = py::reinterpret_steal<py::object>(PyNumber_Index(object.ptr()));
    if (!integer) {  // a float tensor's __index__, for one, refuses
        PyErr_Clear();
        throw TypeError(prefix(op, what) + " must be an int, got " + type_name(object));
    }
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
    if (overflow != 0) {
        throw OverflowError(prefix(op, what) + " " + describe_int(integer) +
                            " is outside the range of int64 [-2**63, 2**63 - 1]");
    }
    if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
    static_assert(sizeof(long long) == sizeof(std::int64_t));
    return static_cast<std::int64_t>(value);
}

double to_double(py::handle object, const char* op, const char* what) {
    if (PyFloat_Check(object.ptr())) return PyFloat_AS_DOUBLE(object.ptr());
    if (PyLong_Check(object.ptr())) {
        const double value = PyLong_AsDouble(object.ptr());
        if (value == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            throw OverflowError(prefix(op, what) + " " + describe_int(object) +
                                " is too large for a float");
        }
        return value;
    }
    if (is_numpy_number(object)) {
        const py::object item = object.attr("item")();
        if (PyFloat_Check(item.ptr()) || PyLong_Check(item.ptr())) return to_double(item, op, what);
    }
    throw TypeError(prefix(op, what) + " must be a number, got " + type_name(object));
}

}  // namespace kael::python
