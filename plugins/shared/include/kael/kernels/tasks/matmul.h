#pragma once
// Batched matmul without a BLAS: each work item owns one 4 x 4 tile of one output matrix, loops
// over the whole inner dimension and writes its tile with = (inner == 0 writes zeros, or the
// bias). matmul_bias starts every accumulator at its column's bias.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kael/kernels/element_functions.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

inline constexpr std::int64_t kMatmulTile = 4;

template <typename T>
struct MatmulTiles {
    using Acc = std::conditional_t<is_low_precision_v<T>, float, T>;  // bf16/f16 sum in f32

    const T* a;
    const T* b;
    T* out;
    kael_matmul_sizes sizes;
    const T* bias;  // columns elements, or nullptr for none

    // tile = (batch * tile_rows + tile_row) * tile_columns + tile_column
    KAEL_HD void operator()(std::int64_t tile) const {
        const std::int64_t tile_columns = ceil_div(sizes.columns, kMatmulTile);
        const std::int64_t per_batch = ceil_div(sizes.rows, kMatmulTile) * tile_columns;
        const std::int64_t batch = tile / per_batch;
        const std::int64_t first_row = ((tile % per_batch) / tile_columns) * kMatmulTile;
        const std::int64_t first_column = ((tile % per_batch) % tile_columns) * kMatmulTile;
        const std::int64_t row_count = min_of(sizes.rows - first_row, kMatmulTile);
        const std::int64_t column_count = min_of(sizes.columns - first_column, kMatmulTile);
        // Element (r, k) of op(a) and (k, c) of op(b), as offsets within the batch's matrix.
        const std::int64_t a_row_step = sizes.a_transposed != 0 ? 1 : sizes.inner;
        const std::int64_t a_inner_step = sizes.a_transposed != 0 ? sizes.rows : 1;
        const std::int64_t b_inner_step = sizes.b_transposed != 0 ? 1 : sizes.columns;
        const std::int64_t b_column_step = sizes.b_transposed != 0 ? sizes.inner : 1;
        const std::int64_t a_start = batch * sizes.a_batch_stride + first_row * a_row_step;
        const std::int64_t b_start = batch * sizes.b_batch_stride + first_column * b_column_step;
        const Plus<Acc> plus;
        const Multiply<Acc> multiply;
        Acc accumulators[kMatmulTile][kMatmulTile] = {};
        for (std::int64_t r = 0; bias != nullptr && r < row_count; ++r) {
            for (std::int64_t c = 0; c < column_count; ++c) {
                accumulators[r][c] = convert_value<Acc>(bias[first_column + c]);
            }
        }
        for (std::int64_t k = 0; k < sizes.inner; ++k) {
            for (std::int64_t r = 0; r < row_count; ++r) {
                const Acc a_value = convert_value<Acc>(a[a_start + r * a_row_step + k * a_inner_step]);
                for (std::int64_t c = 0; c < column_count; ++c) {
                    const Acc b_value =
                        convert_value<Acc>(b[b_start + k * b_inner_step + c * b_column_step]);
                    accumulators[r][c] = plus(accumulators[r][c], multiply(a_value, b_value));
                }
            }
        }
        T* const out_tile =
            out + batch * sizes.rows * sizes.columns + first_row * sizes.columns + first_column;
        for (std::int64_t r = 0; r < row_count; ++r) {
            for (std::int64_t c = 0; c < column_count; ++c) {
                out_tile[r * sizes.columns + c] = convert_value<T>(accumulators[r][c]);
            }
        }
    }
};

// The matmul and matmul_bias slots (bias nullptr: none) through MatmulTiles: f32, f64,
// (wrapping) i64 and, with kLowPrecision, bf16 and f16; bool is unsupported.
template <typename Launcher, bool kLowPrecision = false>
void launch_matmul(kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes, const void* bias = nullptr) {
    if (!check_matmul_call(dtype, a, b, out, sizes, kLowPrecision)) {
        return;
    }
    const kael_matmul_sizes& s = *sizes;
    const std::int64_t tiles =
        s.batches * ceil_div(s.rows, kMatmulTile) * ceil_div(s.columns, kMatmulTile);
    const auto launch = [&](auto* typed_out) {
        using T = std::remove_pointer_t<decltype(typed_out)>;
        Launcher::for_each(tiles, MatmulTiles<T>{static_cast<const T*>(a), static_cast<const T*>(b),
                                                 typed_out, s, static_cast<const T*>(bias)});
    };
    switch (dtype) {
        case KAEL_DTYPE_F32: launch(static_cast<float*>(out)); break;
        case KAEL_DTYPE_F64: launch(static_cast<double*>(out)); break;
        case KAEL_DTYPE_BF16:
            if constexpr (kLowPrecision) {
                launch(static_cast<BFloat16*>(out));
            }
            break;
        case KAEL_DTYPE_F16:
            if constexpr (kLowPrecision) {
                launch(static_cast<Half*>(out));
            }
            break;
        default: launch(static_cast<std::int64_t*>(out)); break;
    }
}

}  // namespace kael::kernels::tasks
