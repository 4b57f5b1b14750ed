// The activations' backward ops (sigmoid, silu, gelu exact and tanh) on contiguous f32 for the
// cpu plugin: their exponentials through glibc's vector math in chunks that stay in L1, the rest
// in loops the compiler vectorizes. The scalar functors (one libm exp, or exp and erf, a element)
// ran gelu's backward at a quarter of PyTorch's speed: in a small GPT's training step that was
// most of kael's gap.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu_kernels.h"
#include "elementwise_math.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr int64_t kChunk = 1024;
constexpr int64_t kMinParallelElements = int64_t{1} << 16;
constexpr float kInverseSqrt2 = 0.70710678118654752440F;
constexpr float kInverseSqrt2Pi = 0.39894228040143267794F;
constexpr float kSqrt2OverPi = 0.79788456080286535588F;
constexpr float kKappa = 0.044715F;
// Numerical Recipes' erfcc (as the forward gelu): erfc(z) = t exp(-z^2 + P(t)), t = 1/(1+z/2).
constexpr int kErfcTerms = 10;
constexpr float kErfcCoefficients[kErfcTerms] = {
    0.17087277F,  -0.82215223F, 1.48851587F, -1.13520398F, 0.27886807F,
    -0.18628806F, 0.09678418F,  0.37409196F, 1.00002368F,  -1.26551223F};

// sigmoid(z) and sigmoid(z)(1 - sigmoid(z)) from e = exp(-|z|), as stable_sigmoid: s is
// 1/(1+e) for z >= 0 and e/(1+e) below (a select of two factors, not a branch); s(1-s) is
// e/(1+e)^2 either way.
struct Sigmoid {
    float s;
    float slope;
};
[[gnu::always_inline]] inline Sigmoid sigmoid_of(float z, float e) {
    const float r = 1.0F / (1.0F + e);
    return {(z >= 0.0F ? 1.0F : e) * r, e * r * r};
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
[[gnu::always_inline]] inline void backward_chunk(kael_element_op op, const float* x,
                                                  const float* grad, float* out, int64_t count) {
    using vector_math::Function;
    float arguments[kChunk];  // the sigmoid's argument, or t of erfc
    float exps[kChunk];
    float more[kChunk];  // gelu exact: exp(-x^2 / 2)
    if (op == KAEL_OP_GELU_EXACT_BACKWARD) {
        // Phi(x) + x phi(x), Phi from erfc(|x| / sqrt 2) / 2 reflected for x < 0, phi(x) =
        // exp(-x^2/2) / sqrt(2 pi): exp(-z^2 + P(t)) = exp(-x^2/2) exp(P(t)), two exps a element.
        for (int64_t i = 0; i < count; ++i) {
            const float z = std::fabs(x[i]) * kInverseSqrt2;
            const float t = 1.0F / (1.0F + 0.5F * z);
            float p = kErfcCoefficients[0];
            for (int k = 1; k < kErfcTerms; ++k) {
                p = p * t + kErfcCoefficients[k];
            }
            arguments[i] = t;
            exps[i] = p;
            more[i] = -0.5F * x[i] * x[i];
        }
        vector_math::apply(Function::Exp, exps, exps, count);
        vector_math::apply(Function::Exp, more, more, count);
        for (int64_t i = 0; i < count; ++i) {
            const float half_erfc = 0.5F * arguments[i] * exps[i] * more[i];
            const float cdf = x[i] < 0.0F ? half_erfc : 1.0F - half_erfc;
            out[i] = grad[i] * (cdf + x[i] * more[i] * kInverseSqrt2Pi);
        }
        return;
    }
    const bool tanh_form = op == KAEL_OP_GELU_TANH_BACKWARD;
    for (int64_t i = 0; i < count; ++i) {
        const float v = x[i];
        arguments[i] = tanh_form ? 2.0F * kSqrt2OverPi * (v + kKappa * v * v * v) : v;
        exps[i] = -std::fabs(arguments[i]);
    }
    vector_math::apply(Function::Exp, exps, exps, count);
    for (int64_t i = 0; i < count; ++i) {
        const Sigmoid s = sigmoid_of(arguments[i], exps[i]);
        const float v = x[i];
        float d = s.slope;  // sigmoid's
        if (op == KAEL_OP_SILU_BACKWARD) {
            d = s.s + v * s.slope;
        } else if (tanh_form) {
            d = s.s + v * 2.0F * s.slope * kSqrt2OverPi * (1.0F + 3.0F * kKappa * v * v);
        }
        out[i] = grad[i] * d;
    }
}
#pragma GCC diagnostic pop

[[gnu::target("avx512f")]] void backward_chunk_avx512(kael_element_op op, const float* x,
                                                     const float* grad, float* out,
                                                     int64_t count) {
    backward_chunk(op, x, grad, out, count);
}

[[gnu::target("avx2")]] void backward_chunk_avx2(kael_element_op op, const float* x,
                                                const float* grad, float* out, int64_t count) {
    backward_chunk(op, x, grad, out, count);
}

}  // namespace

bool run_activation_backward(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                             const kael_element_layout& layout) {
    const bool supported = op == KAEL_OP_SIGMOID_BACKWARD || op == KAEL_OP_SILU_BACKWARD ||
                           op == KAEL_OP_GELU_EXACT_BACKWARD || op == KAEL_OP_GELU_TANH_BACKWARD;
    if (!supported || out_dtype != KAEL_DTYPE_F32 || in_dtype != KAEL_DTYPE_F32 ||
        layout.operands != 3 || layout.dims != 1 || layout.strides[0][0] != 4 ||
        layout.strides[1][0] != 4 || layout.strides[2][0] != 4) {
        return false;
    }
    auto* out = static_cast<float*>(layout.base[0]);
    const auto* x = static_cast<const float*>(layout.base[1]);
    const auto* grad = static_cast<const float*>(layout.base[2]);
    const int64_t chunks = (layout.count + kChunk - 1) / kChunk;
    const vector_math::Isa isa = vector_math::chosen_isa();
    parallel_ranges(chunks, kMinParallelElements / kChunk, [&](int64_t begin, int64_t end) {
        for (int64_t chunk = begin; chunk < end; ++chunk) {
            const int64_t first = chunk * kChunk;
            const int64_t count = std::min(kChunk, layout.count - first);
            if (isa == vector_math::Isa::Avx512) {
                backward_chunk_avx512(op, x + first, grad + first, out + first, count);
            } else if (isa == vector_math::Isa::Avx2) {
                backward_chunk_avx2(op, x + first, grad + first, out + first, count);
            } else {
                backward_chunk(op, x + first, grad + first, out + first, count);
            }
        }
    });
    return true;
}

}  // namespace kael::cpu
