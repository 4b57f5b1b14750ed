#pragma once
// Entry points of the CUDA plugin's table, one file per family. Every entry makes its device
// current (use_device) before it touches memory or launches work.
#include <cstdint>

#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::cuda {

KAEL_DECLARE_PLUGIN_ENTRIES();

}  // namespace kael::cuda
