#pragma once
// f32 transcendental functions over arrays through glibc's vector math library (libmvec): 16
// lanes with AVX-512, 8 with AVX2, 4 otherwise, chosen once at run time; scalar libm on other
// CPUs. libmvec's results are within a few ulp of libm's.
#include <cstdint>

namespace kael::cpu::vector_math {

enum class Function { Exp, Log, Tanh, Erf, Erfc };

// out[i] = function(in[i]) for i < count; out may be in.
void apply(Function function, const float* in, float* out, std::int64_t count);

// The instruction set apply uses: "avx512", "avx2", "sse" or "scalar".
const char* isa();

}  // namespace kael::cpu::vector_math
