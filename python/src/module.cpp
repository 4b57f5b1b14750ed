// The kael._kael extension module: error mapping, then one registration per binding file.
#include "bind_common.h"
#include "kael/error.h"

namespace py = pybind11;

namespace {

// kael's typed errors become the Python exceptions of the same meaning, with the same message.
void translate_kael_errors(std::exception_ptr error) {
    try {
        if (error) std::rethrow_exception(error);
    } catch (const kael::ValueError& e) {
        PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const kael::TypeError& e) {
        PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const kael::IndexError& e) {
        PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const kael::OutOfMemoryError& e) {
        PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const kael::Error& e) {  // DeviceError and any other kael error
        PyErr_SetString(PyExc_RuntimeError, e.what());
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
