#pragma once
// The cpu plugin's convert fast path between float32 and bfloat16 or float16
// (convert_low_precision.cpp).
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::cpu {

// Converts a contiguous run (one merged dimension) of f32 to or from bf16 or f16 and returns
// true; false, having done nothing, for any other dtype pair or layout.
bool run_low_precision_convert(kael_dtype out_dtype, kael_dtype in_dtype,
                               const kael_element_layout& layout);

// out = a op b (+ - * /) over count contiguous bf16 or f16 elements (dtype), in f32 vector
// registers with one rounding; false, having done nothing, for other ops or without AVX-512.
bool binary_low_precision(kael_element_op op, kael_dtype dtype, const void* a, const void* b,
                          void* out, int64_t count);

// out = relu, neg or abs (op) of count contiguous bf16 or f16 (dtype) elements, on their bits;
// false, having done nothing, for other ops.
bool sign_low_precision(kael_element_op op, kael_dtype dtype, const void* in, void* out,
                        int64_t count);

// count contiguous elements from bf16/f16 to f32 or from f32 to bf16/f16, on this thread.
void convert_contiguous(kael_dtype out_dtype, kael_dtype in_dtype, const void* in, void* out,
                        int64_t count);

}  // namespace kael::cpu
