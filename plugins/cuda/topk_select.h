#pragma once
// top-k by radix select in one kernel (topk_select.cu), for k up to kMaxSelect; the topk entry
// (sequence.cu) picks it or a sort.
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::cuda {

inline constexpr std::int64_t kMaxSelect = 1024;

// rows of chunk_size (< 2^31) contiguous elements of data -> rows of k (1 <= k <= kMaxSelect)
// values and int64 positions, in sort order; one block per row.
void launch_topk_select(kael_dtype dtype, void* values, std::int64_t* indices, const void* data,
                        std::int64_t chunk_size, std::int64_t row_count, std::int64_t k,
                        bool largest);

}  // namespace kael::cuda
