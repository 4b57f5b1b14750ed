#pragma once
// One-row f32 products against a weight stored [columns, inner] (x @ W^T, as linear layers and
// every decoding step have them), as kael's own memory-bound kernel (gemv.cu).
#include "kael/plugin_api.h"

namespace kael::cuda {

// out[0][c] = a[0] . b[c] (+ bias[c]) when the product is one such row (batches == rows == 1,
// b transposed, 16-byte aligned rows); false, having done nothing, otherwise or when
// KAEL_CUDA_GEMV=0.
bool gemv_f32(const void* a, const void* b, const void* bias, void* out,
              const kael_matmul_sizes& sizes);

}  // namespace kael::cuda
