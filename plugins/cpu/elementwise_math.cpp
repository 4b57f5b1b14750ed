// Contiguous f32 transcendental functions for the cpu plugin's elementwise entry: glibc's
// vector math (vector_math.h) in chunks that stay in L1, split across the pool.
#include "elementwise_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu_kernels.h"
#include "gelu_exact.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr int64_t kMinParallelElements = int64_t{1} << 16;

// Contiguous f32 exp, exp2, log, log2, log1p, log10, expm1, sin, cos, tanh, erf, erfc, sigmoid,
// silu and gelu through glibc's vector math, in chunks that stay in L1; the element functions'
// formulas (tails and stable forms) are kept. Scalar libm ran sin, log1p and expm1 at 0.1-0.16 of
// PyTorch's speed.
constexpr int64_t kChunk = 1024;

int64_t tasks_of(int64_t count) {
    return (count + kChunk - 1) / kChunk;
}

// s = 1 / (1 + e) for z >= 0, e / (1 + e) below, times x for silu and gelu_tanh. A select of
// two computed factors, not a branch: random signs mispredicted it at 0.1 of PyTorch's speed.
template <bool kTimesX>
[[gnu::always_inline]] inline void finish_sigmoid(const float* in, const float* arguments,
                                                  const float* exps, float* out, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        const float e = exps[i];
        const float factor = arguments[i] >= 0.0F ? 1.0F : e;
        const float s = factor * (1.0F / (1.0F + e));
        out[i] = kTimesX ? in[i] * s : s;
    }
}

// The chunk's own loops (around libmvec's calls) are compiled for AVX-512 and AVX2 as well, below.
// GCC cannot see that each loop writes scratch's first count elements before apply reads them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
[[gnu::always_inline]] inline void vector_chunk(kael_element_op op, const float* in, float* out,
                                                int64_t count) {
    using vector_math::Function;
    // Not zeroed: each loop writes the first count elements before anything reads them, and a
    // 4 KiB memset a chunk cost gelu about 15% of its time (and exp, which never uses it, too).
    float scratch[kChunk];
    switch (op) {
        case KAEL_OP_EXP: return vector_math::apply(Function::Exp, in, out, count);
        case KAEL_OP_LOG: return vector_math::apply(Function::Log, in, out, count);
        case KAEL_OP_TANH: return vector_math::apply(Function::Tanh, in, out, count);
        case KAEL_OP_ERF: return vector_math::apply(Function::Erf, in, out, count);
        case KAEL_OP_ERFC: return vector_math::apply(Function::Erfc, in, out, count);
        case KAEL_OP_SIN: return vector_math::apply(Function::Sin, in, out, count);
        case KAEL_OP_COS: return vector_math::apply(Function::Cos, in, out, count);
        case KAEL_OP_LOG1P: return vector_math::apply(Function::Log1p, in, out, count);
        case KAEL_OP_EXPM1: return vector_math::apply(Function::Expm1, in, out, count);
        case KAEL_OP_LOG10: return vector_math::apply(Function::Log10, in, out, count);
        case KAEL_OP_LOG2: return vector_math::apply(Function::Log2, in, out, count);
        case KAEL_OP_EXP2: return vector_math::apply(Function::Exp2, in, out, count);
        case KAEL_OP_SIGMOID:
        case KAEL_OP_SILU:
        case KAEL_OP_GELU_TANH: {
            // sigmoid(z) from e = exp(-|z|) as stable_sigmoid; gelu_tanh = x sigmoid(2u),
            // silu = x sigmoid(x).
            const bool gelu = op == KAEL_OP_GELU_TANH;
            const bool times_x = gelu || op == KAEL_OP_SILU;
            float arguments[kChunk];  // z, kept for its sign
            for (int64_t i = 0; i < count; ++i) {
                const float x = in[i];
                arguments[i] =
                    gelu ? 2.0F * 0.79788456080286535588F * (x + 0.044715F * x * x * x) : x;
                scratch[i] = -std::fabs(arguments[i]);
            }
            vector_math::apply(Function::Exp, scratch, scratch, count);
            if (times_x) {
                finish_sigmoid<true>(in, arguments, scratch, out, count);
            } else {
                finish_sigmoid<false>(in, arguments, scratch, out, count);
            }
            return;
        }
        case KAEL_OP_GELU_EXACT: {
            // x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2 with erfc(z) = t exp(-z^2 + P(t)),
            // t = 1 / (1 + |z| / 2) (Numerical Recipes' erfcc, relative error under 1.2e-7 in
            // both tails), reflected as 2 - erfc(|z|) for z < 0: one libmvec exp a element
            // instead of erf and erfc (libmvec's erff alone cost 1.7x PyTorch's whole gelu).
            float fractions[kChunk];
            for (int64_t i = 0; i < count; ++i) {
                const float z = std::fabs(in[i]) * kInverseSqrt2;
                const float t = 1.0F / (1.0F + 0.5F * z);
                fractions[i] = t;
                scratch[i] = erfc_exponent(z, t);
            }
            vector_math::apply(Function::Exp, scratch, scratch, count);
            // The factor picked by weights of exactly 0 and 1, not a select: GCC moves 1 - h into
            // one arm of a select and leaves a branch below AVX-512 (0.08 of PyTorch's gelu).
            for (int64_t i = 0; i < count; ++i) {
                const float x = in[i];
                const float half_erfc = 0.5F * fractions[i] * scratch[i];  // erfc(|z|) / 2
                std::uint32_t bits = 0;
                std::memcpy(&bits, &x, sizeof bits);
                const auto negative = static_cast<float>(bits >> 31U);  // -0.0: h = 1 - h
                out[i] = x * (negative * half_erfc + (1.0F - negative) * (1.0F - half_erfc));
            }
            return;
        }
        default: return;
    }
}
#pragma GCC diagnostic pop

[[gnu::target("avx512f")]] void vector_chunk_avx512(kael_element_op op, const float* in, float* out,
                                                    int64_t count) {
    if (op == KAEL_OP_GELU_EXACT) {
        return gelu_exact_avx512(in, out, count);  // the same formula, all in registers
    }
    vector_chunk(op, in, out, count);
}

[[gnu::target("avx2")]] void vector_chunk_avx2(kael_element_op op, const float* in, float* out,
                                               int64_t count) {
    if (op == KAEL_OP_GELU_EXACT) {
        return gelu_exact_avx2(in, out,
                               count);  // the chunk loop's three passes ran at 0.5 of PyTorch
    }
    vector_chunk(op, in, out, count);
}

void vector_chunk_widest(kael_element_op op, const float* in, float* out, int64_t count) {
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512: return vector_chunk_avx512(op, in, out, count);
        case vector_math::Isa::Avx2: return vector_chunk_avx2(op, in, out, count);
        default: return vector_chunk(op, in, out, count);
    }
}

}  // namespace

bool run_vector_math(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                     const kael_element_layout& layout) {
    const bool supported = op == KAEL_OP_EXP || op == KAEL_OP_LOG || op == KAEL_OP_TANH ||
                           op == KAEL_OP_SIGMOID || op == KAEL_OP_GELU_TANH ||
                           op == KAEL_OP_GELU_EXACT || op == KAEL_OP_ERF || op == KAEL_OP_ERFC ||
                           op == KAEL_OP_SILU || op == KAEL_OP_SIN || op == KAEL_OP_COS ||
                           op == KAEL_OP_LOG1P || op == KAEL_OP_EXPM1 || op == KAEL_OP_LOG10 ||
                           op == KAEL_OP_LOG2 || op == KAEL_OP_EXP2;
    if (!supported || out_dtype != KAEL_DTYPE_F32 || in_dtype != KAEL_DTYPE_F32 ||
        layout.operands != 2 || layout.dims != 1 || layout.strides[0][0] != 4 ||
        layout.strides[1][0] != 4) {
        return false;
    }
    auto* out = static_cast<float*>(layout.base[0]);
    const auto* in = static_cast<const float*>(layout.base[1]);
    parallel_ranges(tasks_of(layout.count), kMinParallelElements / kChunk,
                    [&](int64_t begin, int64_t end) {
                        for (int64_t chunk = begin; chunk < end; ++chunk) {
                            const int64_t first = chunk * kChunk;
                            vector_chunk_widest(op, in + first, out + first,
                                                std::min(kChunk, layout.count - first));
                        }
                    });
    return true;
}

}  // namespace kael::cpu
