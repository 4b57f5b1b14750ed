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

// GCC 12 takes the undefined merge operand inside some AVX-512 intrinsics (shifts, zero
// extension) for an uninitialized variable once they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Sixteen bf16 (kBf16) or f16 values from memory as f32, and back with round to nearest even
// (bf16 NaN: its top half, quieted, as to_bfloat16).
template <bool kBf16>
[[gnu::target("avx512f")]] __m512 load16(const void* from) {
    const __m256i halves = _mm256_loadu_si256(static_cast<const __m256i*>(from));
    if constexpr (kBf16) {
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16));
    } else {
        return _mm512_cvtph_ps(halves);
    }
}

template <bool kBf16>
[[gnu::target("avx512f")]] void store16(void* to, __m512 values) {
    __m256i narrow;
    if constexpr (kBf16) {
        const __m512i bits = _mm512_castps_si512(values);
        const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
        __m512i rounded = _mm512_srli_epi32(
            _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), odd), 16);
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(
            _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
        rounded = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(bits, 16),
                                       _mm512_set1_epi32(0x40));
        narrow = _mm512_cvtepi32_epi16(rounded);
    } else {
        narrow = _mm512_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    _mm256_storeu_si256(static_cast<__m256i*>(to), narrow);
}

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

// results[r] = the f32 sum of row r (length elements, rows back to back), four 16-lane
// accumulators per row.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as above, in _mm512_reduce_add_ps
template <bool kBf16>
[[gnu::target("avx512f")]] void row_sums(const void* data, int64_t rows, int64_t length,
                                         float* results) {
    const auto* values = static_cast<const std::uint16_t*>(data);
    for (int64_t row = 0; row < rows; ++row) {
        const std::uint16_t* x = values + row * length;
        __m512 sums[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                          _mm512_setzero_ps()};
        int64_t i = 0;
        for (; i + 64 <= length; i += 64) {
            for (int k = 0; k < 4; ++k) {
                sums[k] = _mm512_add_ps(sums[k], load16<kBf16>(x + i + 16 * k));
            }
        }
        for (; i + 16 <= length; i += 16) {
            sums[0] = _mm512_add_ps(sums[0], load16<kBf16>(x + i));
        }
        float total = _mm512_reduce_add_ps(
            _mm512_add_ps(_mm512_add_ps(sums[0], sums[1]), _mm512_add_ps(sums[2], sums[3])));
        for (; i < length; ++i) {
            total += kBf16 ? kernels::to_float(kernels::BFloat16{x[i]})
                           : kernels::to_float(kernels::Half{x[i]});
        }
        results[row] = total;
    }
}
#pragma GCC diagnostic pop

// results[o * inner + j] = the f32 sum over i of element (o, i, j), for the blocks of 16-column
// groups [first, end) of a [outer, size, inner] tensor: each group's sixteen sums stay in a
// register down the size rows (inner % 16 columns at the end go one at a time).
template <bool kBf16>
[[gnu::target("avx512f")]] void column_sums(const std::uint16_t* x, int64_t size, int64_t inner,
                                            int64_t first, int64_t end, float* results) {
    for (int64_t column = first; column < end; column += 16) {
        if (column + 16 <= inner) {
            __m512 sum = _mm512_setzero_ps();
            for (int64_t i = 0; i < size; ++i) {
                sum = _mm512_add_ps(sum, load16<kBf16>(x + i * inner + column));
            }
            _mm512_storeu_ps(results + column, sum);
            continue;
        }
        for (int64_t j = column; j < inner; ++j) {
            float sum = 0;
            for (int64_t i = 0; i < size; ++i) {
                sum += kBf16 ? kernels::to_float(kernels::BFloat16{x[i * inner + j]})
                             : kernels::to_float(kernels::Half{x[i * inner + j]});
            }
            results[j] = sum;
        }
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

bool sum_low_precision(kael_dtype dtype, const void* data, int64_t rows, int64_t length,
                       float* results) {
    if (vector_math::chosen_isa() != vector_math::Isa::Avx512) {
        return false;
    }
    dtype == KAEL_DTYPE_BF16 ? row_sums<true>(data, rows, length, results)
                             : row_sums<false>(data, rows, length, results);
    return true;
}

bool column_sums_low_precision(kael_dtype dtype, const void* data, int64_t outer, int64_t size,
                               int64_t inner, float* results) {
    if (vector_math::chosen_isa() != vector_math::Isa::Avx512) {
        return false;
    }
    const auto* x = static_cast<const std::uint16_t*>(data);
    const int64_t groups = (inner + 15) / 16;
    // Tasks of whole 16-column groups of one outer index, about 2^16 elements each.
    const int64_t per_task =
        std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(size * 16, 1));
    const int64_t tasks_per_outer = (groups + per_task - 1) / per_task;
    parallel_ranges(outer * tasks_per_outer, 2, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
            const int64_t o = task / tasks_per_outer;
            const int64_t first = (task % tasks_per_outer) * per_task * 16;
            const int64_t last = std::min(inner, first + per_task * 16);
            const std::uint16_t* block = x + o * size * inner;
            float* out = results + o * inner;
            dtype == KAEL_DTYPE_BF16 ? column_sums<true>(block, size, inner, first, last, out)
                                     : column_sums<false>(block, size, inner, first, last, out);
        }
    });
    return true;
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
