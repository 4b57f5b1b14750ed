#pragma once
// Entry points of the CUDA plugin's table, one file per family. Every entry makes its device
// current (use_device) before it touches memory or launches work.
#include <cstdint>
#include <string>

#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"
#include "kael/plugin_extensions.h"

namespace kael::cuda {

KAEL_DECLARE_PLUGIN_ENTRIES();

// Slots only this plugin has: matmul_epilogue (matmul.cu), scan (scan.cu), reduce_indexed
// (reduce_dims.cu) and its rows (inner == 1, reduce.cu).
KAEL_DECLARE_ENTRY(matmul_epilogue);
KAEL_DECLARE_ENTRY(scan);
KAEL_DECLARE_ENTRY(reduce_indexed);
// dtype may be bf16/f16 (values in that dtype).
void reduce_rows_indexed(bool largest, kael_dtype dtype, void* values, std::int64_t* indices,
                         const void* data, std::int64_t length, std::int64_t rows);
// The rows of reduce_dims_finished (inner == 1, or any empty reduction; reduce.cu), the call
// already checked.
void reduce_rows_finished(kael_reduce_op op, kael_dtype dtype, void* results, const void* data,
                          std::int64_t length, std::int64_t rows, double scale, bool root);

// bf16/f16 rows (reduce.cu), folded by the f32 reducers: results as with_low_precision_reducer
// (reduce_common.cuh) says (finished: times scale, or its root); other calls declined
// (plugin::unsupported).
void reduce_rows_low_precision(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                               void* results, const void* data, std::int64_t length,
                               std::int64_t rows, bool finished, double scale, bool root);

// KAEL_EXTENSION_COLLECTIVES on NCCL (collectives_nccl.cpp).
const kael_collectives* collectives();

// KAEL_EXTENSION_CONVOLUTION on cuDNN (convolution_cudnn.cpp): null without cuDNN, whose reason
// cudnn_unavailable_reason() gives ("" when loaded); the description is for build_info.
const kael_convolution* convolution();
// KAEL_EXTENSION_POOLING and KAEL_EXTENSION_RECURRENT on the shared tasks (layer_tasks.cu).
const kael_pooling* pooling();
const kael_recurrent* recurrent();
// KAEL_EXTENSION_CHANNELS (channels.cu): per-channel moments, backward sums and affine maps.
const kael_channels* channels();
// KAEL_EXTENSION_HOST_MEMORY (memory.cpp): cudaHostAlloc's page-locked host memory.
const kael_host_memory* host_memory();
// KAEL_EXTENSION_DECODING: the layer norm fused into a one-row product (gemv.cu) and the
// decoding attention that stores the step's key and value itself (attention.cu).
kael_status layer_norm_linear(int32_t device, kael_dtype dtype, const void* a,
                              const void* norm_weight, const void* norm_bias, double eps,
                              const void* b, const void* bias, const void* residual, void* out,
                              const kael_matmul_sizes* sizes, int32_t activation);
kael_status cached_attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                             void* k, void* v, const kael_attention_layout* layout,
                             const kael_cache_append* append);
std::string cudnn_unavailable_reason();
std::string convolution_description();

}  // namespace kael::cuda
