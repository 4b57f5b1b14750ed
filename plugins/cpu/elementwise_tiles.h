#pragma once
// The cpu plugin's walk of transposing element layouts (a + a.T, contiguous() of a transpose) in
// tiles, for elementwise.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kael/plugin_api.h"
#include "vector_math.h"

namespace kael::cpu::tiles {

// A transposing layout: the output runs along the innermost dim but an input runs along
// another one, `across` (a + a.T, contiguous() of a transpose). Walked in kTile x kTile tiles of
// those two dims, so both operands' lines stay in cache across a tile; the innermost-dim walk
// read such an input a full stride apart per element (0.22 of PyTorch's speed).
constexpr int64_t kTile = 32;

struct TileWalk {
    int inner = -1;
    int across = -1;
};

inline TileWalk transposing_dims(const kael_element_layout& layout, const int64_t* item_sizes) {
    const int inner = layout.dims - 1;
    if (layout.dims < 2 || layout.strides[0][inner] != item_sizes[0] ||
        layout.shape[inner] < kTile) {
        return {};
    }
    for (int op = 1; op < layout.operands; ++op) {
        const int64_t stride = layout.strides[op][inner];
        if (stride == 0 || stride == item_sizes[op]) {
            continue;
        }
        for (int dim = inner - 1; dim >= 0; --dim) {
            if (layout.strides[op][dim] == item_sizes[op] && layout.shape[dim] >= kTile) {
                return {inner, dim};
            }
        }
    }
    return {};
}

// Copies a tile of an operand that runs along `across` into rows of buffer (row r: the tile's
// row r, contiguous), reading memory in order. Item sizes 4 and 8 only.
template <typename Word>
void gather_tile(std::byte* buffer, const std::byte* source, int64_t across_stride,
                 int64_t inner_stride, int64_t rows, int64_t columns) {
    auto* out = reinterpret_cast<Word*>(buffer);
    for (int64_t column = 0; column < columns; ++column) {
        const std::byte* line = source + column * inner_stride;
        for (int64_t row = 0; row < rows; ++row) {
            std::memcpy(&out[row * kTile + column], line + row * across_stride, sizeof(Word));
        }
    }
}

// gather_tile for 4-byte items with AVX2: 8x8 blocks transposed in registers (eight 32-byte loads
// and stores, not 64 scalar moves), the tile's ragged edges by gather_tile itself. The scalar
// moves were most of a + a.T's time.
[[gnu::target("avx2")]] inline void gather_tile_4_avx2(std::byte* buffer, const std::byte* source,
                                                       int64_t inner_stride, int64_t rows,
                                                       int64_t columns) {
    auto* out = reinterpret_cast<float*>(buffer);
    const int64_t full_rows = rows / 8 * 8;
    const int64_t full_columns = columns / 8 * 8;
    for (int64_t column = 0; column < full_columns; column += 8) {
        for (int64_t row = 0; row < full_rows; row += 8) {
            __m256 line[8];
            for (int k = 0; k < 8; ++k) {
                line[k] = _mm256_loadu_ps(
                    reinterpret_cast<const float*>(source + (column + k) * inner_stride) + row);
            }
            const __m256 a0 = _mm256_unpacklo_ps(line[0], line[1]);
            const __m256 a1 = _mm256_unpackhi_ps(line[0], line[1]);
            const __m256 a2 = _mm256_unpacklo_ps(line[2], line[3]);
            const __m256 a3 = _mm256_unpackhi_ps(line[2], line[3]);
            const __m256 a4 = _mm256_unpacklo_ps(line[4], line[5]);
            const __m256 a5 = _mm256_unpackhi_ps(line[4], line[5]);
            const __m256 a6 = _mm256_unpacklo_ps(line[6], line[7]);
            const __m256 a7 = _mm256_unpackhi_ps(line[6], line[7]);
            const __m256 b0 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(1, 0, 1, 0));
            const __m256 b1 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 b2 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(1, 0, 1, 0));
            const __m256 b3 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 b4 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(1, 0, 1, 0));
            const __m256 b5 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 b6 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(1, 0, 1, 0));
            const __m256 b7 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 transposed[8] = {
                _mm256_permute2f128_ps(b0, b4, 0x20), _mm256_permute2f128_ps(b1, b5, 0x20),
                _mm256_permute2f128_ps(b2, b6, 0x20), _mm256_permute2f128_ps(b3, b7, 0x20),
                _mm256_permute2f128_ps(b0, b4, 0x31), _mm256_permute2f128_ps(b1, b5, 0x31),
                _mm256_permute2f128_ps(b2, b6, 0x31), _mm256_permute2f128_ps(b3, b7, 0x31)};
            for (int k = 0; k < 8; ++k) {
                _mm256_storeu_ps(out + (row + k) * kTile + column, transposed[k]);
            }
        }
    }
    // The ragged edges through gather_tile: the rows past the last full block of 8 in the
    // columns done above, then every row of the columns past them.
    gather_tile<std::uint32_t>(buffer + full_rows * kTile * 4, source + full_rows * 4, 4,
                               inner_stride, rows - full_rows, full_columns);
    gather_tile<std::uint32_t>(buffer + full_columns * 4, source + full_columns * inner_stride, 4,
                               inner_stride, rows, columns - full_columns);
}

// Runs span over every tile, tiles [begin, end) of the layout's tiling: span(pointers, strides,
// columns, rows, outer) takes the tile's rows at once, row r at pointers + r * outer.
// An input of 4- or 8-byte items that runs along `across` is first gathered into an L1 buffer
// read in its memory order, so span sees contiguous rows (and their vector loop).
template <typename Span>
void for_each_tile(const kael_element_layout& layout, const TileWalk& walk,
                   const int64_t* item_sizes, int64_t begin, int64_t end, Span&& span) {
    const int64_t rows_tiles = (layout.shape[walk.across] + kTile - 1) / kTile;
    const int64_t column_tiles = (layout.shape[walk.inner] + kTile - 1) / kTile;
    int64_t inner_strides[KAEL_MAX_OPERANDS] = {};
    bool gathered[KAEL_MAX_OPERANDS] = {};
    int64_t row_strides[KAEL_MAX_OPERANDS] = {};
    for (int op = 0; op < layout.operands; ++op) {
        inner_strides[op] = layout.strides[op][walk.inner];
        row_strides[op] = inner_strides[op];
        // An operand broadcast along inner (x - x.amax(-1, keepdim=True) of a transpose) is one
        // value a row: left repeated, not gathered word by word.
        gathered[op] = op > 0 && layout.strides[op][walk.across] == item_sizes[op] &&
                       inner_strides[op] != item_sizes[op] && inner_strides[op] != 0 &&
                       (item_sizes[op] == 4 || item_sizes[op] == 8);
        if (gathered[op]) {
            row_strides[op] = item_sizes[op];
        }
    }
    alignas(64) std::byte buffers[KAEL_MAX_OPERANDS - 1][kTile * kTile * 8];
    const bool wide_transpose = vector_math::chosen_isa() == vector_math::Isa::Avx512 ||
                                vector_math::chosen_isa() == vector_math::Isa::Avx2;
    for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t column_tile = tile % column_tiles;
        const int64_t row_tile = tile / column_tiles % rows_tiles;
        int64_t rest = tile / (column_tiles * rows_tiles);  // over the other dims
        std::byte* base[KAEL_MAX_OPERANDS] = {};
        for (int op = 0; op < layout.operands; ++op) {
            base[op] = static_cast<std::byte*>(layout.base[op]);
        }
        for (int dim = layout.dims - 1; dim >= 0; --dim) {
            if (dim == walk.inner || dim == walk.across) {
                continue;
            }
            const int64_t coordinate = rest % layout.shape[dim];
            rest /= layout.shape[dim];
            for (int op = 0; op < layout.operands; ++op) {
                base[op] += coordinate * layout.strides[op][dim];
            }
        }
        const int64_t first_row = row_tile * kTile;
        const int64_t rows = std::min(kTile, layout.shape[walk.across] - first_row);
        const int64_t first_column = column_tile * kTile;
        const int64_t columns = std::min(kTile, layout.shape[walk.inner] - first_column);
        for (int op = 1; op < layout.operands; ++op) {
            if (!gathered[op]) {
                continue;
            }
            const std::byte* source = base[op] + first_row * layout.strides[op][walk.across] +
                                      first_column * inner_strides[op];
            if (item_sizes[op] == 4 && wide_transpose) {
                gather_tile_4_avx2(buffers[op - 1], source, inner_strides[op], rows, columns);
            } else if (item_sizes[op] == 4) {
                gather_tile<std::uint32_t>(buffers[op - 1], source, item_sizes[op],
                                           inner_strides[op], rows, columns);
            } else {
                gather_tile<std::uint64_t>(buffers[op - 1], source, item_sizes[op],
                                           inner_strides[op], rows, columns);
            }
        }
        // The tile's rows in one call: row r of an operand starts outer[op] bytes after row r - 1.
        std::byte* pointers[KAEL_MAX_OPERANDS] = {};
        int64_t outer[KAEL_MAX_OPERANDS] = {};
        for (int op = 0; op < layout.operands; ++op) {
            outer[op] = gathered[op] ? kTile * item_sizes[op] : layout.strides[op][walk.across];
            pointers[op] =
                gathered[op] ? buffers[op - 1]
                             : base[op] + first_row * outer[op] + first_column * inner_strides[op];
        }
        span(pointers, row_strides, columns, rows, outer);
    }
}

}  // namespace kael::cpu::tiles
