#pragma once
// The cpu plugin's own f32 softmax / log_softmax forward (softmax_f32.cpp).
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

// Over the plugin's threads when the call is big enough.
void softmax_f32(const SoftmaxF32& a);

}  // namespace kael::cpu
