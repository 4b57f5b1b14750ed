// kael._kael._add_docstr, PyTorch's torch._C._add_docstr for pybind11 objects: the Tensor's and
// the classes' docstring tables (python/kael/_docs_tensor.py, _docs_classes.py) are attached at
// import. The functions' docstrings are passed where they are bound (docs_*.h, docs_*.cpp).
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
// With KAEL_PYBIND_SIGNATURES set (python/tools/generate_stubs.py), pybind11's typed lines are
// kept and the docstring follows them.
void set_function_doc(PyCFunctionObject* function, const std::string& doc, const char* name) {
    auto* method = const_cast<PyMethodDef*>(function->m_ml);
    std::string text = doc;
    if (std::getenv("KAEL_PYBIND_SIGNATURES") != nullptr && method->ml_doc != nullptr) {
        text = std::string(method->ml_doc) + "\n" + doc;
    } else if (has_signature(method->ml_doc)) {
        throw ValueError(std::string("_add_docstr: ") + name + " already has a docstring");
    }
    char* copy = strdup(text.c_str());
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
    if (PyType_Check(target)) {  // a heap type's __doc__ is read from its dict
        auto* type = reinterpret_cast<PyTypeObject*>(target);
        if (PyDict_SetItemString(type->tp_dict, "__doc__", py::str(doc).ptr()) != 0) {
            throw py::error_already_set();
        }
        PyType_Modified(type);
        return;
    }
    if (PyObject_TypeCheck(target, &PyProperty_Type)) {
        py::handle(target).attr("__doc__") = doc;
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
