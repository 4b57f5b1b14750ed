// gelu (exact) in registers from load to store (gelu_exact.h has the formula): the AVX-512 and
// AVX2 kernels, each running several vectors' chains side by side.
#include "gelu_exact.h"

#include <immintrin.h>

#include <climits>
#include <cstdint>

namespace kael::cpu {
namespace {

// e^a = 2^n e^r, n = round(a log2 e), r = a - n ln 2 with ln 2 in two parts (the high one exact
// in n ln 2); e^r for |r| <= ln 2 / 2 by Horner's rule from r^7 down (Cephes' expf, relative
// error ~1e-7).
constexpr float kLog2E = 1.44269504088896341F;
constexpr float kLn2High = 0.693359375F;
constexpr float kLn2Low = -2.12194440e-4F;
constexpr float kExpLeading = 1.9875691500e-4F;
constexpr float kExpCoefficients[] = {1.3981999507e-3F,
                                      8.3334519073e-3F,
                                      4.1665795894e-2F,
                                      1.6666665459e-1F,
                                      5.0000001201e-1F,
                                      1.0F,
                                      1.0F};

// GCC 12 takes the undefined merge operand inside some AVX-512 intrinsics (min, rcp14) for an
// uninitialized variable once they are inlined out of a region that ignores the warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// e^a for -112 <= a <= 0, kVectors x 16 lanes (Cephes' expf: a = n ln 2 + r, |r| <= ln 2 / 2, a
// degree-7 series in r, relative error about 1e-7), inline: libmvec's exp is a call that spills
// every zmm. Each step runs over all the vectors, so their chains are in flight together.
template <int kVectors>
[[gnu::target("avx512f"), gnu::always_inline]] inline void exp_nonpositive(__m512 (&a)[kVectors]) {
    __m512 n[kVectors];
    __m512 r[kVectors];
    __m512 p[kVectors];
    for (int v = 0; v < kVectors; ++v) {
        n[v] = _mm512_roundscale_ps(_mm512_mul_ps(a[v], _mm512_set1_ps(kLog2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        r[v] = _mm512_fnmadd_ps(n[v], _mm512_set1_ps(kLn2High), a[v]);
        r[v] = _mm512_fnmadd_ps(n[v], _mm512_set1_ps(kLn2Low), r[v]);
        p[v] = _mm512_set1_ps(kExpLeading);
    }
    for (const float c : kExpCoefficients) {
        for (int v = 0; v < kVectors; ++v) {
            p[v] = _mm512_fmadd_ps(p[v], r[v], _mm512_set1_ps(c));
        }
    }
    for (int v = 0; v < kVectors; ++v) {
        a[v] = _mm512_scalef_ps(p[v], n[v]);  // times 2^n, underflowing gradually to 0
    }
}

// gelu (exact) of kVectors x 16 lanes (the last vector's lanes as `last`), h = erfc(|z|) / 2 as
// erfc_exponent's (its ln 2 taken into P's constant): t from rcp14 and one Newton step instead
// of a division, the exp inline, about 40 vector ops a 16 lanes. z is clamped to 10.5, where h
// has underflowed to 0, so an infinite x gives x, not NaN; a NaN x stays NaN. Eight vectors a
// step: one vector's chain of ~30 dependent ops left the core waiting (0.52 -> 0.31 ns an element
// in L1 on a Zen 5; 4, 6, 12 and 16 vectors were slower).
template <int kVectors>
[[gnu::target("avx512f"), gnu::always_inline]] inline void gelu_exact_vectors(const float* in,
                                                                              float* out,
                                                                              __mmask16 last) {
    const __m512 one = _mm512_set1_ps(1.0F);
    __m512 x[kVectors];
    __m512 z[kVectors];
    __m512 t[kVectors];
    __m512 h[kVectors];
    for (int v = 0; v < kVectors; ++v) {
        x[v] = _mm512_maskz_loadu_ps(v + 1 == kVectors ? last : __mmask16{0xFFFF}, in + 16 * v);
        z[v] = _mm512_min_ps(_mm512_mul_ps(_mm512_abs_ps(x[v]), _mm512_set1_ps(kInverseSqrt2)),
                             _mm512_set1_ps(10.5F));
        const __m512 d = _mm512_fmadd_ps(_mm512_set1_ps(0.5F), z[v], one);
        const __m512 r = _mm512_rcp14_ps(d);
        t[v] = _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0F)));
        h[v] = _mm512_set1_ps(kErfcCoefficients[0]);
    }
    for (int k = 1; k < kErfcTerms; ++k) {  // P(t) - ln 2 by Horner's rule
        const float c = kErfcCoefficients[k] - (k + 1 == kErfcTerms ? kLn2 : 0.0F);
        for (int v = 0; v < kVectors; ++v) {
            h[v] = _mm512_fmadd_ps(h[v], t[v], _mm512_set1_ps(c));
        }
    }
    for (int v = 0; v < kVectors; ++v) {
        h[v] = _mm512_fnmadd_ps(z[v], z[v], h[v]);
    }
    exp_nonpositive(h);
    for (int v = 0; v < kVectors; ++v) {
        h[v] = _mm512_mul_ps(t[v], h[v]);
        // Phi(x) = h where the sign bit is set (so -0.0 stays -0.0), 1 - h elsewhere.
        const __mmask16 negative =
            _mm512_test_epi32_mask(_mm512_castps_si512(x[v]), _mm512_set1_epi32(INT32_MIN));
        _mm512_mask_storeu_ps(out + 16 * v, v + 1 == kVectors ? last : __mmask16{0xFFFF},
                              _mm512_mul_ps(x[v], _mm512_mask_sub_ps(h[v], ~negative, one, h[v])));
    }
}

}  // namespace

[[gnu::target("avx512f")]] void gelu_exact_avx512(const float* in, float* out, int64_t count) {
    constexpr int kStep = 8;
    int64_t i = 0;
    for (; i + 16 * kStep <= count; i += 16 * kStep) {
        gelu_exact_vectors<kStep>(in + i, out + i, 0xFFFF);
    }
    for (; i < count; i += 16) {
        const __mmask16 lanes =
            count - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1U << (count - i)) - 1U);
        gelu_exact_vectors<1>(in + i, out + i, lanes);
    }
}
#pragma GCC diagnostic pop

// The AVX2 twin, 8 lanes: t by division (no rcp14), 2^n as two exponent-field products (no
// scalef; n >= -162 here, each half keeps a normal scale, the second product underflows
// gradually), the sign picked by blendv on x's sign bit. Four vectors a step (16 ymm registers).
namespace {

[[gnu::target("avx2,fma"), gnu::always_inline]] inline __m256 power_of_two(__m256i n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// kMasked: the one vector of the tail, through maskload/maskstore (microcoded on AMD: full
// vectors through them ran at 0.98 ns an element, 3x the plain loads' time).
template <int kVectors, bool kMasked>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void gelu_exact_vectors8(const float* in,
                                                                                float* out,
                                                                                __m256i last) {
    const __m256 one = _mm256_set1_ps(1.0F);
    __m256 x[kVectors];
    __m256 z[kVectors];
    __m256 t[kVectors];
    __m256 h[kVectors];
    for (int v = 0; v < kVectors; ++v) {
        x[v] = kMasked ? _mm256_maskload_ps(in + 8 * v, last) : _mm256_loadu_ps(in + 8 * v);
        z[v] = _mm256_min_ps(_mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0F), x[v]),
                                           _mm256_set1_ps(kInverseSqrt2)),
                             _mm256_set1_ps(10.5F));
        t[v] = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.5F), z[v], one));
        h[v] = _mm256_set1_ps(kErfcCoefficients[0]);
    }
    for (int k = 1; k < kErfcTerms; ++k) {  // P(t) - ln 2 by Horner's rule
        const float c = kErfcCoefficients[k] - (k + 1 == kErfcTerms ? kLn2 : 0.0F);
        for (int v = 0; v < kVectors; ++v) {
            h[v] = _mm256_fmadd_ps(h[v], t[v], _mm256_set1_ps(c));
        }
    }
    __m256 n[kVectors];
    __m256 r[kVectors];
    for (int v = 0; v < kVectors; ++v) {  // e^a, a = -z^2 + P - ln 2, as exp_nonpositive
        const __m256 a = _mm256_fnmadd_ps(z[v], z[v], h[v]);
        n[v] = _mm256_round_ps(_mm256_mul_ps(a, _mm256_set1_ps(kLog2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        r[v] = _mm256_fnmadd_ps(n[v], _mm256_set1_ps(kLn2High), a);
        r[v] = _mm256_fnmadd_ps(n[v], _mm256_set1_ps(kLn2Low), r[v]);
        h[v] = _mm256_set1_ps(kExpLeading);
    }
    for (const float c : kExpCoefficients) {
        for (int v = 0; v < kVectors; ++v) {
            h[v] = _mm256_fmadd_ps(h[v], r[v], _mm256_set1_ps(c));
        }
    }
    for (int v = 0; v < kVectors; ++v) {
        const __m256i whole = _mm256_cvtps_epi32(n[v]);
        const __m256i half = _mm256_srai_epi32(whole, 1);
        h[v] = _mm256_mul_ps(_mm256_mul_ps(h[v], power_of_two(half)),
                             power_of_two(_mm256_sub_epi32(whole, half)));
        h[v] = _mm256_mul_ps(t[v], h[v]);
        // Phi(x) = h where x's sign bit is set (so -0.0 stays -0.0), 1 - h elsewhere.
        const __m256 phi = _mm256_blendv_ps(_mm256_sub_ps(one, h[v]), h[v], x[v]);
        if constexpr (kMasked) {
            _mm256_maskstore_ps(out + 8 * v, last, _mm256_mul_ps(x[v], phi));
        } else {
            _mm256_storeu_ps(out + 8 * v, _mm256_mul_ps(x[v], phi));
        }
    }
}

}  // namespace

[[gnu::target("avx2,fma")]] void gelu_exact_avx2(const float* in, float* out, int64_t count) {
    constexpr int kStep = 4;
    int64_t i = 0;
    for (; i + 8 * kStep <= count; i += 8 * kStep) {
        gelu_exact_vectors8<kStep, false>(in + i, out + i, __m256i{});
    }
    for (; i + 8 <= count; i += 8) {
        gelu_exact_vectors8<1, false>(in + i, out + i, __m256i{});
    }
    if (i < count) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i last =
            _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count - i)), lane);
        gelu_exact_vectors8<1, true>(in + i, out + i, last);
    }
}

}  // namespace kael::cpu
