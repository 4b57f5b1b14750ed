#pragma once
// gelu (exact) for the cpu plugin's vector math: x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2 with
// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + |z| / 2) (Numerical Recipes' erfcc, relative error
// under 1.2e-7 in both tails), reflected as 2 - erfc(|z|) for z < 0. The chunk loop of
// elementwise_math.cpp uses the scalar pieces; gelu_exact.cpp holds the register kernels.
#include <cstdint>

namespace kael::cpu {

// P's coefficients, from the highest power down.
constexpr int kErfcTerms = 10;
constexpr float kErfcCoefficients[kErfcTerms] = {
    0.17087277F,  -0.82215223F, 1.48851587F, -1.13520398F, 0.27886807F,
    -0.18628806F, 0.09678418F,  0.37409196F, 1.00002368F,  -1.26551223F};

constexpr float kInverseSqrt2 = 0.70710678118654752440F;
constexpr float kLn2 = 0.69314718055994530942F;

// -z^2 + P(t), for z >= 0.
[[gnu::always_inline]] inline float erfc_exponent(float z, float t) {
    float p = kErfcCoefficients[0];
    for (int k = 1; k < kErfcTerms; ++k) {
        p = p * t + kErfcCoefficients[k];
    }
    return p - z * z;
}

// count contiguous f32s, in registers from load to store; call only where the CPU has the ISA
// (vector_math::chosen_isa()).
void gelu_exact_avx512(const float* in, float* out, std::int64_t count);
void gelu_exact_avx2(const float* in, float* out, std::int64_t count);

}  // namespace kael::cpu
