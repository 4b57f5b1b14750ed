#pragma once
// The kael.nn and kael.optim registrations, split over bind_nn.cpp (Module) and
// bind_nn_layers.cpp (layers, optimizers) and bind_gpt.cpp (GPT, its loading and generation).
#include "bind_common.h"
#include "kael/nn.h"

namespace kael::python {

// self's C++ Module, or AttributeError while it is not constructed (a method called from a
// subclass's __init__ before super().__init__()).
nn::Module& module_of(py::handle self);
// Module.extra_repr: the C++ layer's, never a Python override's (that would recurse).
std::string extra_repr_of(py::handle self);

void bind_layers(py::module_& nn_module);
// Buffers, the module tree and requires_grad_ (bind_nn_module_tree.cpp).
void bind_module_tree(py::handle module_class);
// Flatten, Unflatten, Identity, SiLU, Softmax, LogSoftmax, MultiheadAttention.
void bind_layers_more(py::module_& nn_module);
// kael.nn.functional (bind_nn_functional.cpp).
void bind_nn_functional(py::module_& nn_module);
// Convolution, pooling, batch and group normalisation (bind_nn_conv.cpp).
void bind_conv_layers(py::module_& nn_module);
// RNN, LSTM, GRU and their cells (bind_nn_rnn.cpp).
void bind_rnn_layers(py::module_& nn_module);
void bind_gpt(py::module_& nn_module);
void bind_optim(py::module_& optim_module);

}  // namespace kael::python
