#pragma once
// Entry points of the CUDA plugin's table, one file per family. Every entry makes its device
// current (use_device) before it touches memory or launches work.
#include <cstdint>

#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::cuda {

KAEL_DECLARE_PLUGIN_ENTRIES();

// Slots only this plugin has (matmul.cu).
kael_status matmul_epilogue(int32_t device, kael_dtype dtype, const void* a, const void* b,
                            const void* bias, const void* residual, void* out,
                            const kael_matmul_sizes* sizes, int32_t activation);

// The scan slot (scan.cu).
kael_status scan(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                 void* out, const void* data, int64_t outer, int64_t size, int64_t inner);
// The reduce_indexed slot (reduce_dims.cu) and its rows (inner == 1, reduce.cu).
kael_status reduce_indexed(int32_t device, kael_reduce_op op, kael_dtype dtype, void* values,
                           int64_t* indices, const void* data, int64_t outer, int64_t size,
                           int64_t inner);
void reduce_rows_indexed(bool largest, kael_dtype dtype, void* values, std::int64_t* indices,
                         const void* data, std::int64_t length, std::int64_t rows);
// The rows of reduce_dims_finished (inner == 1, or any empty reduction; reduce.cu), the call
// already checked.
void reduce_rows_finished(kael_reduce_op op, kael_dtype dtype, void* results, const void* data,
                          std::int64_t length, std::int64_t rows, double scale, bool root);

}  // namespace kael::cuda
