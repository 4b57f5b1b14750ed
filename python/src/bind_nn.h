#pragma once
// The kael.nn and kael.optim registrations, split over bind_nn.cpp (Module) and
// bind_nn_layers.cpp (layers, GPT, optimizers).
#include "bind_common.h"

namespace kael::python {

void bind_layers(py::module_& nn_module);
void bind_gpt(py::module_& nn_module);
void bind_optim(py::module_& optim_module);

}  // namespace kael::python
