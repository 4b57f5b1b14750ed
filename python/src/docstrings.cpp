// kael._kael._add_docstr, PyTorch's torch._C._add_docstr for pybind11 objects: the docstring
// tables in python/kael/_docs_*.py are attached at import, so docs need no edits of the bindings.
#include <Python.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "bind_common.h"

namespace kael::python {
namespace {

// A docstring that opens with a text signature was written for Python already; attaching a
// second one is a mistake. An older one-line docstring is replaced.
bool has_signature(const char* doc) {
    return doc != nullptr && std::strstr(doc, "\n--\n\n") != nullptr;
}

// pybind11 allocates each function's ml_doc with strdup and frees it with std::free, so the
// replacement is made the same way and the function keeps owning it.
void set_function_doc(PyCFunctionObject* function, const std::string& doc, const char* name) {
    auto* method = const_cast<PyMethodDef*>(function->m_ml);
    if (has_signature(method->ml_doc)) {
        throw ValueError(std::string("_add_docstr: ") + name + " already has a docstring");
    }
    char* copy = strdup(doc.c_str());
    if (copy == nullptr) throw std::bad_alloc();
    std::free(const_cast<char*>(method->ml_doc));
    method->ml_doc = copy;
}

void add_docstr(py::handle object, const std::string& doc) {
    const std::string name = py::str(py::repr(object));
    PyObject* target = object.ptr();
    if (PyInstanceMethod_Check(target)) target = PyInstanceMethod_GET_FUNCTION(target);
    if (Py_IS_TYPE(target, &PyStaticMethod_Type)) target = py::handle(target).attr("__func__").ptr();
    if (PyCFunction_Check(target)) {
        set_function_doc(reinterpret_cast<PyCFunctionObject*>(target), doc, name.c_str());
        return;
    }
    if (PyObject_TypeCheck(target, &PyProperty_Type) || PyType_Check(target)) {
        py::handle handle(target);
        handle.attr("__doc__") = doc;
        return;
    }
    throw TypeError("_add_docstr: " + name + " is not a kael builtin, property or class");
}

}  // namespace

void bind_docstrings(py::module_& module) {
    module.def("_add_docstr", &add_docstr, py::arg("object"), py::arg("doc"),
               "_add_docstr(object, doc)\n--\n\nAttaches doc to a builtin function, method, "
               "property or class of kael._kael that has none (kael's docstring tables use it).");
}

}  // namespace kael::python
