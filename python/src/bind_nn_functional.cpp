// kael.nn.functional: PyTorch's torch.nn.functional signatures over kael::nn::functional.
#include "bind_nn.h"
#include "docs_nn_functional.h"
#include "kael/nn_functional.h"

namespace kael::python {

namespace F = nn::functional;

namespace {

F::CrossEntropyOptions loss_options(py::handle weight, std::int64_t ignore_index,
                                    const std::string& reduction, double label_smoothing,
                                    const char* op) {
    F::CrossEntropyOptions options;
    options.weight = optional_tensor(weight, op, "weight");
    options.ignore_index = ignore_index;
    options.reduction = F::parse_reduction(reduction, op);
    options.label_smoothing = label_smoothing;
    return options;
}

void bind_losses(py::module_& functional) {
    functional.def("cross_entropy",
                   [](const Tensor& input, const Tensor& target, py::handle weight,
                      std::int64_t ignore_index, const std::string& reduction,
                      double label_smoothing) {
                       return F::cross_entropy(input, target,
                                               loss_options(weight, ignore_index, reduction,
                                                            label_smoothing, "cross_entropy"));
                   },
                   py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
                   py::arg("ignore_index") = -100, py::arg("reduction") = "mean",
                   py::arg("label_smoothing") = 0.0, docs::cross_entropy);
    functional.def("nll_loss",
                   [](const Tensor& input, const Tensor& target, py::handle weight,
                      std::int64_t ignore_index, const std::string& reduction) {
                       return F::nll_loss(input, target,
                                          loss_options(weight, ignore_index, reduction, 0.0,
                                                       "nll_loss"));
                   },
                   py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
                   py::arg("ignore_index") = -100, py::arg("reduction") = "mean", docs::nll_loss);
    functional.def("mse_loss",
                   [](const Tensor& input, const Tensor& target, const std::string& reduction) {
                       return F::mse_loss(input, target, F::parse_reduction(reduction, "mse_loss"));
                   },
                   py::arg("input"), py::arg("target"), py::arg("reduction") = "mean",
                   docs::mse_loss);
    functional.def("l1_loss",
                   [](const Tensor& input, const Tensor& target, const std::string& reduction) {
                       return F::l1_loss(input, target, F::parse_reduction(reduction, "l1_loss"));
                   },
                   py::arg("input"), py::arg("target"), py::arg("reduction") = "mean",
                   docs::l1_loss);
    functional.def("binary_cross_entropy",
                   [](const Tensor& input, const Tensor& target, py::handle weight,
                      const std::string& reduction) {
                       constexpr const char* op = "binary_cross_entropy";
                       return F::binary_cross_entropy(input, target,
                                                      optional_tensor(weight, op, "weight"),
                                                      F::parse_reduction(reduction, op));
                   },
                   py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
                   py::arg("reduction") = "mean", docs::binary_cross_entropy);
    functional.def("binary_cross_entropy_with_logits",
                   [](const Tensor& input, const Tensor& target, py::handle weight,
                      const std::string& reduction, py::handle pos_weight) {
                       constexpr const char* op = "binary_cross_entropy_with_logits";
                       return F::binary_cross_entropy_with_logits(
                           input, target, optional_tensor(weight, op, "weight"),
                           optional_tensor(pos_weight, op, "pos_weight"),
                           F::parse_reduction(reduction, op));
                   },
                   py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
                   py::arg("reduction") = "mean", py::arg("pos_weight") = py::none(),
                   docs::binary_cross_entropy_with_logits);
}

void bind_layer_functions(py::module_& functional) {
    functional.def("silu", &F::silu, py::arg("input"), docs::silu);
    functional.def("layer_norm",
                   [](const Tensor& input, py::handle normalized_shape, py::handle weight,
                      py::handle bias, double eps) {
                       return F::layer_norm(input,
                                            int_or_ints(normalized_shape, "layer_norm",
                                                        "normalized_shape"),
                                            optional_tensor(weight, "layer_norm", "weight"),
                                            optional_tensor(bias, "layer_norm", "bias"), eps);
                   },
                   py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
                   py::arg("bias") = py::none(), py::arg("eps") = 1e-5,
                   docs::functional_layer_norm);
    functional.def("dropout",
                   [](const Tensor& input, double p, bool training, bool inplace) {
                       Tensor result = dropout(input, p, training);
                       if (!inplace || &result.impl() == &input.impl()) {
                           return result;
                       }
                       Tensor target = input;
                       target.copy_(result);
                       return target;
                   },
                   py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true,
                   py::arg("inplace") = false, docs::functional_dropout);
    functional.def("embedding",
                   [](const Tensor& input, const Tensor& weight,
                      std::optional<std::int64_t> padding_idx) {
                       return F::embedding(input, weight, padding_idx);
                   },
                   py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none(),
                   docs::functional_embedding);
    functional.def("linear",
                   [](const Tensor& input, const Tensor& weight, py::handle bias) {
                       return linear(input, weight, optional_tensor(bias, "linear", "bias"));
                   },
                   py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(),
                   docs::functional_linear);
    functional.def("scaled_dot_product_attention",
                   [](const Tensor& query, const Tensor& key, const Tensor& value,
                      py::handle attn_mask, double dropout_p, bool is_causal,
                      std::optional<double> scale) {
                       return F::scaled_dot_product_attention(
                           query, key, value,
                           optional_tensor(attn_mask, "scaled_dot_product_attention", "attn_mask"),
                           dropout_p, is_causal, scale);
                   },
                   py::arg("query"), py::arg("key"), py::arg("value"),
                   py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0,
                   py::arg("is_causal") = false, py::arg("scale") = py::none(),
                   docs::functional_attention);
    functional.def("one_hot", &F::one_hot, py::arg("tensor"), py::arg("num_classes") = -1,
                   docs::one_hot);
    functional.def("pad",
                   [](const Tensor& input, py::handle pad, const std::string& mode, double value) {
                       if (mode != "constant") {
                           throw py::value_error("pad: only mode='constant' is supported, got '" +
                                                 mode + "'");
                       }
                       return F::pad(input, int_or_ints(pad, "pad", "pad"), value);
                   },
                   py::arg("input"), py::arg("pad"), py::arg("mode") = "constant",
                   py::arg("value") = 0.0, docs::pad);
}

}  // namespace

void bind_nn_functional(py::module_& nn_module) {
    py::module_ functional = nn_module.def_submodule("_functional", "kael.nn.functional's bindings");
    bind_losses(functional);
    bind_layer_functions(functional);
}

}  // namespace kael::python
