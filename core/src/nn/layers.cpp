// The built-in layers. Constructors reject non-positive sizes with a ValueError naming the
// layer and the field, before anything is allocated.
#include <cmath>

#include "kael/autograd.h"
#include "kael/nn.h"
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

Tensor Linear::forward(const Tensor& input, Activation activation, const Tensor& residual) {
    return linear(input, weight, bias, activation, residual);
}

Embedding::Embedding(std::int64_t count, std::int64_t dim, Device device) {
    detail::require_positive(count, "Embedding", "num_embeddings");
    detail::require_positive(dim, "Embedding", "embedding_dim");
    const NoGradGuard guard;
    register_parameter("weight", weight, randn({count, dim}).to(device));
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(weight, indices); }

LayerNorm::LayerNorm(std::int64_t dim, double epsilon, Device device) : eps(epsilon) {
    detail::require_positive(dim, "LayerNorm", "normalized_shape");
    if (!(epsilon >= 0 && std::isfinite(epsilon))) {
        throw ValueError("LayerNorm: eps must be non-negative and finite, got " +
                         detail::format_number(epsilon));
    }
    register_parameter("weight", weight, ones({dim}, DType::F32, device));
    register_parameter("bias", bias, zeros({dim}, DType::F32, device));
}

Tensor LayerNorm::forward(const Tensor& input) { return layer_norm(input, weight, bias, eps); }

Dropout::Dropout(double p) : p_(p) { detail::require_probability(p, "Dropout", "p"); }

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
