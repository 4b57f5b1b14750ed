#pragma once
// The cpu plugin's bfloat16/float16 reductions in registers (reduce_low_precision.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "convert_low_precision.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/reduce.h"
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

// ABI 1.20's last pass (kernels::tasks::is_last_pass): reduce_f32(wide) writes the f32 results
// (op) of outputs rows or columns, rounded once into results; check_last_pass's ops only.
template <typename ReduceF32>
void rounded_last_pass(kael_reduce_op op, kael_dtype out_dtype, void* results, int64_t outputs,
                       ReduceF32&& reduce_f32) {
    kernels::tasks::check_last_pass(op, out_dtype);
    std::vector<float> wide(static_cast<std::size_t>(outputs));
    reduce_f32(wide.data());
    convert_contiguous(out_dtype, KAEL_DTYPE_F32, wide.data(), results, outputs);
}

}  // namespace kael::cpu
