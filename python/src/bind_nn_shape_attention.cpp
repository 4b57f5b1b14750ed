// kael.nn's shape and activation layers (Flatten, Unflatten, Identity, SiLU, Softmax,
// LogSoftmax) and MultiheadAttention.
#include "bind_nn.h"
#include "docs_nn_layers.h"

namespace kael::python {

using nn::Module;

namespace {

void bind_shape_layers(py::module_& nn_module) {
    py::class_<nn::Identity, Module, std::shared_ptr<nn::Identity>>(nn_module, "Identity",
                                                                   docs::Identity)
        .def(py::init([](const py::args&, const py::kwargs&) {
                 return std::make_shared<nn::Identity>();
             }),
             docs::Identity_init)
        .def("forward", [](py::handle, py::object input) { return input; }, py::arg("input"),
             "forward(self, input)\n--\n\nReturns input itself.");
    py::class_<nn::SiLU, Module, std::shared_ptr<nn::SiLU>>(nn_module, "SiLU", docs::SiLU)
        .def(py::init<>(), docs::no_argument_init);
    py::class_<nn::Softmax, Module, std::shared_ptr<nn::Softmax>>(nn_module, "Softmax",
                                                                 docs::Softmax)
        .def(py::init([](std::optional<std::int64_t> dim) {
                 return std::make_shared<nn::Softmax>(dim);
             }),
             py::arg("dim") = py::none(), docs::Softmax_init)
        .def_readwrite("dim", &nn::Softmax::dim, docs::softmax_dim);
    py::class_<nn::LogSoftmax, nn::Softmax, std::shared_ptr<nn::LogSoftmax>>(
        nn_module, "LogSoftmax", docs::LogSoftmax)
        .def(py::init<std::optional<std::int64_t>>(), py::arg("dim") = py::none(),
             docs::Softmax_init);
    py::class_<nn::Flatten, Module, std::shared_ptr<nn::Flatten>>(nn_module, "Flatten",
                                                                 docs::Flatten)
        .def(py::init<std::int64_t, std::int64_t>(), py::arg("start_dim") = 1,
             py::arg("end_dim") = -1, docs::Flatten_init)
        .def_readwrite("start_dim", &nn::Flatten::start_dim, docs::start_dim)
        .def_readwrite("end_dim", &nn::Flatten::end_dim, docs::end_dim);
    py::class_<nn::Unflatten, Module, std::shared_ptr<nn::Unflatten>>(nn_module, "Unflatten",
                                                                     docs::Unflatten)
        .def(py::init<std::int64_t, Shape>(), py::arg("dim"), py::arg("unflattened_size"),
             docs::Unflatten_init)
        .def_readonly("dim", &nn::Unflatten::dim, docs::unflatten_dim)
        .def_property_readonly("unflattened_size",
                               [](const nn::Unflatten& m) { return py::tuple(py::cast(m.sizes)); },
                               docs::unflattened_size);
}

Tensor optional_mask(py::handle mask, const char* what) {
    return optional_tensor(mask, "MultiheadAttention", what);
}

void bind_attention(py::module_& nn_module) {
    using nn::MultiheadAttention;
    py::class_<MultiheadAttention, Module, std::shared_ptr<MultiheadAttention>>(
        nn_module, "MultiheadAttention", docs::MultiheadAttention)
        .def(py::init([](std::int64_t embed_dim, std::int64_t num_heads, double dropout, bool bias,
                         bool batch_first, py::handle device) {
                 return std::make_shared<MultiheadAttention>(embed_dim, num_heads, dropout, bias,
                                                             batch_first, to_device(device));
             }),
             py::arg("embed_dim"), py::arg("num_heads"), py::arg("dropout") = 0.0,
             py::arg("bias") = true, py::arg("batch_first") = false, py::kw_only(),
             py::arg("device") = py::none(), docs::MultiheadAttention_init)
        .def("forward",
             [](MultiheadAttention& m, const Tensor& query, const Tensor& key, const Tensor& value,
                py::handle key_padding_mask, bool need_weights, py::handle attn_mask,
                bool average_attn_weights, bool is_causal) {
                 nn::AttentionOptions options;
                 options.key_padding_mask = optional_mask(key_padding_mask, "key_padding_mask");
                 options.need_weights = need_weights;
                 options.attn_mask = optional_mask(attn_mask, "attn_mask");
                 options.average_attn_weights = average_attn_weights;
                 options.is_causal = is_causal;
                 const auto [output, weights] = m.forward(query, key, value, options);
                 return py::make_tuple(output, tensor_or_none(weights));
             },
             py::arg("query"), py::arg("key"), py::arg("value"),
             py::arg("key_padding_mask") = py::none(), py::arg("need_weights") = true,
             py::arg("attn_mask") = py::none(), py::arg("average_attn_weights") = true,
             py::arg("is_causal") = false, docs::MultiheadAttention_forward)
        .def_property(
            "in_proj_weight", [](const MultiheadAttention& m) { return m.in_proj_weight; },
            [](Module& m, const Tensor& value) { m.set_parameter("in_proj_weight", value); },
            docs::in_proj_weight)
        .def_property_readonly(
            "in_proj_bias", [](const MultiheadAttention& m) { return tensor_or_none(m.in_proj_bias); },
            docs::in_proj_bias)
        .def_readonly("out_proj", &MultiheadAttention::out_proj, docs::out_proj)
        .def_readonly("embed_dim", &MultiheadAttention::embed_dim, docs::embed_dim)
        .def_readonly("num_heads", &MultiheadAttention::num_heads, docs::num_heads)
        .def_property_readonly(
            "head_dim", [](const MultiheadAttention& m) { return m.embed_dim / m.num_heads; },
            docs::head_dim)
        .def_readonly("dropout", &MultiheadAttention::dropout, docs::attention_dropout)
        .def_readonly("batch_first", &MultiheadAttention::batch_first, docs::batch_first);
}

}  // namespace

void bind_layers_more(py::module_& nn_module) {
    bind_shape_layers(nn_module);
    bind_attention(nn_module);
}

}  // namespace kael::python
