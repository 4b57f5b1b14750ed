// The kael._kael extension module: error mapping, then one registration per binding file.
#include <array>
#include <cctype>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string_view>

#include "bind_common.h"
#include "kael/error.h"

namespace py = pybind11;

namespace {

struct Spelling {
    std::string_view cpp;
    std::string_view python;
};

// Core messages are written for C++ callers; Python users read Python spellings. Longer
// entries first, so a shorter one never rewrites part of a longer one.
constexpr std::array kPythonSpellings = {
    Spelling{"kael::NoGradGuard", "kael.no_grad()"},
    Spelling{"set_requires_grad(true)", "requires_grad_()"},
    Spelling{"retain_graph = true", "retain_graph=True"},
    Spelling{"retain_graph=true", "retain_graph=True"},
    Spelling{"set_requires_grad", "requires_grad_"},
    Spelling{"NoGradGuard", "kael.no_grad()"},
    Spelling{"set_grad", "grad"},
    Spelling{"nullptr", "None"},
    Spelling{"kael::", "kael."},
};

bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Replaces whole words only: set_grad, not the start of set_grad_enabled.
std::string python_spelling(std::string message) {
    for (const Spelling& spelling : kPythonSpellings) {
        std::size_t at = 0;
        while ((at = message.find(spelling.cpp, at)) != std::string::npos) {
            const std::size_t end = at + spelling.cpp.size();
            const bool whole = (at == 0 || !is_identifier_char(message[at - 1]) ||
                                !is_identifier_char(spelling.cpp.front())) &&
                               (end == message.size() || !is_identifier_char(message[end]) ||
                                !is_identifier_char(spelling.cpp.back()));
            if (!whole) {
                at = end;
                continue;
            }
            message.replace(at, spelling.cpp.size(), spelling.python);
            at += spelling.python.size();
        }
    }
    return message;
}

// Text as a Python str; bytes that are not UTF-8 (a corrupt name, a path) are written as
// \xNN escapes rather than losing the whole message.
PyObject* decode_message(const std::string& text) {
    return PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()),
                                "backslashreplace");
}

void set_error(PyObject* type, const std::exception& error) {
    PyObject* message = decode_message(python_spelling(error.what()));
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

// kael's typed errors become the Python exceptions of the same meaning, with the same message
// (in Python spellings). Conversions that fell through to pybind11 become TypeErrors without its
// C++ type names; the bindings convert user arguments themselves, so this is a safety net.
void translate_kael_errors(std::exception_ptr error) {
    try {
        if (error) std::rethrow_exception(error);
    } catch (const kael::python::OverflowError& e) {
        set_error(PyExc_OverflowError, e);
    } catch (const kael::ValueError& e) {
        set_error(PyExc_ValueError, e);
    } catch (const kael::TypeError& e) {
        set_error(PyExc_TypeError, e);
    } catch (const kael::IndexError& e) {
        set_error(PyExc_IndexError, e);
    } catch (const kael::OutOfMemoryError& e) {
        set_error(PyExc_MemoryError, e);
    } catch (const kael::OSError& e) {
        set_os_error(e);
    } catch (const kael::Error& e) {  // DeviceError and any other kael error
        set_error(PyExc_RuntimeError, e);
    } catch (const py::cast_error&) {
        PyErr_SetString(PyExc_TypeError,
                        "kael: an argument has a type or value this function does not take");
    } catch (const py::reference_cast_error&) {
        PyErr_SetString(PyExc_TypeError,
                        "kael: an argument has a type this function does not take");
    } catch (const std::bad_alloc&) {
        PyErr_SetString(PyExc_MemoryError, "kael: out of host memory");
    } catch (const std::length_error&) {
        PyErr_SetString(PyExc_MemoryError, "kael: the requested size is too large to allocate");
    }
}

}  // namespace

PYBIND11_MODULE(_kael, module) {
    // Docstrings open with a text signature, "name(input, dim=None)\n--\n\n", which Python
    // reads as __text_signature__ (inspect.signature works); pybind11's typed lines would hide it.
    // KAEL_PYBIND_SIGNATURES=1 keeps them, for python/tools/generate_stubs.py only.
    py::options options;
    if (std::getenv("KAEL_PYBIND_SIGNATURES") == nullptr) options.disable_function_signatures();
    module.doc() = "kael: tensors, autograd and nn over plugin device backends";
    py::register_exception_translator(translate_kael_errors);
    module.attr("_MAX_RANK") = kael::kMaxRank;
    module.def("_python_spelling", &python_spelling, py::arg("message"),
               "A core message in Python spellings (what the error translator does)");
    kael::python::bind_devices(module);
    kael::python::bind_tensor(module);
    kael::python::bind_factories(module);
    kael::python::bind_ops(module);
    kael::python::bind_composite_ops(module);
    kael::python::bind_autograd(module);
    kael::python::bind_nn(module);
    kael::python::bind_dlpack(module);
    kael::python::bind_safetensors(module);
    kael::python::bind_tokenizer(module);
    kael::python::bind_elemops(module);
    kael::python::bind_random(module);
    kael::python::bind_distributed(module);
    kael::python::bind_fast_operators(module);
}
