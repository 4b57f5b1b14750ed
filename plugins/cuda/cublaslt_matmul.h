#pragma once
// cuBLASLt for single (unbatched) f32/f64/bf16/f16 products (TF32 where sizes.precision allows),
// dlopen'ed like cuBLAS: the bias rides in the GEMM's epilogue (no fill pass before it), and each
// product's descriptors and algorithm are made once per shape, so a call costs the host less than
// cublasSgemm's per-call heuristics. A large product's first call times the heuristic's first eight
// algorithms and keeps the fastest (KAEL_CUDA_GEMM_TUNE, plugins/cuda/README.md).
#include "kael/plugin_api.h"

namespace kael::cuda {

// out = a x b (+ bias[column] on every row when bias is not null, + residual, laid out as out,
// when residual is not null: cuBLASLt's C with beta 1), row-major per
// kael_matmul_sizes with batches == 1 and inner > 0, on the current device. false, having done
// nothing, when cuBLASLt is not loadable, is turned off (KAEL_CUDA_CUBLASLT=0) or offers no
// algorithm for this product: the caller then uses cuBLAS.
bool cublaslt_matmul(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
                     const kael_matmul_sizes& sizes, const void* residual = nullptr);

}  // namespace kael::cuda
