#pragma once
// The cpu plugin's own f32 layer_norm, forward and backward (layer_norm_f32.cpp).
#include <cstdint>

namespace kael::cpu {

// The layer_norm_backward slot's buffers, f32, validated; grad_x, grad_weight and grad_bias may
// each be null (not wanted), weight may be null (ones).
struct LayerNormGrad {
    float* grad_x;
    float* grad_weight;
    float* grad_bias;
    const float* grad_out;
    const float* x;
    const float* mean;
    const float* rstd;
    const float* weight;
    std::int64_t rows;
    std::int64_t columns;
};

void layer_norm_backward_f32(const LayerNormGrad& grad);

// The layer_norm slot's buffers, f32, validated; weight and bias may each be null.
struct LayerNormForward {
    float* out;
    float* mean;
    float* rstd;
    const float* x;
    const float* weight;
    const float* bias;
    std::int64_t rows;
    std::int64_t columns;
    double eps;
};

void layer_norm_f32(const LayerNormForward& forward);

}  // namespace kael::cpu
