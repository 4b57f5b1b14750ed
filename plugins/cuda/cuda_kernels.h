#pragma once
// Entry points of the CUDA plugin's table, one file per family. Every entry makes its device
// current (use_device) before it touches memory or launches work.
#include <cstdint>

#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::cuda {

KAEL_DECLARE_PLUGIN_ENTRIES();

// ABI 1.3 slots only this plugin has (matmul.cu).
kael_status matmul_epilogue(int32_t device, kael_dtype dtype, const void* a, const void* b,
                            const void* bias, const void* residual, void* out,
                            const kael_matmul_sizes* sizes, int32_t activation);

}  // namespace kael::cuda
