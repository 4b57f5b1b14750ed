#pragma once
// bfloat16/float16 transcendental ops on the cpu plugin by table (unary_tables.cpp).
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::cpu {

// Computes values[0, count) in place with the plugin's f32 kernel for op.
using UnaryF32 = void (*)(kael_element_op op, float* values, int64_t count);

// The results of op (exp, log, tanh, sigmoid, silu, gelu, erf, sin, ...: the ops the f32 kernels
// run through vector math) for all 65536 bf16 or f16 (dtype) bit patterns: compute's f32 result
// for each, rounded once, as the chunked path gives element by element. Built on the first call
// of at least kUnaryTableMin elements (once per op and dtype, thread-safe); nullptr for other
// ops, or for a smaller call before then.
const std::uint16_t* unary_table(kael_element_op op, kael_dtype dtype, int64_t count,
                                 UnaryF32 compute);

// out[i] = table[in[i]] over count contiguous 16-bit elements, on this thread (AVX-512 gathers
// where the cpu has them).
void look_up(const std::uint16_t* table, const void* in, void* out, int64_t count);

inline constexpr int64_t kUnaryTableMin = int64_t{1} << 14;

}  // namespace kael::cpu
