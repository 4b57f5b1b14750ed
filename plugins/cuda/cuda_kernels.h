#pragma once
// Entry points of the CUDA plugin's table, one file per family. Every entry makes its device
// current (use_device) before it touches memory or launches work.
#include <cstdint>

#include "kael/kernels/entries_layer_norm.h"
#include "kael/kernels/entries_index_check.h"
#include "kael/kernels/entries_matmul_bias.h"
#include "kael/kernels/entries_optim.h"
#include "kael/kernels/entries_reduce_dims.h"
#include "kael/kernels/entries_sequence.h"
#include "kael/kernels/entries_attention.h"
#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::cuda {

KAEL_DECLARE_PLUGIN_ENTRIES();
KAEL_DECLARE_LAYER_NORM_ENTRIES();
KAEL_DECLARE_INDEX_CHECK_ENTRIES();
KAEL_DECLARE_MATMUL_BIAS_ENTRIES();
KAEL_DECLARE_OPTIM_ENTRIES();
KAEL_DECLARE_REDUCE_DIMS_ENTRIES();
KAEL_DECLARE_SEQUENCE_ENTRIES();
KAEL_DECLARE_ATTENTION_ENTRIES();

}  // namespace kael::cuda
