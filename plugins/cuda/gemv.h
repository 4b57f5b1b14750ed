#pragma once
// One-row f32, bf16 and f16 products against a weight stored [columns, inner] (x @ W^T, as
// linear layers and every decoding step have them), as kael's own memory-bound kernel (gemv.cu).
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::cuda {

// out[0][c] = a[0] . b[c] (+ bias[c]) when the product is one such row (batches == rows == 1,
// b transposed, 16-byte aligned rows); false, having done nothing, otherwise or when
// KAEL_CUDA_GEMV=0.
// With the matmul_epilogue's activation (KAEL_ACTIVATION_*) and residual (may be null) applied
// as each element is stored.
bool gemv(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
          const kael_matmul_sizes& sizes, const void* residual = nullptr,
          int activation = KAEL_ACTIVATION_NONE);

// out[i] = act(out[i]) + residual[i] for count elements of dtype (residual may be null): the
// epilogue of a product that had no fused one.
void apply_epilogue(kael_dtype dtype, void* out, const void* residual, std::int64_t count,
                    int activation);

}  // namespace kael::cuda
