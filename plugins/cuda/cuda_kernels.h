#pragma once
// Entry points of the CUDA plugin's table, one file per family. Every entry makes its device
// current (use_device) before it touches memory or launches work.
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::cuda {

// memory.cpp
kael_status allocate(int32_t device, int64_t bytes, void** block);
void release(int32_t device, void* block);
kael_status copy_to_device(int32_t device, void* target, const void* source, int64_t bytes);
kael_status copy_to_host(int32_t device, void* target, const void* source, int64_t bytes);
kael_status copy_within_device(int32_t device, void* target, const void* source, int64_t bytes);
kael_status synchronize(int32_t device);

// elementwise.cu
kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value);
kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout);
kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params);

// reduce.cu
kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count);

// matmul.cu
kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes);

// index.cu
kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                   const int64_t* indices, const kael_index_layout* layout);
kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,
                        const void* source, const kael_index_layout* layout);

// sequence.cu
kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int32_t descending);
kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count);

}  // namespace kael::cuda
