// vector_math's 16-lane loops, compiled for AVX512 (this file only; see vector_math_wide.h).
#include <immintrin.h>

#include <cstdint>

#include "vector_math_wide.h"

extern "C" {
__m512 _ZGVeN16v_expf(__m512);
__m512 _ZGVeN16v_logf(__m512);
__m512 _ZGVeN16v_tanhf(__m512);
__m512 _ZGVeN16v_erff(__m512);
__m512 _ZGVeN16v_erfcf(__m512);
}

namespace kael::cpu::vector_math {
namespace {

template <__m512 (*kFunction)(__m512)>
void run(const float* in, float* out, std::int64_t count) {
    std::int64_t i = 0;
    for (; i + 16 <= count; i += 16) {
        _mm512_storeu_ps(out + i, kFunction(_mm512_loadu_ps(in + i)));
    }
    if (i < count) {  // the tail through a padded copy
        alignas(64) float lanes[16] = {};
        for (std::int64_t j = i; j < count; ++j) {
            lanes[j - i] = in[j];
        }
        _mm512_storeu_ps(lanes, kFunction(_mm512_loadu_ps(lanes)));
        for (std::int64_t j = i; j < count; ++j) {
            out[j] = lanes[j - i];
        }
    }
}

}  // namespace

void apply_avx512(int function, const float* in, float* out, std::int64_t count) {
    switch (function) {
        case 0: return run<_ZGVeN16v_expf>(in, out, count);
        case 1: return run<_ZGVeN16v_logf>(in, out, count);
        case 2: return run<_ZGVeN16v_tanhf>(in, out, count);
        case 3: return run<_ZGVeN16v_erff>(in, out, count);
        default: return run<_ZGVeN16v_erfcf>(in, out, count);
    }
}

}  // namespace kael::cpu::vector_math
