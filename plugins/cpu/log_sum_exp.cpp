// logsumexp (reduce op LOGSUMEXP) over outer x size x inner, vectorised: the maxima through the
// plugin's own max reduction, then exp(x - max) over whole stretches of memory with libmvec
// (vector_math) and sums in double. The shared reducer's online state would call a scalar exp
// per element, four times slower than PyTorch's composed ops here. As PyTorch, an infinite max
// shifts by 0, so all -inf give -inf and a +inf gives +inf.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu_kernels.h"
#include "kael/kernels/tasks/reduce_finished.h"
#include "reduce_rows_f32.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr std::int64_t kChunk = 2048;  // elements a row item sums; a multiple of every lane count
constexpr std::int64_t kTile = 512;    // columns a column item carries
constexpr std::int64_t kMinColumnItems = 8;  // fewer column tiles than this cut the rows
constexpr std::int64_t kMaxPieces = 16;

template <typename T>
void exp_in_place(T* values, std::int64_t count) {
    if constexpr (std::is_same_v<T, float>) {
        vector_math::apply(vector_math::Function::Exp, values, values, count);
    } else {
        for (std::int64_t k = 0; k < count; ++k) {
            values[k] = std::exp(values[k]);
        }
    }
}

// values[0, count) summed in double lanes, in a fixed order: one in-order chain of adds waited
// on each add's latency and took longer than the exps.
template <typename T>
double sum_in_lanes(const T* values, std::int64_t count) {
    if constexpr (std::is_same_v<T, float>) {
        if (count >= rows_f32::kMinCount) {
            return rows_f32::table().sum(values, count);
        }
    }
    double lanes[8] = {};
    std::int64_t k = 0;
    for (; k + 8 <= count; k += 8) {
        for (int lane = 0; lane < 8; ++lane) {
            lanes[lane] += static_cast<double>(values[k + lane]);
        }
    }
    for (int lane = 0; k < count; ++k, ++lane) {
        lanes[lane] += static_cast<double>(values[k]);
    }
    return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) +
           ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
}

// exp(x[k] - shift) for k < count into buffer, summed in double.
template <typename T>
double shifted_exp_sum(const T* x, T shift, std::int64_t count, T* buffer) {
    for (std::int64_t k = 0; k < count; ++k) {
        buffer[k] = x[k] - shift;
    }
    exp_in_place(buffer, count);
    return sum_in_lanes(buffer, count);
}

template <typename T>
T finish(double total, T shift) {
    return static_cast<T>(std::log(total) + static_cast<double>(shift));
}

// Rows (inner == 1) of at least kChunk elements: items are kChunk-long pieces of a row, so one
// long row spreads over the threads; each row's pieces are then added in order, whatever the
// thread count. Shorter rows go kChunk / size to an item, exponentiated in one vector call.
template <typename T>
void rows(T* out, const T* x, const T* shift, std::int64_t outer, std::int64_t size) {
    if (size < kChunk) {
        const std::int64_t per_item = kChunk / size;
        const std::int64_t items = (outer + per_item - 1) / per_item;
        parallel_ranges(items, 2, [&](std::int64_t begin, std::int64_t end) {
            const auto buffer = std::make_unique<T[]>(kChunk);
            for (std::int64_t item = begin; item < end; ++item) {
                const std::int64_t first = item * per_item;
                const std::int64_t count = std::min(per_item, outer - first);
                const T* block = x + first * size;
                for (std::int64_t r = 0; r < count; ++r) {
                    const T row_shift = shift[first + r];
                    for (std::int64_t k = r * size; k < (r + 1) * size; ++k) {
                        buffer[k] = block[k] - row_shift;
                    }
                }
                exp_in_place(buffer.get(), count * size);
                for (std::int64_t r = 0; r < count; ++r) {
                    const double total = sum_in_lanes(buffer.get() + r * size, size);
                    out[first + r] = finish(total, shift[first + r]);
                }
            }
        });
        return;
    }
    const std::int64_t pieces = (size + kChunk - 1) / kChunk;
    std::vector<double> partials(static_cast<std::size_t>(outer * pieces));
    parallel_ranges(outer * pieces, 2, [&](std::int64_t begin, std::int64_t end) {
        const auto buffer = std::make_unique<T[]>(kChunk);
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t row = item / pieces;
            const std::int64_t first = item % pieces * kChunk;
            const std::int64_t count = std::min(kChunk, size - first);
            partials[static_cast<std::size_t>(item)] =
                shifted_exp_sum(x + row * size + first, shift[row], count, buffer.get());
        }
    });
    for (std::int64_t row = 0; row < outer; ++row) {
        double total = 0.0;
        for (std::int64_t piece = 0; piece < pieces; ++piece) {
            total += partials[static_cast<std::size_t>(row * pieces + piece)];
        }
        out[row] = finish(total, shift[row]);
    }
}

// Columns (inner > 1): an item carries kTile columns of one o down its piece of the rows i, so
// each row's stretch is read in order and exponentiated as one vector call. Few tiles (128
// columns under one o) cut i into pieces, so both threads work; the pieces depend only on the
// shape, and their sums are added in order after them. Uncut items finish their own columns.
template <typename T>
void columns(T* out, const T* x, const T* shift, std::int64_t outer, std::int64_t size,
             std::int64_t inner) {
    const std::int64_t tiles = (inner + kTile - 1) / kTile;
    const std::int64_t pieces =
        outer * tiles >= kMinColumnItems ? 1 : std::clamp<std::int64_t>(size / 256, 1, kMaxPieces);
    std::vector<double> partials(
        static_cast<std::size_t>(pieces > 1 ? outer * tiles * pieces * kTile : 0));
    parallel_ranges(outer * tiles * pieces, 2, [&](std::int64_t begin, std::int64_t end) {
        const auto buffer = std::make_unique<T[]>(kTile);
        const auto own = std::make_unique<double[]>(pieces > 1 ? 0 : kTile);
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t piece = item % pieces;
            const std::int64_t o = item / pieces / tiles;
            const std::int64_t first = item / pieces % tiles * kTile;
            const std::int64_t width = std::min(kTile, inner - first);
            const T* column_shift = shift + o * inner + first;
            double* sums = pieces > 1 ? partials.data() + item * kTile : own.get();
            if (pieces == 1) {
                std::fill(sums, sums + width, 0.0);
            }
            for (std::int64_t i = size * piece / pieces; i < size * (piece + 1) / pieces; ++i) {
                const T* stretch = x + (o * size + i) * inner + first;
                for (std::int64_t j = 0; j < width; ++j) {
                    buffer[j] = stretch[j] - column_shift[j];
                }
                exp_in_place(buffer.get(), width);
                for (std::int64_t j = 0; j < width; ++j) {
                    sums[j] += static_cast<double>(buffer[j]);
                }
            }
            if (pieces == 1) {
                for (std::int64_t j = 0; j < width; ++j) {
                    out[o * inner + first + j] = finish(sums[j], column_shift[j]);
                }
            }
        }
    });
    for (std::int64_t tile = 0; pieces > 1 && tile < outer * tiles; ++tile) {
        const std::int64_t o = tile / tiles;
        const std::int64_t first = tile % tiles * kTile;
        for (std::int64_t j = 0; j < std::min(kTile, inner - first); ++j) {
            double total = 0.0;
            for (std::int64_t piece = 0; piece < pieces; ++piece) {
                total += partials[static_cast<std::size_t>((tile * pieces + piece) * kTile + j)];
            }
            out[o * inner + first + j] = finish(total, shift[o * inner + first + j]);
        }
    }
}

template <typename T>
void log_sum_exp_typed(kael_dtype dtype, void* results, const void* data, std::int64_t outer,
                       std::int64_t size, std::int64_t inner) {
    const std::int64_t outputs = outer * inner;
    std::vector<T> shift(static_cast<std::size_t>(outputs));
    kernels::tasks::throw_on_failure(
        reduce_dims(0, KAEL_REDUCE_MAX, dtype, dtype, shift.data(), data, outer, size, inner));
    for (T& value : shift) {
        value = std::isinf(value) ? T(0) : value;  // NaN stays, and makes the result NaN
    }
    const auto* x = static_cast<const T*>(data);
    auto* out = static_cast<T*>(results);
    if (inner == 1) {
        rows(out, x, shift.data(), outer, size);
    } else {
        columns(out, x, shift.data(), outer, size, inner);
    }
}

}  // namespace

void log_sum_exp(kael_dtype dtype, void* results, const void* data, std::int64_t outer,
                 std::int64_t size, std::int64_t inner) {
    if (dtype == KAEL_DTYPE_F32) {
        log_sum_exp_typed<float>(dtype, results, data, outer, size, inner);
    } else {
        log_sum_exp_typed<double>(dtype, results, data, outer, size, inner);
    }
}

}  // namespace kael::cpu
