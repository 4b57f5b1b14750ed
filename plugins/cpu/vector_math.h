#pragma once
// f32 transcendental functions over arrays through glibc's vector math library (libmvec): 16
// lanes with AVX-512, 8 with AVX2, 4 otherwise, chosen once at run time; scalar libm on other
// CPUs. libmvec's results are within a few ulp of libm's.
#include <cstdint>

namespace kael::cpu::vector_math {

// Values are the index of each ISA file's switch (vector_math_lanes.inc): appended only.
enum class Function { Exp, Log, Tanh, Erf, Erfc, Sin, Cos, Log1p, Expm1, Log10, Log2, Exp2 };

// out[i] = function(in[i]) for i < count; out may be in.
void apply(Function function, const float* in, float* out, std::int64_t count);

// out[i] = base[i] ** exponent[i] (libmvec's powf; exactly base * base where the exponent is 2,
// as the shared Power functor) for i < count; out may be base or exponent.
void power(const float* base, const float* exponent, float* out, std::int64_t count);

// The instruction sets the plugin picks from, widest first.
enum class Isa { Avx512, Avx2, Sse, Scalar };

// The one apply uses, and the plugin's other per-ISA loops too (reduce_dims.cpp,
// layer_norm_f32.cpp): the CPU's widest, lowered by KAEL_CPU_VECTOR_ISA. Looked up once and
// inline: a call into vector_math.cpp per run cost 6% of a 128-wide broadcast row's time.
Isa detected_isa();
inline Isa chosen_isa() {
    static const Isa isa = detected_isa();
    return isa;
}
// Its name: "avx512", "avx2", "sse" or "scalar".
const char* isa();

}  // namespace kael::cpu::vector_math
