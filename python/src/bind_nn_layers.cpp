// kael.nn layers.
#include "bind_nn.h"
#include "kael/gpt.h"

namespace kael::python {

using nn::Module;

namespace {

// layer.weight = other.weight makes them one tensor (weight tying), as in PyTorch.
void set_weight(Module& layer, const Tensor& value) { layer.set_parameter("weight", value); }
void set_bias(Module& layer, const Tensor& value) { layer.set_parameter("bias", value); }

}  // namespace

void bind_layers(py::module_& nn_module) {
    py::class_<nn::Linear, Module, std::shared_ptr<nn::Linear>>(nn_module, "Linear")
        .def(py::init([](std::int64_t in, std::int64_t out, bool bias, py::handle device) {
                 return std::make_shared<nn::Linear>(in, out, bias, to_device(device));
             }),
             py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true,
             py::kw_only(), py::arg("device") = py::none())
        .def_property("weight", [](const nn::Linear& m) { return m.weight; }, set_weight)
        .def_property("bias", [](const nn::Linear& m) { return tensor_or_none(m.bias); },
                      set_bias);
    py::class_<nn::Embedding, Module, std::shared_ptr<nn::Embedding>>(nn_module, "Embedding")
        .def(py::init([](std::int64_t count, std::int64_t dim, py::handle device) {
                 return std::make_shared<nn::Embedding>(count, dim, to_device(device));
             }),
             py::arg("num_embeddings"), py::arg("embedding_dim"), py::kw_only(),
             py::arg("device") = py::none())
        .def_property("weight", [](const nn::Embedding& m) { return m.weight; }, set_weight);
    py::class_<nn::LayerNorm, Module, std::shared_ptr<nn::LayerNorm>>(nn_module, "LayerNorm")
        .def(py::init([](std::int64_t dim, double eps, py::handle device) {
                 return std::make_shared<nn::LayerNorm>(dim, eps, to_device(device));
             }),
             py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::kw_only(),
             py::arg("device") = py::none())
        .def_property("weight", [](const nn::LayerNorm& m) { return m.weight; }, set_weight)
        .def_property("bias", [](const nn::LayerNorm& m) { return m.bias; }, set_bias)
        .def_readonly("eps", &nn::LayerNorm::eps);
    py::class_<nn::ReLU, Module, std::shared_ptr<nn::ReLU>>(nn_module, "ReLU").def(py::init<>());
    py::class_<nn::Sigmoid, Module, std::shared_ptr<nn::Sigmoid>>(nn_module, "Sigmoid")
        .def(py::init<>());
    py::class_<nn::Tanh, Module, std::shared_ptr<nn::Tanh>>(nn_module, "Tanh").def(py::init<>());
    py::class_<nn::GELU, Module, std::shared_ptr<nn::GELU>>(nn_module, "GELU")
        .def(py::init([](const std::string& approximate) {
                 if (approximate != "none" && approximate != "tanh") {
                     throw py::value_error("GELU: approximate must be 'none' or 'tanh', got '" +
                                           approximate + "'");
                 }
                 return std::make_shared<nn::GELU>(approximate == "tanh");
             }),
             py::arg("approximate") = "none");
    py::class_<nn::Dropout, Module, std::shared_ptr<nn::Dropout>>(nn_module, "Dropout")
        .def(py::init<double>(), py::arg("p") = 0.5);
}

}  // namespace kael::python
