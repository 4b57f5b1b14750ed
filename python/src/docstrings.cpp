// set_generated_doc: the docstring of a member that pybind11 defines itself (py::enum_'s
// __init__ and value), which no binding's def can pass one to. Every other docstring is passed
// where its function, method, property or class is defined (docs_functions.h).
#include <Python.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "bind_common.h"

namespace kael::python {

void set_generated_doc(py::handle member, const char* doc) {
    if (doc == nullptr) throw std::logic_error("set_generated_doc: no docstring in the table");
    PyObject* target = member.ptr();
    if (PyInstanceMethod_Check(target)) target = PyInstanceMethod_GET_FUNCTION(target);
    if (PyObject_TypeCheck(target, &PyProperty_Type)) {
        py::handle(target).attr("__doc__") = doc;
        return;
    }
    if (!PyCFunction_Check(target)) {
        throw std::logic_error("set_generated_doc: " + std::string(py::str(py::repr(member))) +
                               " is not a builtin function or a property");
    }
    // pybind11 allocates ml_doc with strdup and frees it with std::free, so the replacement is
    // made the same way. With KAEL_PYBIND_SIGNATURES (python/tools/generate_stubs.py) pybind11's
    // typed lines stay in front.
    auto* method = const_cast<PyMethodDef*>(reinterpret_cast<PyCFunctionObject*>(target)->m_ml);
    std::string text = doc;
    if (std::getenv("KAEL_PYBIND_SIGNATURES") != nullptr && method->ml_doc != nullptr) {
        text = std::string(method->ml_doc) + "\n" + text;
    }
    char* copy = strdup(text.c_str());
    if (copy == nullptr) throw std::bad_alloc();
    std::free(const_cast<char*>(method->ml_doc));
    method->ml_doc = copy;
}

}  // namespace kael::python
