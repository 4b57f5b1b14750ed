#pragma once
// The kael.nn and kael.optim registrations, split over bind_nn.cpp (Module) and
// bind_nn_layers.cpp (layers, optimizers) and bind_gpt.cpp (GPT, its loading and generation).
#include "bind_common.h"

namespace kael::python {

void bind_layers(py::module_& nn_module);
void bind_gpt(py::module_& nn_module);
void bind_optim(py::module_& optim_module);

}  // namespace kael::python
