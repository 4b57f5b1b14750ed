#pragma once
// The cpu plugin's own f32 softmax / log_softmax forward and cross_entropy forward and
// backward (softmax_f32.cpp).
#include <cstdint>

namespace kael::cpu {

// The softmax slot's buffers, f32, validated: x and y are outer x size x inner, softmax along
// size; y may be x.
struct SoftmaxF32 {
    float* y;
    const float* x;
    std::int64_t outer;
    std::int64_t size;
    std::int64_t inner;
    bool log;
};

// The cross_entropy slot's buffers, f32, validated, rows > 0.
struct CrossEntropyF32 {
    float* losses;
    float* lse;
    const float* logits;
    const std::int64_t* targets;
    std::int64_t rows;
    std::int64_t classes;
};

// The cross_entropy_backward slot's buffers, f32, validated, rows > 0, grad_stride 0 or 1.
struct CrossEntropyBackwardF32 {
    float* grad_logits;
    const float* grad_losses;
    std::int64_t grad_stride;
    const float* logits;
    const float* lse;
    const std::int64_t* targets;
    std::int64_t rows;
    std::int64_t classes;
};

// Each over the plugin's threads when the call is big enough.
void softmax_f32(const SoftmaxF32& a);
void cross_entropy_f32(const CrossEntropyF32& a);
void cross_entropy_backward_f32(const CrossEntropyBackwardF32& a);

}  // namespace kael::cpu
