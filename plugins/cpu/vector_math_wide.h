#pragma once
// What each ISA file of vector_math exports: plain functions, no shared inline code, so that
// nothing compiled for AVX2 or AVX-512 can stand in for a baseline copy (vector_math.cpp).
#include <cstdint>

namespace kael::cpu::vector_math {

// function: Function's value. Defined in vector_math_avx2.cpp / vector_math_avx512.cpp.
void apply_avx2(int function, const float* in, float* out, std::int64_t count);
void apply_avx512(int function, const float* in, float* out, std::int64_t count);
// out[i] = base[i] ** exponent[i] (vector_math::power).
void power_avx2(const float* base, const float* exponent, float* out, std::int64_t count);
void power_avx512(const float* base, const float* exponent, float* out, std::int64_t count);

}  // namespace kael::cpu::vector_math
