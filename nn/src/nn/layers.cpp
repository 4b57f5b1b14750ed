// The built-in layers. Constructors reject non-positive sizes with a ValueError naming the
// layer and the field, before anything is allocated.
#include <cmath>

#include "kael/autograd.h"
#include "kael/nn.h"
#include "kael/nn_functional.h"
#include "kael/ops.h"
#include "nn_internal.h"

namespace kael::nn {

namespace {

Tensor uniform(const Shape& shape, double bound, const Device& device) {
    const NoGradGuard guard;
    return ((rand(shape) * 2.0 - 1.0) * bound).to(device);
}

}  // namespace

Linear::Linear(std::int64_t in_features, std::int64_t out_features, bool with_bias,
               Device device) {
    detail::require_positive(in_features, "Linear", "in_features");
    detail::require_positive(out_features, "Linear", "out_features");
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    register_parameter("weight", weight, uniform({out_features, in_features}, bound, device));
    if (with_bias) {
        register_parameter("bias", bias, uniform({out_features}, bound, device));
    }
}

Tensor Linear::forward(const Tensor& input) { return linear(input, weight, bias); }

std::string Linear::extra_repr() const {
    return "in_features=" + std::to_string(weight.size(1)) +
           ", out_features=" + std::to_string(weight.size(0)) +
           ", bias=" + (bias.defined() ? "True" : "False");
}

Tensor Linear::forward(const Tensor& input, Activation activation, const Tensor& residual) {
    return linear(input, weight, bias, activation, residual);
}

Embedding::Embedding(std::int64_t count, std::int64_t dim, Device device,
                     std::optional<std::int64_t> padding) {
    detail::require_positive(count, "Embedding", "num_embeddings");
    detail::require_positive(dim, "Embedding", "embedding_dim");
    if (padding && (*padding < -count || *padding >= count)) {
        throw ValueError("Embedding: padding_idx must be within num_embeddings, got " +
                         std::to_string(*padding));
    }
    const NoGradGuard guard;
    Tensor initial = randn({count, dim});
    if (padding) {
        padding_idx = *padding < 0 ? *padding + count : *padding;
        initial.select(0, *padding_idx).fill_(0);
    }
    register_parameter("weight", weight, initial.to(device));
}

Tensor Embedding::forward(const Tensor& indices) {
    return functional::embedding(indices, weight, padding_idx);
}

std::string Embedding::extra_repr() const {
    std::string text = std::to_string(weight.size(0)) + ", " + std::to_string(weight.size(1));
    return padding_idx ? text + ", padding_idx=" + std::to_string(*padding_idx) : text;
}

LayerNorm::LayerNorm(std::int64_t dim, double epsilon, Device device)
    : LayerNorm(Shape{dim}, epsilon, device) {}

LayerNorm::LayerNorm(Shape shape, double epsilon, Device device, bool affine, bool with_bias)
    : eps(epsilon), normalized_shape(std::move(shape)), elementwise_affine(affine) {
    if (normalized_shape.empty()) {
        throw ValueError("LayerNorm: normalized_shape must name at least one dim");
    }
    for (const std::int64_t dim : normalized_shape) {
        detail::require_positive(dim, "LayerNorm", "normalized_shape");
    }
    if (!(epsilon >= 0 && std::isfinite(epsilon))) {
        throw ValueError("LayerNorm: eps must be non-negative and finite, got " +
                         detail::format_number(epsilon));
    }
    if (affine) {
        register_parameter("weight", weight, ones(normalized_shape, DType::F32, device));
    }
    if (affine && with_bias) {
        register_parameter("bias", bias, zeros(normalized_shape, DType::F32, device));
    }
}

Tensor LayerNorm::forward(const Tensor& input) {
    if (normalized_shape.size() == 1) {  // the fused row op reads weight and bias as they are
        return layer_norm(input, weight, bias, eps);
    }
    return functional::layer_norm(input, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
    std::string text = "(";  // torch prints (4,) for one dim and (2, 3) for more
    for (std::size_t i = 0; i < normalized_shape.size(); ++i) {
        text += (i > 0 ? ", " : "") + std::to_string(normalized_shape[i]);
    }
    text += normalized_shape.size() == 1 ? ",)" : ")";
    return text + ", eps=" + detail::format_number(eps) +
           ", elementwise_affine=" + (elementwise_affine ? "True" : "False");
}

std::string GELU::extra_repr() const {
    return tanh_approximation_ ? "approximate='tanh'" : "approximate='none'";
}

Dropout::Dropout(double p, bool inplace) : p_(p), inplace_(inplace) {
    detail::require_probability(p, "Dropout", "p");
}

Tensor Dropout::forward(const Tensor& input) {
    Tensor result = dropout(input, p_, is_training());
    if (!inplace_ || &result.impl() == &input.impl()) {
        return result;
    }
    Tensor target = input;
    target.copy_(result);  // PyTorch's inplace: the input holds the result
    return target;
}

std::string Dropout::extra_repr() const {
    return "p=" + detail::format_number(p_) + ", inplace=" + (inplace_ ? "True" : "False");
}

Tensor Softmax::forward(const Tensor& input) {
    // PyTorch's legacy rule for a softmax built without a dim.
    const std::int64_t chosen = dim.value_or(input.dim() == 0 || input.dim() == 1 || input.dim() == 3 ? 0 : 1);
    return log_ ? log_softmax(input, chosen) : softmax(input, chosen);
}

std::string Softmax::extra_repr() const {
    return "dim=" + (dim ? std::to_string(*dim) : std::string("None"));
}

Tensor Flatten::forward(const Tensor& input) { return flatten(input, start_dim, end_dim); }

Tensor Unflatten::forward(const Tensor& input) { return unflatten(input, dim, sizes); }

std::string Flatten::extra_repr() const {
    return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

std::string Unflatten::extra_repr() const {
    std::string sizes_text;
    for (const std::int64_t size : sizes) {
        sizes_text += (sizes_text.empty() ? "" : ", ") + std::to_string(size);
    }
    return "dim=" + std::to_string(dim) + ", unflattened_size=(" + sizes_text +
           (sizes.size() == 1 ? ",)" : ")");
}

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules)
    : modules_(std::move(modules)) {
    for (std::size_t i = 0; i < modules_.size(); ++i) {
        if (!modules_[i]) {
            throw ValueError("Sequential: module " + std::to_string(i) + " is null");
        }
        register_module(std::to_string(i), modules_[i]);
    }
}

Tensor Sequential::forward(const Tensor& input) {
    Tensor x = input;
    for (const auto& module : modules_) {
        x = module->forward(x);
    }
    return x;
}

}  // namespace kael::nn
