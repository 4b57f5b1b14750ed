// Contiguous conversions between float32 and bfloat16 or float16 on the cpu plugin: sixteen
// elements at a time with AVX-512 where the cpu has it (vcvtph2ps and vcvtps2ph round as IEEE
// says; bfloat16 is rounded with integer lanes, as low_precision.h does one element at a time),
// else through low_precision.h. These conversions make the f32 twins the core computes
// bfloat16 and float16 in (kernel_run.h), so every low-precision op pays them twice.
#include "convert_low_precision.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_kernels.h"
#include "kael/kernels/low_precision.h"
#include "low_precision_lanes.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

using kernels::BFloat16;
using kernels::Half;

constexpr int64_t kChunk = 4096;
constexpr int64_t kMinParallelElements = int64_t{1} << 16;

enum class Pair { Bf16ToF32, F32ToBf16, F16ToF32, F32ToF16 };

void scalar(Pair pair, const void* in, void* out, int64_t count) {
    const auto* floats = static_cast<const float*>(in);
    const auto* brains = static_cast<const BFloat16*>(in);
    const auto* halves = static_cast<const Half*>(in);
    for (int64_t i = 0; i < count; ++i) {
        switch (pair) {
            case Pair::Bf16ToF32:
                static_cast<float*>(out)[i] = kernels::to_float(brains[i]);
                break;
            case Pair::F32ToBf16:
                static_cast<BFloat16*>(out)[i] = kernels::to_bfloat16(floats[i]);
                break;
            case Pair::F16ToF32:
                static_cast<float*>(out)[i] = kernels::to_float(halves[i]);
                break;
            case Pair::F32ToF16:
                static_cast<Half*>(out)[i] = kernels::to_half(floats[i]);
                break;
        }
    }
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as low_precision_lanes.h says
#pragma GCC diagnostic ignored "-Wuninitialized"  // sanitizer builds say it so
// One loop per pair (a template), so no switch runs per sixteen elements.
template <Pair pair>
[[gnu::target("avx512f")]] void avx512_loop(const void* in, void* out, int64_t count) {
    const auto* in_bytes = static_cast<const char*>(in);
    auto* out_bytes = static_cast<char*>(out);
    const int64_t in_size = pair == Pair::F32ToBf16 || pair == Pair::F32ToF16 ? 4 : 2;
    const int64_t out_size = 6 - in_size;
    constexpr bool kBf16 = pair == Pair::Bf16ToF32 || pair == Pair::F32ToBf16;
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const char* from = in_bytes + i * in_size;
        char* to = out_bytes + i * out_size;
        if constexpr (pair == Pair::Bf16ToF32 || pair == Pair::F16ToF32) {
            _mm512_storeu_ps(reinterpret_cast<float*>(to), load16<kBf16>(from));
        } else {
            store16<kBf16>(to, _mm512_loadu_ps(reinterpret_cast<const float*>(from)));
        }
    }
    scalar(pair, in_bytes + i * in_size, out_bytes + i * out_size, count - i);
}
#pragma GCC diagnostic pop

// out = a op b over count contiguous bf16/f16 elements, in f32 registers with one rounding.
template <bool kBf16, int kOp>
[[gnu::target("avx512f")]] void binary_loop(const void* a, const void* b, void* out,
                                            int64_t count) {
    const auto* x = static_cast<const std::uint16_t*>(a);
    const auto* y = static_cast<const std::uint16_t*>(b);
    auto* z = static_cast<std::uint16_t*>(out);
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512 u = load16<kBf16>(x + i);
        const __m512 v = load16<kBf16>(y + i);
        __m512 w;
        if constexpr (kOp == KAEL_OP_PLUS) {
            w = _mm512_add_ps(u, v);
        } else if constexpr (kOp == KAEL_OP_MINUS) {
            w = _mm512_sub_ps(u, v);
        } else if constexpr (kOp == KAEL_OP_MULTIPLY) {
            w = _mm512_mul_ps(u, v);
        } else {
            w = _mm512_div_ps(u, v);
        }
        store16<kBf16>(z + i, w);
    }
    for (; i < count; ++i) {  // the tail, one element at a time as low_precision.h does
        float u;
        float v;
        if constexpr (kBf16) {
            u = kernels::to_float(kernels::BFloat16{x[i]});
            v = kernels::to_float(kernels::BFloat16{y[i]});
        } else {
            u = kernels::to_float(kernels::Half{x[i]});
            v = kernels::to_float(kernels::Half{y[i]});
        }
        const float w = kOp == KAEL_OP_PLUS       ? u + v
                        : kOp == KAEL_OP_MINUS    ? u - v
                        : kOp == KAEL_OP_MULTIPLY ? u * v
                                                  : u / v;
        z[i] = kBf16 ? kernels::to_bfloat16(w).bits : kernels::to_half(w).bits;
    }
}

// relu, neg and abs of bf16/f16 on the bits (exact: each changes or reads only the sign; relu
// keeps a NaN as the f32 functor does, and gives +0 for -0): no conversion at all.
template <bool kBf16, kael_element_op kOp>
[[gnu::always_inline]] inline void sign_loop(const std::uint16_t* x, std::uint16_t* z,
                                             int64_t count) {
    constexpr std::uint16_t kInfinity = kBf16 ? 0x7F80 : 0x7C00;
    for (int64_t i = 0; i < count; ++i) {
        const std::uint16_t bits = x[i];
        if constexpr (kOp == KAEL_OP_NEGATE) {
            z[i] = static_cast<std::uint16_t>(bits ^ 0x8000U);
        } else if constexpr (kOp == KAEL_OP_ABS) {
            z[i] = static_cast<std::uint16_t>(bits & 0x7FFFU);
        } else {
            const bool zeroed = (bits & 0x8000U) != 0 && (bits & 0x7FFFU) <= kInfinity;
            z[i] = zeroed ? std::uint16_t{0} : bits;
        }
    }
}

template <bool kBf16, kael_element_op kOp>
[[gnu::target("avx2")]] void sign_loop_avx2(const std::uint16_t* x, std::uint16_t* z,
                                            int64_t count) {
    sign_loop<kBf16, kOp>(x, z, count);
}

template <bool kBf16, kael_element_op kOp>
void sign_loop_widest(const void* in, void* out, int64_t count) {
    const auto* x = static_cast<const std::uint16_t*>(in);
    auto* z = static_cast<std::uint16_t*>(out);
    if (vector_math::chosen_isa() != vector_math::Isa::Sse) {
        sign_loop_avx2<kBf16, kOp>(x, z, count);
    } else {
        sign_loop<kBf16, kOp>(x, z, count);
    }
}

template <bool kBf16>
bool sign_for(kael_element_op op, const void* in, void* out, int64_t count) {
    switch (op) {
        case KAEL_OP_RELU: sign_loop_widest<kBf16, KAEL_OP_RELU>(in, out, count); return true;
        case KAEL_OP_NEGATE: sign_loop_widest<kBf16, KAEL_OP_NEGATE>(in, out, count); return true;
        case KAEL_OP_ABS: sign_loop_widest<kBf16, KAEL_OP_ABS>(in, out, count); return true;
        default: return false;
    }
}

template <bool kBf16>
bool binary_for(kael_element_op op, const void* a, const void* b, void* out, int64_t count) {
    switch (op) {
        case KAEL_OP_PLUS: binary_loop<kBf16, KAEL_OP_PLUS>(a, b, out, count); return true;
        case KAEL_OP_MINUS: binary_loop<kBf16, KAEL_OP_MINUS>(a, b, out, count); return true;
        case KAEL_OP_MULTIPLY: binary_loop<kBf16, KAEL_OP_MULTIPLY>(a, b, out, count); return true;
        case KAEL_OP_DIVIDE: binary_loop<kBf16, KAEL_OP_DIVIDE>(a, b, out, count); return true;
        default: return false;
    }
}

void avx512(Pair pair, const void* in, void* out, int64_t count) {
    switch (pair) {
        case Pair::Bf16ToF32: return avx512_loop<Pair::Bf16ToF32>(in, out, count);
        case Pair::F32ToBf16: return avx512_loop<Pair::F32ToBf16>(in, out, count);
        case Pair::F16ToF32: return avx512_loop<Pair::F16ToF32>(in, out, count);
        case Pair::F32ToF16: return avx512_loop<Pair::F32ToF16>(in, out, count);
    }
}

}  // namespace

void convert_contiguous(kael_dtype out_dtype, kael_dtype in_dtype, const void* in, void* out,
                        int64_t count) {
    const Pair pair = in_dtype == KAEL_DTYPE_BF16   ? Pair::Bf16ToF32
                      : in_dtype == KAEL_DTYPE_F16  ? Pair::F16ToF32
                      : out_dtype == KAEL_DTYPE_BF16 ? Pair::F32ToBf16
                                                     : Pair::F32ToF16;
    if (vector_math::chosen_isa() == vector_math::Isa::Avx512) {
        avx512(pair, in, out, count);
    } else {
        scalar(pair, in, out, count);
    }
}

bool binary_low_precision(kael_element_op op, kael_dtype dtype, const void* a, const void* b,
                          void* out, int64_t count) {
    if (vector_math::chosen_isa() != vector_math::Isa::Avx512) {
        return false;
    }
    return dtype == KAEL_DTYPE_BF16 ? binary_for<true>(op, a, b, out, count)
                                    : binary_for<false>(op, a, b, out, count);
}

bool sign_low_precision(kael_element_op op, kael_dtype dtype, const void* in, void* out,
                        int64_t count) {
    return dtype == KAEL_DTYPE_BF16 ? sign_for<true>(op, in, out, count)
                                    : sign_for<false>(op, in, out, count);
}

bool run_low_precision_convert(kael_dtype out_dtype, kael_dtype in_dtype,
                               const kael_element_layout& layout) {
    Pair pair;
    if (in_dtype == KAEL_DTYPE_BF16 && out_dtype == KAEL_DTYPE_F32) {
        pair = Pair::Bf16ToF32;
    } else if (in_dtype == KAEL_DTYPE_F32 && out_dtype == KAEL_DTYPE_BF16) {
        pair = Pair::F32ToBf16;
    } else if (in_dtype == KAEL_DTYPE_F16 && out_dtype == KAEL_DTYPE_F32) {
        pair = Pair::F16ToF32;
    } else if (in_dtype == KAEL_DTYPE_F32 && out_dtype == KAEL_DTYPE_F16) {
        pair = Pair::F32ToF16;
    } else {
        return false;
    }
    const int64_t in_size = in_dtype == KAEL_DTYPE_F32 ? 4 : 2;
    const int64_t out_size = out_dtype == KAEL_DTYPE_F32 ? 4 : 2;
    if (layout.operands != 2 || layout.dims != 1 || layout.strides[0][0] != out_size ||
        layout.strides[1][0] != in_size) {
        return false;  // strided: the element runner
    }
    const auto* in = static_cast<const char*>(layout.base[1]);
    auto* out = static_cast<char*>(layout.base[0]);
    const bool wide = vector_math::chosen_isa() == vector_math::Isa::Avx512;
    const int64_t chunks = (layout.count + kChunk - 1) / kChunk;
    parallel_ranges(chunks, kMinParallelElements / kChunk, [&](int64_t begin, int64_t end) {
        const int64_t first = begin * kChunk;
        const int64_t count = std::min(end * kChunk, layout.count) - first;
        const char* from = in + first * in_size;
        char* to = out + first * out_size;
        if (wide) {
            avx512(pair, from, to, count);
        } else {
            scalar(pair, from, to, count);
        }
    });
    return true;
}

}  // namespace kael::cpu
