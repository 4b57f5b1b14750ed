// a + b, a - b, a * b and a / b for two kael tensors straight from CPython's number slots. The
// methods pybind11 binds for them cost more than a small add itself: CPython's slot looks
// __add__ up by name, and pybind11's dispatcher runs its overload loop and argument casters.
// Any other operands (numbers, numpy arrays, subclasses) and every error go to the bound
// __add__ / __radd__ methods, as CPython's own slot would call them, with their checks and
// error messages.
#include <pybind11/pybind11.h>

#include <memory>

#include "bind_common.h"
#include "kael/ops.h"

namespace kael::python {
namespace {

PyTypeObject* exact_tensor_type = nullptr;

#if PYBIND11_VERSION_MAJOR == 2
// The result wrapped through Tensor's pybind11 type record found once: py::cast, and the
// generic caster's init_instance after it, look the record up by hashing the C++ type's name
// on every call, and search the registered instances for the new Tensor's address, which no
// object can have. This does what they do for a moved value with Tensor's default holder
// (std::unique_ptr): a new instance owning a heap Tensor, registered, its holder made.
// (pybind11 2.x's instance layout; other versions use py::cast.)
const py::detail::type_info* tensor_type_record = nullptr;

PyObject* wrap(Tensor&& result) {
    PyObject* const self = py::detail::make_new_instance(tensor_type_record->type);
    auto* const instance = reinterpret_cast<py::detail::instance*>(self);
    instance->owned = true;
    py::detail::value_and_holder slot = instance->get_value_and_holder(tensor_type_record);
    slot.value_ptr() = new Tensor(std::move(result));
    py::detail::register_instance(instance, slot.value_ptr(), tensor_type_record);
    slot.set_instance_registered();
    new (std::addressof(slot.holder<std::unique_ptr<Tensor>>()))
        std::unique_ptr<Tensor>(slot.value_ptr<Tensor>());
    slot.set_holder_constructed();
    return self;
}
#else
PyObject* wrap(Tensor&& result) {
    return py::cast(std::move(result)).release().ptr();
}
#endif

// The method names per slot, interned once: __add__ and __radd__, ...
template <int kSlot>
PyObject* forward_name = nullptr;
template <int kSlot>
PyObject* reflected_name = nullptr;

// CPython calls a type's number slot for either operand (a + b tries a's, then b's, both as
// (a, b)): self.__add__(other) when a is the tensor, b.__radd__(a) when only b is.
template <int kSlot>
PyObject* through_methods(PyObject* a, PyObject* b) {
    if (is_tensor(a)) {
        PyObject* const result = PyObject_CallMethodObjArgs(a, forward_name<kSlot>, b, nullptr);
        if (result != Py_NotImplemented || !is_tensor(b)) {
            return result;
        }
        Py_DECREF(result);
    }
    if (is_tensor(b)) {
        return PyObject_CallMethodObjArgs(b, reflected_name<kSlot>, a, nullptr);
    }
    Py_RETURN_NOTIMPLEMENTED;
}

template <int kSlot, Tensor (*op)(const Tensor&, const Tensor&)>
PyObject* tensor_slot(PyObject* a, PyObject* b) {
    if (Py_TYPE(a) == exact_tensor_type && Py_TYPE(b) == exact_tensor_type) {
        try {
            // The operands' own Tensors, not copies: both objects live through the call.
            const Tensor* left = tensor_pointer(a);
            const Tensor* right = tensor_pointer(b);
            if (left != nullptr && right != nullptr) {
                return wrap(op(*left, *right));
            }
        } catch (...) {
            // Again through the methods, whose translators raise the Python error; the ops
            // write nothing before they fail.
        }
    }
    return through_methods<kSlot>(a, b);
}

Tensor add_tensors(const Tensor& a, const Tensor& b) {
    return add(a, b);
}
Tensor sub_tensors(const Tensor& a, const Tensor& b) {
    return sub(a, b);
}
Tensor mul_tensors(const Tensor& a, const Tensor& b) {
    return mul(a, b);
}
Tensor div_tensors(const Tensor& a, const Tensor& b) {
    return div(a, b);
}

template <int kSlot, Tensor (*op)(const Tensor&, const Tensor&)>
void install(binaryfunc& slot, const char* forward, const char* reflected) {
    forward_name<kSlot> = PyUnicode_InternFromString(forward);
    reflected_name<kSlot> = PyUnicode_InternFromString(reflected);
    slot = &tensor_slot<kSlot, op>;
}

}  // namespace

void bind_fast_operators(py::module_& module) {
    auto* const type = reinterpret_cast<PyTypeObject*>(module.attr("Tensor").ptr());
    PyNumberMethods* const numbers = type->tp_as_number;
    if (numbers == nullptr || numbers->nb_add == nullptr || numbers->nb_subtract == nullptr ||
        numbers->nb_multiply == nullptr || numbers->nb_true_divide == nullptr) {
        return;  // pybind11 always fills them for a class with these methods
    }
    exact_tensor_type = type;
#if PYBIND11_VERSION_MAJOR == 2
    tensor_type_record = py::detail::get_type_info(typeid(Tensor));
#endif
    install<0, add_tensors>(numbers->nb_add, "__add__", "__radd__");
    install<1, sub_tensors>(numbers->nb_subtract, "__sub__", "__rsub__");
    install<2, mul_tensors>(numbers->nb_multiply, "__mul__", "__rmul__");
    install<3, div_tensors>(numbers->nb_true_divide, "__truediv__", "__rtruediv__");
    PyType_Modified(type);
}

}  // namespace kael::python
