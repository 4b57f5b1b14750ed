#pragma once
// The cpu plugin's bfloat16/float16 reductions in registers (reduce_low_precision.cpp).
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::cpu {

// results[r] = the f32 sum, product, max or min (op) of row r of rows x length contiguous bf16
// or f16 (dtype) elements, in vector registers on this thread (max/min: NaN propagates, the
// first one); false, having done nothing, for other ops, length 0 or without AVX-512.
bool rows_low_precision(kael_reduce_op op, kael_dtype dtype, const void* data, int64_t rows,
                        int64_t length, float* results);

// results[o * inner + j] = the f32 sum, product, max or min (op) over i of element (o, i, j) of
// a contiguous [outer, size, inner] bf16 or f16 (dtype) tensor, in vector registers on the
// plugin's threads (max/min: NaN propagates, the first one down the column); false, having done
// nothing, for other ops, size 0 or without AVX-512.
bool column_reduce_low_precision(kael_reduce_op op, kael_dtype dtype, const void* data,
                                 int64_t outer, int64_t size, int64_t inner, float* results);

}  // namespace kael::cpu
