#pragma once
// Sixteen bfloat16 or float16 lanes to and from f32 AVX-512 registers, for the cpu plugin's
// low-precision loops (convert_low_precision.cpp, elementwise_math.cpp). Callers compile these
// for avx512f and must have checked vector_math::chosen_isa() first.
#include <immintrin.h>

namespace kael::cpu {

// GCC 12 takes the undefined merge operand inside some AVX-512 intrinsics (shifts, zero
// extension) for an uninitialized variable once they are inlined: callers that inline these
// ignore -Wmaybe-uninitialized around their loops too.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // sanitizer builds say it so
// Sixteen bf16 (kBf16) or f16 values from memory as f32, and back with round to nearest even
// (bf16 NaN: its top half, quieted, as to_bfloat16).
template <bool kBf16>
[[gnu::target("avx512f")]] inline __m512 load16(const void* from) {
    const __m256i halves = _mm256_loadu_si256(static_cast<const __m256i*>(from));
    if constexpr (kBf16) {
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16));
    } else {
        return _mm512_cvtph_ps(halves);
    }
}

template <bool kBf16>
[[gnu::target("avx512f")]] inline void store16(void* to, __m512 values) {
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
#pragma GCC diagnostic pop

}  // namespace kael::cpu
