// vector_math's 8-lane loops, compiled for AVX2 (this file only; see vector_math_wide.h).
#include <immintrin.h>

#include <cstdint>

#include "vector_math_wide.h"

extern "C" {
__m256 _ZGVdN8v_expf(__m256);
__m256 _ZGVdN8v_logf(__m256);
__m256 _ZGVdN8v_tanhf(__m256);
__m256 _ZGVdN8v_erff(__m256);
__m256 _ZGVdN8v_erfcf(__m256);
}

namespace kael::cpu::vector_math {
namespace {

template <__m256 (*kFunction)(__m256)>
void run(const float* in, float* out, std::int64_t count) {
    std::int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        _mm256_storeu_ps(out + i, kFunction(_mm256_loadu_ps(in + i)));
    }
    if (i < count) {  // the tail through a padded copy
        alignas(64) float lanes[8] = {};
        for (std::int64_t j = i; j < count; ++j) {
            lanes[j - i] = in[j];
        }
        _mm256_storeu_ps(lanes, kFunction(_mm256_loadu_ps(lanes)));
        for (std::int64_t j = i; j < count; ++j) {
            out[j] = lanes[j - i];
        }
    }
}

}  // namespace

void apply_avx2(int function, const float* in, float* out, std::int64_t count) {
    switch (function) {
        case 0: return run<_ZGVdN8v_expf>(in, out, count);
        case 1: return run<_ZGVdN8v_logf>(in, out, count);
        case 2: return run<_ZGVdN8v_tanhf>(in, out, count);
        case 3: return run<_ZGVdN8v_erff>(in, out, count);
        default: return run<_ZGVdN8v_erfcf>(in, out, count);
    }
}

}  // namespace kael::cpu::vector_math
