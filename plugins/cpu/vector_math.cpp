#include "vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "vector_math_wide.h"

#if defined(__x86_64__)
#include <immintrin.h>

extern "C" {
__m128 _ZGVbN4v_expf(__m128);
__m128 _ZGVbN4v_logf(__m128);
__m128 _ZGVbN4v_tanhf(__m128);
__m128 _ZGVbN4v_erff(__m128);
__m128 _ZGVbN4v_erfcf(__m128);
__m128 _ZGVbN4v_sinf(__m128);
__m128 _ZGVbN4v_cosf(__m128);
__m128 _ZGVbN4v_log1pf(__m128);
__m128 _ZGVbN4v_expm1f(__m128);
__m128 _ZGVbN4v_log10f(__m128);
__m128 _ZGVbN4v_log2f(__m128);
__m128 _ZGVbN4v_exp2f(__m128);
__m128 _ZGVbN4vv_powf(__m128, __m128);
}
#endif

namespace kael::cpu::vector_math {
namespace {

float scalar(Function function, float x) {
    switch (function) {
        case Function::Exp: return std::exp(x);
        case Function::Log: return std::log(x);
        case Function::Tanh: return std::tanh(x);
        case Function::Erf: return std::erf(x);
        case Function::Erfc: return std::erfc(x);
        case Function::Sin: return std::sin(x);
        case Function::Cos: return std::cos(x);
        case Function::Log1p: return std::log1p(x);
        case Function::Expm1: return std::expm1(x);
        case Function::Log10: return std::log10(x);
        case Function::Log2: return std::log2(x);
        case Function::Exp2: return std::exp2(x);
    }
    return x;
}

#if defined(__x86_64__)
template <__m128 (*kFunction)(__m128)>
void run_sse(const float* in, float* out, std::int64_t count) {
    std::int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
        _mm_storeu_ps(out + i, kFunction(_mm_loadu_ps(in + i)));
    }
    for (; i < count; ++i) {
        out[i] = _mm_cvtss_f32(kFunction(_mm_set1_ps(in[i])));
    }
}

void apply_sse(Function function, const float* in, float* out, std::int64_t count) {
    switch (function) {
        case Function::Exp: return run_sse<_ZGVbN4v_expf>(in, out, count);
        case Function::Log: return run_sse<_ZGVbN4v_logf>(in, out, count);
        case Function::Tanh: return run_sse<_ZGVbN4v_tanhf>(in, out, count);
        case Function::Erf: return run_sse<_ZGVbN4v_erff>(in, out, count);
        case Function::Erfc: return run_sse<_ZGVbN4v_erfcf>(in, out, count);
        case Function::Sin: return run_sse<_ZGVbN4v_sinf>(in, out, count);
        case Function::Cos: return run_sse<_ZGVbN4v_cosf>(in, out, count);
        case Function::Log1p: return run_sse<_ZGVbN4v_log1pf>(in, out, count);
        case Function::Expm1: return run_sse<_ZGVbN4v_expm1f>(in, out, count);
        case Function::Log10: return run_sse<_ZGVbN4v_log10f>(in, out, count);
        case Function::Log2: return run_sse<_ZGVbN4v_log2f>(in, out, count);
        case Function::Exp2: return run_sse<_ZGVbN4v_exp2f>(in, out, count);
    }
}
#endif

// The widest the CPU has, lowered by KAEL_CPU_VECTOR_ISA (avx2, sse or scalar) so that tests
// reach every path on one machine; a request above what the CPU has is ignored.
Isa chosen() {
    static const Isa isa = [] {
        Isa widest = Isa::Scalar;
#if defined(__x86_64__)
        __builtin_cpu_init();
        widest = __builtin_cpu_supports("avx512f")                                 ? Isa::Avx512
                 : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Isa::Avx2
                                                                                   : Isa::Sse;
#endif
        const char* setting = std::getenv("KAEL_CPU_VECTOR_ISA");
        const std::string requested = setting != nullptr ? setting : "";
        const Isa wanted = requested == "avx2"     ? Isa::Avx2
                           : requested == "sse"    ? Isa::Sse
                           : requested == "scalar" ? Isa::Scalar
                                                   : widest;
        return std::max(wanted, widest);  // Isa counts from the widest down
    }();
    return isa;
}

}  // namespace

void apply(Function function, const float* in, float* out, std::int64_t count) {
    switch (chosen()) {
#if defined(__x86_64__)
        case Isa::Avx512: return apply_avx512(static_cast<int>(function), in, out, count);
        case Isa::Avx2: return apply_avx2(static_cast<int>(function), in, out, count);
        case Isa::Sse: return apply_sse(function, in, out, count);
#endif
        default:
            for (std::int64_t i = 0; i < count; ++i) {
                out[i] = scalar(function, in[i]);
            }
    }
}

void power(const float* base, const float* exponent, float* out, std::int64_t count) {
    std::int64_t i = 0;
    switch (chosen()) {
#if defined(__x86_64__)
        case Isa::Avx512: return power_avx512(base, exponent, out, count);
        case Isa::Avx2: return power_avx2(base, exponent, out, count);
        case Isa::Sse:
            for (; i + 4 <= count; i += 4) {
                const __m128 b = _mm_loadu_ps(base + i);
                const __m128 e = _mm_loadu_ps(exponent + i);
                const __m128 squared = _mm_cmpeq_ps(e, _mm_set1_ps(2.0F));
                const __m128 v = _ZGVbN4vv_powf(b, e);
                _mm_storeu_ps(out + i, _mm_or_ps(_mm_and_ps(squared, _mm_mul_ps(b, b)),
                                                 _mm_andnot_ps(squared, v)));
            }
            break;
#endif
        default: break;
    }
    for (; i < count; ++i) {  // SSE's tail, or every element on other CPUs
        out[i] = exponent[i] == 2.0F ? base[i] * base[i] : std::pow(base[i], exponent[i]);
    }
}

Isa detected_isa() {
    return chosen();
}

const char* isa() {
    switch (chosen()) {
        case Isa::Avx512: return "avx512";
        case Isa::Avx2: return "avx2";
        case Isa::Sse: return "sse";
        default: return "scalar";
    }
}

}  // namespace kael::cpu::vector_math
