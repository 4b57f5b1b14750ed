#pragma once
// The cpu plugin's f32 sequence helpers (sort_f32.cpp), for sequence.cpp's sort and top-k.
#include <cstdint>
#include <vector>

namespace kael::cpu {

// One row of size < 2^32 in stable sort order (sorts_before's: NaN after every number, -0 tied
// with +0, ties in position order; descending reverses the order, not the ties): values and
// int64 positions. scratch is grown to 2 * size entries and may be reused across rows.
void radix_sort_row_f32(float* values, std::int64_t* indices, const float* row, std::int64_t size,
                        bool descending, std::vector<std::uint64_t>& scratch);

// Elements a screen looks at.
inline constexpr int kScreenBlock = 16;

// Whether any of x[0 .. kScreenBlock) might enter a top-k heap whose worst is threshold: above
// it or NaN (largest), below it (smallest). May answer true when none does (a NaN threshold);
// never false when one does.
using BlockScreen = bool (*)(const float* x, float threshold, bool largest);

// The screen for the plugin's vector ISA.
BlockScreen block_screen_f32();

}  // namespace kael::cpu
