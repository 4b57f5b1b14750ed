// kael.nn's recurrent layers (nn_rnn.h): the C++ layers as bases of the Python classes in
// kael/nn/_rnn_layers.py, which give PyTorch's signatures and return shapes.
#include "bind_nn.h"
#include "kael/nn_rnn.h"

namespace kael::python {

void bind_rnn_layers(py::module_& nn_module) {
    using py::arg;
    py::class_<nn::RNNBase, nn::Module, std::shared_ptr<nn::RNNBase>>(
        nn_module, "_RNNBase", "The C++ layer under kael.nn.RNN, LSTM and GRU.")
        .def(py::init([](const std::string& mode, std::int64_t input_size, std::int64_t hidden,
                         std::int64_t layers, bool bias, bool batch_first, double dropout,
                         bool bidirectional, std::int64_t proj_size, py::handle device) {
                 nn::RNNOptions options{mode,        input_size, hidden,        layers,   bias,
                                        batch_first, dropout,    bidirectional, proj_size};
                 return std::make_shared<nn::RNNBase>(options, to_device(device));
             }),
             arg("mode"), arg("input_size"), arg("hidden_size"), arg("num_layers"), arg("bias"),
             arg("batch_first"), arg("dropout"), arg("bidirectional"), arg("proj_size"),
             arg("device"))
        .def("_run", &nn::RNNBase::forward_with_state, arg("input"), arg("state"),
             arg("lengths") = std::vector<std::int64_t>{}, py::call_guard<py::gil_scoped_release>(),
             "(output, [h_n] or [h_n, c_n]) for input and the initial state (empty: zeros); "
             "lengths: the sequences' steps, longest first (packed sequences).")
        .def_property_readonly(
            "_options",
            [](const nn::RNNBase& m) {
                const nn::RNNOptions& o = m.options;
                py::dict d;
                d["mode"] = o.mode;
                d["input_size"] = o.input_size;
                d["hidden_size"] = o.hidden_size;
                d["num_layers"] = o.num_layers;
                d["bias"] = o.bias;
                d["batch_first"] = o.batch_first;
                d["dropout"] = o.dropout;
                d["bidirectional"] = o.bidirectional;
                d["proj_size"] = o.proj_size;
                return d;
            },
            "The layer's options, as PyTorch's attributes.");
    py::class_<nn::RNNCellBase, nn::Module, std::shared_ptr<nn::RNNCellBase>>(
        nn_module, "_RNNCellBase", "The C++ cell under kael.nn.RNNCell, LSTMCell and GRUCell.")
        .def(py::init([](const std::string& mode, std::int64_t input_size, std::int64_t hidden,
                         bool bias, py::handle device) {
                 return std::make_shared<nn::RNNCellBase>(mode, input_size, hidden, bias,
                                                          to_device(device));
             }),
             arg("mode"), arg("input_size"), arg("hidden_size"), arg("bias"), arg("device"))
        .def("_step", &nn::RNNCellBase::step, arg("input"), arg("state"),
             py::call_guard<py::gil_scoped_release>(), "The next state: [h'] or [h', c'].")
        .def_readonly("input_size", &nn::RNNCellBase::input_size, "Input features.")
        .def_readonly("hidden_size", &nn::RNNCellBase::hidden_size, "Hidden features.");
}

}  // namespace kael::python
