// bfloat16 and float16 reductions on the cpu plugin, in f32 AVX-512 registers straight from the
// 16-bit data: rows (the last dim) and columns (a [outer, size, inner] block down its size rows)
// for sum, prod, max and min. Before these, every such reduction converted the input to an f32
// twin first (amax over a middle dim of 64x128x128 bf16: 214 us, 0.68 of torch 1.13).
#include "reduce_low_precision.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_kernels.h"
#include "kael/kernels/low_precision.h"
#include "low_precision_lanes.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

// One element as f32, one at a time as low_precision.h converts it.
template <bool kBf16>
float widen(std::uint16_t bits) {
    return kBf16 ? kernels::to_float(kernels::BFloat16{bits})
                 : kernels::to_float(kernels::Half{bits});
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as above, in max/min
#pragma GCC diagnostic ignored "-Wuninitialized"  // sanitizer builds say it so
// acc op value, as the shared reducers fold in order: max/min keep acc on ties and on a NaN value
// (the caller notes NaNs apart: a compare-and-select cannot keep them).
template <kael_reduce_op kOp>
[[gnu::target("avx512f")]] __m512 fold16(__m512 acc, __m512 value) {
    if constexpr (kOp == KAEL_REDUCE_SUM) {
        return _mm512_add_ps(acc, value);
    } else if constexpr (kOp == KAEL_REDUCE_PROD) {
        return _mm512_mul_ps(acc, value);
    } else if constexpr (kOp == KAEL_REDUCE_MAX) {
        return _mm512_max_ps(value, acc);  // value > acc ? value : acc
    } else {
        return _mm512_min_ps(value, acc);
    }
}

// The in-order fold of column j's size elements (stride inner): the first NaN for max/min.
template <bool kBf16, kael_reduce_op kOp>
float column_scalar(const std::uint16_t* x, int64_t size, int64_t inner, int64_t j) {
    constexpr bool kSelect = kOp == KAEL_REDUCE_MAX || kOp == KAEL_REDUCE_MIN;
    float acc = kSelect ? widen<kBf16>(x[j]) : kOp == KAEL_REDUCE_SUM ? 0.0F : 1.0F;
    for (int64_t i = kSelect ? 1 : 0; i < size && !(kSelect && acc != acc); ++i) {
        const float value = widen<kBf16>(x[i * inner + j]);
        if constexpr (kOp == KAEL_REDUCE_SUM) {
            acc += value;
        } else if constexpr (kOp == KAEL_REDUCE_PROD) {
            acc *= value;
        } else if constexpr (kOp == KAEL_REDUCE_MAX) {
            acc = value != value || value > acc ? value : acc;
        } else {
            acc = value != value || value < acc ? value : acc;
        }
    }
    return acc;
}

// kGroups 16-column groups from column on, down the size rows: one accumulator each, so the
// folds of a row are independent (one group alone waited on its add's latency: 0.95 of torch).
template <bool kBf16, kael_reduce_op kOp, int kGroups>
[[gnu::target("avx512f")]] void column_groups(const std::uint16_t* x, int64_t size, int64_t inner,
                                              int64_t column, float* results) {
    constexpr bool kSelect = kOp == KAEL_REDUCE_MAX || kOp == KAEL_REDUCE_MIN;
    __m512 acc[kGroups];
    __mmask16 nan[kGroups];
    for (int k = 0; k < kGroups; ++k) {
        acc[k] = kSelect                  ? load16<kBf16>(x + column + 16 * k)
                 : kOp == KAEL_REDUCE_SUM ? _mm512_setzero_ps()
                                          : _mm512_set1_ps(1.0F);
        nan[k] = kSelect ? _mm512_cmp_ps_mask(acc[k], acc[k], _CMP_UNORD_Q) : 0;
    }
    for (int64_t i = kSelect ? 1 : 0; i < size; ++i) {
        for (int k = 0; k < kGroups; ++k) {
            const __m512 value = load16<kBf16>(x + i * inner + column + 16 * k);
            acc[k] = fold16<kOp>(acc[k], value);
            if constexpr (kSelect) {
                nan[k] = static_cast<__mmask16>(nan[k] |
                                                _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q));
            }
        }
    }
    for (int k = 0; k < kGroups; ++k) {
        _mm512_storeu_ps(results + column + 16 * k, acc[k]);
        for (int lane = 0; nan[k] != 0 && lane < 16; ++lane) {  // rare: the column's first NaN
            if ((nan[k] >> lane) & 1U) {
                const int64_t j = column + 16 * k + lane;
                results[j] = column_scalar<kBf16, kOp>(x, size, inner, j);
            }
        }
    }
}

// results[o * inner + j] = the f32 sum, product, max or min over i of element (o, i, j), for the
// 16-column groups [first, end) of a [outer, size, inner] tensor (size > 0): each group's
// sixteen results stay in a register down the size rows (inner % 16 columns go one at a time).
template <bool kBf16, kael_reduce_op kOp>
[[gnu::target("avx512f")]] void column_reduce(const std::uint16_t* x, int64_t size, int64_t inner,
                                              int64_t first, int64_t end, float* results) {
    int64_t column = first;
    for (; column + 64 <= end && column + 64 <= inner; column += 64) {
        column_groups<kBf16, kOp, 4>(x, size, inner, column, results);
    }
    for (; column + 16 <= end && column + 16 <= inner; column += 16) {
        column_groups<kBf16, kOp, 1>(x, size, inner, column, results);
    }
    for (; column < end; ++column) {
        results[column] = column_scalar<kBf16, kOp>(x, size, inner, column);
    }
}

// results[r] = the f32 sum, product, max or min of row r (length elements, rows back to back),
// four 16-lane accumulators a row; a row with a NaN is folded again in order (max/min: the first
// NaN, which a compare-and-select loses).
template <bool kBf16, kael_reduce_op kOp>
[[gnu::target("avx512f")]] void row_reduce(const std::uint16_t* values, int64_t rows,
                                           int64_t length, float* results) {
    constexpr bool kSelect = kOp == KAEL_REDUCE_MAX || kOp == KAEL_REDUCE_MIN;
    for (int64_t row = 0; row < rows; ++row) {
        const std::uint16_t* x = values + row * length;
        if (length < 16) {
            results[row] = column_scalar<kBf16, kOp>(x, length, 1, 0);
            continue;
        }
        // max/min start from the first sixteen (folding them again changes nothing)
        const __m512 start = kSelect                  ? load16<kBf16>(x)
                             : kOp == KAEL_REDUCE_SUM ? _mm512_setzero_ps()
                                                      : _mm512_set1_ps(1.0F);
        __m512 acc[4] = {start, start, start, start};
        __mmask16 nan = 0;
        int64_t i = 0;
        for (; i + 64 <= length; i += 64) {
            for (int k = 0; k < 4; ++k) {
                const __m512 value = load16<kBf16>(x + i + 16 * k);
                acc[k] = fold16<kOp>(acc[k], value);
                if constexpr (kSelect) {
                    nan = static_cast<__mmask16>(nan |
                                                 _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q));
                }
            }
        }
        for (; i + 16 <= length; i += 16) {
            const __m512 value = load16<kBf16>(x + i);
            acc[0] = fold16<kOp>(acc[0], value);
            if constexpr (kSelect) {
                nan = static_cast<__mmask16>(nan | _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q));
            }
        }
        const __m512 merged = fold16<kOp>(fold16<kOp>(acc[0], acc[1]), fold16<kOp>(acc[2], acc[3]));
        float total;
        if constexpr (kOp == KAEL_REDUCE_SUM) {
            total = _mm512_reduce_add_ps(merged);
        } else if constexpr (kOp == KAEL_REDUCE_PROD) {
            total = _mm512_reduce_mul_ps(merged);
        } else if constexpr (kOp == KAEL_REDUCE_MAX) {
            total = _mm512_reduce_max_ps(merged);
        } else {
            total = _mm512_reduce_min_ps(merged);
        }
        for (; i < length; ++i) {
            const float value = widen<kBf16>(x[i]);
            if constexpr (kOp == KAEL_REDUCE_SUM) {
                total += value;
            } else if constexpr (kOp == KAEL_REDUCE_PROD) {
                total *= value;
            } else {
                nan = value != value ? __mmask16{1} : nan;
                total = kOp == KAEL_REDUCE_MAX ? std::max(total, value) : std::min(total, value);
            }
        }
        results[row] = nan != 0 ? column_scalar<kBf16, kOp>(x, length, 1, 0) : total;
    }
}

#pragma GCC diagnostic pop

template <bool kBf16>
void row_reduce_for(kael_reduce_op op, const std::uint16_t* x, int64_t rows, int64_t length,
                    float* results) {
    switch (op) {
        case KAEL_REDUCE_SUM: return row_reduce<kBf16, KAEL_REDUCE_SUM>(x, rows, length, results);
        case KAEL_REDUCE_PROD: return row_reduce<kBf16, KAEL_REDUCE_PROD>(x, rows, length, results);
        case KAEL_REDUCE_MAX: return row_reduce<kBf16, KAEL_REDUCE_MAX>(x, rows, length, results);
        default: return row_reduce<kBf16, KAEL_REDUCE_MIN>(x, rows, length, results);
    }
}

template <bool kBf16>
void column_reduce_for(kael_reduce_op op, const std::uint16_t* x, int64_t size, int64_t inner,
                       int64_t first, int64_t end, float* results) {
    switch (op) {
        case KAEL_REDUCE_SUM:
            return column_reduce<kBf16, KAEL_REDUCE_SUM>(x, size, inner, first, end, results);
        case KAEL_REDUCE_PROD:
            return column_reduce<kBf16, KAEL_REDUCE_PROD>(x, size, inner, first, end, results);
        case KAEL_REDUCE_MAX:
            return column_reduce<kBf16, KAEL_REDUCE_MAX>(x, size, inner, first, end, results);
        default: return column_reduce<kBf16, KAEL_REDUCE_MIN>(x, size, inner, first, end, results);
    }
}

}  // namespace

bool rows_low_precision(kael_reduce_op op, kael_dtype dtype, const void* data, int64_t rows,
                        int64_t length, float* results) {
    if (vector_math::chosen_isa() != vector_math::Isa::Avx512 || length == 0 ||
        (op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_PROD && op != KAEL_REDUCE_MAX &&
         op != KAEL_REDUCE_MIN)) {
        return false;
    }
    const auto* x = static_cast<const std::uint16_t*>(data);
    dtype == KAEL_DTYPE_BF16 ? row_reduce_for<true>(op, x, rows, length, results)
                             : row_reduce_for<false>(op, x, rows, length, results);
    return true;
}

bool column_reduce_low_precision(kael_reduce_op op, kael_dtype dtype, const void* data,
                                 int64_t outer, int64_t size, int64_t inner, float* results) {
    if (vector_math::chosen_isa() != vector_math::Isa::Avx512 || size == 0 ||
        (op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_PROD && op != KAEL_REDUCE_MAX &&
         op != KAEL_REDUCE_MIN)) {
        return false;
    }
    const auto* x = static_cast<const std::uint16_t*>(data);
    const int64_t groups = (inner + 15) / 16;
    // Tasks of whole 16-column groups of one outer index, about 2^16 elements each.
    const int64_t per_task =
        std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(size * 16, 1));
    const int64_t tasks_per_outer = (groups + per_task - 1) / per_task;
    parallel_ranges(outer * tasks_per_outer, 2, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
            const int64_t o = task / tasks_per_outer;
            const int64_t first = (task % tasks_per_outer) * per_task * 16;
            const int64_t last = std::min(inner, first + per_task * 16);
            const std::uint16_t* block = x + o * size * inner;
            float* out = results + o * inner;
            dtype == KAEL_DTYPE_BF16
                ? column_reduce_for<true>(op, block, size, inner, first, last, out)
                : column_reduce_for<false>(op, block, size, inner, first, last, out);
        }
    });
    return true;
}

}  // namespace kael::cpu
