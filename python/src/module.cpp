// The kael._kael extension module: error mapping, then one registration per binding file.
#include "bind_common.h"
#include "kael/error.h"

namespace py = pybind11;

namespace {

// Text as a Python str; bytes that are not UTF-8 (a corrupt name, a path) are written as
// \xNN escapes rather than losing the whole message.
PyObject* decode_message(const std::string& text) {
    return PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()),
                                "backslashreplace");
}

void set_error(PyObject* type, const char* what) {
    PyObject* message = decode_message(what);
    if (message != nullptr) {
        PyErr_SetObject(type, message);
        Py_DECREF(message);
    }
}

// OSError(errno, reason, filename): Python picks the subclass of the errno
// (FileNotFoundError, PermissionError, IsADirectoryError, ...), as PyErr_SetFromErrno does.
void set_os_error(const kael::OSError& error) {
    PyObject* reason = decode_message(error.reason());
    PyObject* filename = error.path().empty()
                             ? Py_NewRef(Py_None)
                             : PyUnicode_DecodeFSDefaultAndSize(
                                   error.path().data(), static_cast<Py_ssize_t>(error.path().size()));
    if (reason != nullptr && filename != nullptr) {
        PyObject* instance =
            PyObject_CallFunction(PyExc_OSError, "iOO", error.code(), reason, filename);
        if (instance != nullptr) {
            PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(instance)), instance);
            Py_DECREF(instance);
        }
    }
    Py_XDECREF(reason);
    Py_XDECREF(filename);
}

// kael's typed errors become the Python exceptions of the same meaning, with the same message.
void translate_kael_errors(std::exception_ptr error) {
    try {
        if (error) std::rethrow_exception(error);
    } catch (const kael::ValueError& e) {
        set_error(PyExc_ValueError, e.what());
    } catch (const kael::TypeError& e) {
        set_error(PyExc_TypeError, e.what());
    } catch (const kael::IndexError& e) {
        set_error(PyExc_IndexError, e.what());
    } catch (const kael::OutOfMemoryError& e) {
        set_error(PyExc_MemoryError, e.what());
    } catch (const kael::OSError& e) {
        set_os_error(e);
    } catch (const kael::Error& e) {  // DeviceError and any other kael error
        set_error(PyExc_RuntimeError, e.what());
    }
}

}  // namespace

PYBIND11_MODULE(_kael, module) {
    module.doc() = "kael: tensors, autograd and nn over plugin device backends";
    py::register_exception_translator(translate_kael_errors);
    kael::python::bind_devices(module);
    kael::python::bind_tensor(module);
    kael::python::bind_ops(module);
    kael::python::bind_autograd(module);
    kael::python::bind_nn(module);
    kael::python::bind_dlpack(module);
}
