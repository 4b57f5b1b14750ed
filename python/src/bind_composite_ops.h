#pragma once
// Shared by bind_composite_ops.cpp and bind_ops_in_place.cpp.
#include "bind_common.h"

namespace kael::python {

// kael.return_types' named tuples, made once by bind_composite_ops.
struct ReturnTypes {
    py::object max;
    py::object min;
    py::object median;
    py::object kthvalue;
    py::object aminmax;
};

// None, an int or a sequence of ints as dims.
[[nodiscard]] std::optional<Shape> optional_dims(py::handle object, const char* op);

void bind_ops_in_place(py::module_& module, py::class_<Tensor>& cls);

}  // namespace kael::python
