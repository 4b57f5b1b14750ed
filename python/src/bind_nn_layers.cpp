// kael.nn layers.
#include "bind_nn.h"
#include "docs_nn_layers.h"
#include "kael/gpt.h"

namespace kael::python {

using nn::Module;

namespace {

// layer.weight = other.weight makes them one tensor (weight tying), as in PyTorch.
void set_weight(Module& layer, const Tensor& value) { layer.set_parameter("weight", value); }
void set_bias(Module& layer, const Tensor& value) { layer.set_parameter("bias", value); }

}  // namespace

void bind_layers(py::module_& nn_module) {
    py::class_<nn::Linear, Module, std::shared_ptr<nn::Linear>>(nn_module, "Linear", docs::Linear)
        .def(py::init([](std::int64_t in, std::int64_t out, bool bias, py::handle device) {
                 return std::make_shared<nn::Linear>(in, out, bias, to_device(device));
             }),
             py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true,
             py::kw_only(), py::arg("device") = py::none(), docs::Linear_init)
        .def_property("weight", [](const nn::Linear& m) { return m.weight; }, set_weight,
                      docs::weight)
        .def_property("bias", [](const nn::Linear& m) { return tensor_or_none(m.bias); },
                      set_bias, docs::bias)
        .def_property_readonly("in_features", [](const nn::Linear& m) { return m.weight.size(1); },
                               docs::in_features)
        .def_property_readonly("out_features", [](const nn::Linear& m) { return m.weight.size(0); },
                               docs::out_features);
    py::class_<nn::Embedding, Module, std::shared_ptr<nn::Embedding>>(nn_module, "Embedding",
                                                                     docs::Embedding)
        .def(py::init([](std::int64_t count, std::int64_t dim, std::optional<std::int64_t> padding,
                         py::handle device) {
                 return std::make_shared<nn::Embedding>(count, dim, to_device(device), padding);
             }),
             py::arg("num_embeddings"), py::arg("embedding_dim"), py::arg("padding_idx") = py::none(),
             py::kw_only(), py::arg("device") = py::none(), docs::Embedding_init)
        .def_property("weight", [](const nn::Embedding& m) { return m.weight; }, set_weight,
                      docs::weight)
        .def_readonly("padding_idx", &nn::Embedding::padding_idx, docs::padding_idx);
    py::class_<nn::LayerNorm, Module, std::shared_ptr<nn::LayerNorm>>(nn_module, "LayerNorm",
                                                                      docs::LayerNorm)
        .def(py::init([](py::handle shape, double eps, bool affine, bool bias, py::handle device) {
                 return std::make_shared<nn::LayerNorm>(
                     int_or_ints(shape, "LayerNorm", "normalized_shape"), eps, to_device(device),
                     affine, bias);
             }),
             py::arg("normalized_shape"), py::arg("eps") = 1e-5,
             py::arg("elementwise_affine") = true, py::arg("bias") = true, py::kw_only(),
             py::arg("device") = py::none(), docs::LayerNorm_init)
        .def_property(
            "weight", [](const nn::LayerNorm& m) { return tensor_or_none(m.weight); }, set_weight,
            docs::weight)
        .def_property(
            "bias", [](const nn::LayerNorm& m) { return tensor_or_none(m.bias); }, set_bias,
            docs::bias)
        .def_property_readonly(
            "normalized_shape",
            [](const nn::LayerNorm& m) {
                return py::tuple(py::cast(std::vector<std::int64_t>(m.normalized_shape)));
            },
            "The trailing dims normalized, a tuple as torch's.")
        .def_readonly("elementwise_affine", &nn::LayerNorm::elementwise_affine,
                      "Whether the layer has a weight (and a bias unless bias=False).")
        .def_readonly("eps", &nn::LayerNorm::eps, docs::eps);
    py::class_<nn::ReLU, Module, std::shared_ptr<nn::ReLU>>(nn_module, "ReLU", docs::ReLU)
        .def(py::init<>(), docs::no_argument_init);
    py::class_<nn::Sigmoid, Module, std::shared_ptr<nn::Sigmoid>>(nn_module, "Sigmoid",
                                                                 docs::Sigmoid)
        .def(py::init<>(), docs::no_argument_init);
    py::class_<nn::Tanh, Module, std::shared_ptr<nn::Tanh>>(nn_module, "Tanh", docs::Tanh)
        .def(py::init<>(), docs::no_argument_init);
    py::class_<nn::GELU, Module, std::shared_ptr<nn::GELU>>(nn_module, "GELU", docs::GELU)
        .def(py::init([](const std::string& approximate) {
                 if (approximate != "none" && approximate != "tanh") {
                     throw py::value_error("GELU: approximate must be 'none' or 'tanh', got '" +
                                           approximate + "'");
                 }
                 return std::make_shared<nn::GELU>(approximate == "tanh");
             }),
             py::arg("approximate") = "none", docs::GELU_init);
    py::class_<nn::Dropout, Module, std::shared_ptr<nn::Dropout>>(nn_module, "Dropout",
                                                                 docs::Dropout)
        .def(py::init<double, bool>(), py::arg("p") = 0.5, py::arg("inplace") = false,
             docs::Dropout_init)
        .def_property_readonly("p", &nn::Dropout::p, docs::dropout_p);
}

}  // namespace kael::python
