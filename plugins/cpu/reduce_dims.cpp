// Reductions along the middle of outer x size x inner with the shared reducers and the shared
// tree (kael/kernels/tasks/reduce_dims.h), read row by row: an item folds one kBlock-long piece
// of i for a tile of columns into per-column states, so memory streams in order instead of one
// strided walk per output. inner == 1 is the reduce slot's case.
#include "kael/kernels/tasks/reduce_dims.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "convert_low_precision.h"
#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/tasks/reduce_finished.h"
#include "reduce_low_precision.h"
#include "reduce_rows_f32.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

namespace tasks = kernels::tasks;
using kernels::load_element;
using kernels::Storage;
using kernels::store_element;

constexpr int64_t kTile = 512;  // columns per item: their states stay in L1 while rows stream
constexpr int64_t kMinParallelElements = int64_t{1} << 16;
// Paired f32 sums stream whole rows of a tile (reduce_sums_f32.inc): longer rows keep the
// prefetchers on (dim 0 of 64x128x128 64 -> 56 us), where there are still two tiles to share.
constexpr int64_t kStreamTile = 2048;

template <typename R>
int64_t tile_columns(int64_t outer, int64_t inner) {
    if constexpr (tasks::kPaired<R>) {
        if (outer * tasks::ceil_div(inner, kStreamTile) >= 2) {
            return kStreamTile;
        }
    }
    return kTile;
}

template <typename R>
struct IsPosition : std::false_type {};
template <typename In, bool Largest>
struct IsPosition<tasks::ArgExtreme<In, Largest>> : std::true_type {};

// argmax/argmin columns keep values and rows in two arrays (a loop of selects that vectorizes):
// a row replaces the column's best when it is better, or the first NaN; a tie keeps the earlier.
template <typename R, typename In>
[[gnu::always_inline]] inline void fold_positions(const Storage<In>* slab, int64_t inner,
                                                  int64_t begin, int64_t end, int64_t width,
                                                  typename R::State* states) {
    constexpr bool kLargest = std::is_same_v<R, tasks::ArgExtreme<In, true>>;
    In best[kTile];
    int64_t rows[kTile];
    for (int64_t j = 0; j < width; ++j) {
        best[j] = load_element<In>(slab + begin * inner + j);
        rows[j] = begin;
    }
    for (int64_t i = begin + 1; i < end; ++i) {
        const Storage<In>* row = slab + i * inner;
        for (int64_t j = 0; j < width; ++j) {
            const In value = load_element<In>(row + j);
            const bool better = kLargest ? value > best[j] : value < best[j];
            const bool take = better || (kernels::is_nan(value) && !kernels::is_nan(best[j]));
            best[j] = take ? value : best[j];
            rows[j] = take ? i : rows[j];
        }
    }
    for (int64_t j = 0; j < width; ++j) {
        states[j] = {best[j], rows[j]};
    }
}

// Float variance columns fold shifted sums (the row fold's ShiftedSums), not a Welford step that
// divides for every element; the shift is the column's first element of the piece.
template <typename In>
[[gnu::always_inline]] inline void fold_moments(const Storage<In>* slab, int64_t inner,
                                                int64_t begin, int64_t end, int64_t width,
                                                tasks::Moments* states) {
    double shift[kTile];
    double sums[kTile];
    double squares[kTile];
    for (int64_t j = 0; j < width; ++j) {
        shift[j] = static_cast<double>(load_element<In>(slab + begin * inner + j));
        sums[j] = 0.0;
        squares[j] = 0.0;
    }
    for (int64_t i = begin; i < end; ++i) {
        const Storage<In>* row = slab + i * inner;
        for (int64_t j = 0; j < width; ++j) {
            const double deviation = static_cast<double>(load_element<In>(row + j)) - shift[j];
            sums[j] += deviation;
            squares[j] += deviation * deviation;
        }
    }
    for (int64_t j = 0; j < width; ++j) {
        tasks::ShiftedSums total(shift[j]);
        total.count = static_cast<double>(end - begin);
        total.sum = sums[j];
        total.squares = squares[j];
        states[j] = total.result();
    }
}

// into[k] = rows [begin, end) of column k of slab folded in row order, k < count; with a
// constant count the states stay in registers.
template <typename R, typename In, typename State>
[[gnu::always_inline]] inline void fold_column_span(const Storage<In>* slab, int64_t inner,
                                                    int64_t begin, int64_t end, int64_t count,
                                                    State* into) {
    for (int64_t k = 0; k < count; ++k) {
        into[k] = R::first(load_element<In>(slab + begin * inner + k), begin);
    }
    for (int64_t i = begin + 1; i < end; ++i) {
        const Storage<In>* row = slab + i * inner;
        for (int64_t k = 0; k < count; ++k) {
            into[k] = R::step(into[k], load_element<In>(row + k), i);
        }
    }
}

// states[j] = rows [begin, end) (begin < end) of column j of slab folded, j < width.
template <typename R, typename In>
[[gnu::always_inline]] inline void fold_rows(const Storage<In>* slab, int64_t inner, int64_t begin,
                                             int64_t end, int64_t width,
                                             typename R::State* states) {
    if constexpr (IsPosition<R>::value) {
        return fold_positions<R, In>(slab, inner, begin, end, width, states);
    } else if constexpr (std::is_same_v<R, tasks::Extreme<bool, true>> ||
                         std::is_same_v<R, tasks::Extreme<bool, false>>) {
        // any/all: bool max and min are | and & of the 0/1 bytes, a byte loop that vectorizes
        // (the generic select ran 0.1 of PyTorch's speed).
        constexpr bool kAny = std::is_same_v<R, tasks::Extreme<bool, true>>;
        std::uint8_t folded[kTile];
        std::memcpy(folded, slab + begin * inner, static_cast<std::size_t>(width));
        for (int64_t i = begin + 1; i < end; ++i) {
            const std::uint8_t* row = slab + i * inner;
            for (int64_t j = 0; j < width; ++j) {
                folded[j] = kAny ? folded[j] | row[j] : folded[j] & row[j];
            }
        }
        for (int64_t j = 0; j < width; ++j) {
            states[j] = folded[j] != 0;
        }
    } else if constexpr (std::is_same_v<R, tasks::Variance<In>>) {
        return fold_moments<In>(slab, inner, begin, end, width, states);
    } else {
        int64_t j = 0;
        if constexpr (std::is_floating_point_v<In> && std::is_same_v<typename R::State, In>) {
            // f32/f64 max and min: blocks of kRegisterColumns columns held in registers down
            // every row, as the sums' blocks (the states in memory cost a load and a store an
            // element: 0.7 of PyTorch's amax over dim 0 of 1024x8192). Rows still fold in order.
            constexpr int64_t kRegisterColumns = 64 / sizeof(In) * 4;
            for (; j + kRegisterColumns <= width; j += kRegisterColumns) {
                In block[kRegisterColumns];
                fold_column_span<R, In>(slab + j, inner, begin, end, kRegisterColumns, block);
                std::copy_n(block, kRegisterColumns, states + j);
            }
        }
        fold_column_span<R, In>(slab + j, inner, begin, end, width - j, states + j);
    }
}

// The same fold compiled for AVX-512 and AVX2 as well: picked by the vector ISA the plugin uses
// (vector_math::isa, which KAEL_CPU_VECTOR_ISA lowers). A NaN-aware select is several
// instructions a lane, and the baseline has four lanes.
template <typename R, typename In>
[[gnu::target("avx512f")]] void fold_rows_avx512(const Storage<In>* slab, int64_t inner,
                                                 int64_t begin, int64_t end, int64_t width,
                                                 typename R::State* states) {
    fold_rows<R, In>(slab, inner, begin, end, width, states);
}

template <typename R, typename In>
[[gnu::target("avx2")]] void fold_rows_avx2(const Storage<In>* slab, int64_t inner, int64_t begin,
                                            int64_t end, int64_t width, typename R::State* states) {
    fold_rows<R, In>(slab, inner, begin, end, width, states);
}

template <typename R, typename In>
void fold_rows_widest(const Storage<In>* slab, int64_t inner, int64_t begin, int64_t end,
                      int64_t width, typename R::State* states) {
    if constexpr (std::is_same_v<In, float> && std::is_same_v<typename R::State, double>) {
        // f32 sums, products and norms: explicit widening vectors (reduce_rows_f32.h).
        constexpr rows_f32::Op kOp =
            std::is_same_v<R, tasks::Accumulate<float, true>> ? rows_f32::Op::kProd
            : std::is_same_v<R, tasks::EuclideanNorm<float>>  ? rows_f32::Op::kNorm2
                                                              : rows_f32::Op::kSum;
        static_assert(std::is_same_v<R, tasks::Accumulate<float, false>> ||
                      kOp != rows_f32::Op::kSum);
        return rows_f32::table().fold_columns(kOp, slab, inner, begin, end, width, states);
    }
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512:
            return fold_rows_avx512<R, In>(slab, inner, begin, end, width, states);
        case vector_math::Isa::Avx2:
            return fold_rows_avx2<R, In>(slab, inner, begin, end, width, states);
        default: return fold_rows<R, In>(slab, inner, begin, end, width, states);
    }
}

// A sum's finish (reduce_dims_finished: a mean's scale) applied to its double state before the
// one rounding to the output, where a separate pass rounded twice and cost a tenth of a mean.
struct Scaling {
    double scale;
    bool root;
};

template <typename R>
typename R::Out finish_scaled(const typename R::State& state, const Scaling* scaling) {
    if constexpr (std::is_same_v<typename R::State, double> &&
                  kernels::is_floating_v<typename R::Out>) {
        if (scaling != nullptr) {
            return static_cast<typename R::Out>(
                tasks::finished(state, scaling->scale, scaling->root));
        }
    }
    return R::finish(state);
}

// size > 0 and inner > 1; scaling only for sums of floats.
template <typename R, typename In>
void reduce_columns(void* results, const void* data, int64_t outer, int64_t size, int64_t inner,
                    const Scaling* scaling = nullptr) {
    using State = typename R::State;
    using Out = typename R::Out;
    const auto* input = static_cast<const Storage<In>*>(data);
    auto* out = static_cast<Storage<Out>*>(results);
    const int64_t blocks = tasks::ceil_div(size, tasks::kBlock);
    const int64_t tile = tile_columns<R>(outer, inner);
    const int64_t tiles = tasks::ceil_div(inner, tile);
    const int64_t items = outer * tiles * blocks;
    const bool large = outer * size * inner >= kMinParallelElements;
    // Arrays, not vectors: State may be bool.
    const auto partials =
        std::make_unique<State[]>(static_cast<size_t>(blocks > 1 ? outer * inner * blocks : 0));
    parallel_ranges(items, large ? 2 : items + 1, [&](int64_t begin, int64_t end) {
        const auto states = std::make_unique<State[]>(static_cast<size_t>(tile));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t block = item % blocks;
            const int64_t first_column = (item / blocks) % tiles * tile;
            const int64_t o = item / (blocks * tiles);
            const int64_t width = std::min(tile, inner - first_column);
            const int64_t row_begin = block * tasks::kBlock;
            const int64_t row_end = std::min(size, row_begin + tasks::kBlock);
            const auto* slab = input + o * size * inner + first_column;
            fold_rows_widest<R, In>(slab, inner, row_begin, row_end, width, states.get());
            const int64_t first_output = o * inner + first_column;
            for (int64_t j = 0; j < width; ++j) {
                if (blocks == 1) {
                    store_element<Out>(out + first_output + j,
                                       finish_scaled<R>(states[j], scaling));
                } else {
                    partials[(first_output + j) * blocks + block] = states[j];
                }
            }
        }
    });
    if (blocks == 1) {
        return;
    }
    const int64_t outputs = outer * inner;
    parallel_ranges(outputs, large ? 2 : outputs + 1, [&](int64_t begin, int64_t end) {
        for (int64_t output = begin; output < end; ++output) {
            State* own = partials.get() + output * blocks;
            store_element<Out>(
                out + output,
                finish_scaled<R>(tasks::merge_pairs_in_place<R>(own, blocks), scaling));
        }
    });
}

// f32 results of a bf16/f16 [outer, size, inner] block: rows (inner 1) through the row
// reductions, columns reduced in registers (sum, prod, max, min); other ops, empty runs and cpus
// without AVX-512 are declined (the core reduces f32 twins).
void low_precision_f32(kael_reduce_op op, kael_dtype dtype, const void* data, int64_t outer,
                       int64_t size, int64_t inner, float* results) {
    if (inner == 1) {
        reduce_rows_low_precision(op, dtype, data, size, outer, results);
        return;
    }
    if (data == nullptr ||
        !column_reduce_low_precision(op, dtype, data, outer, size, inner, results)) {
        plugin::unsupported(std::string(tasks::reduce_op_name(op)) + " of " +
                            plugin::dtype_name(dtype) + " across rows");
    }
}

}  // namespace

kael_status reduce_dims(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, void* results, const void* data, int64_t outer,
                        int64_t size, int64_t inner) {
    if (inner == 1) {
        return reduce(device, op, out_dtype, in_dtype, results, data, size, outer);
    }
    return plugin::guarded("cpu.reduce_dims", [&] {
        check_device(device);
        if (kernels::tasks::is_last_pass(out_dtype, in_dtype)) {
            rounded_last_pass(op, out_dtype, results, outer * inner, [&](float* wide) {
                tasks::throw_on_failure(reduce_dims(device, op, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
                                                    wide, data, outer, size, inner));
            });
            return;
        }
        if (kernels::is_low_precision(in_dtype)) {  // rows went to reduce above
            if (out_dtype == KAEL_DTYPE_F32) {      // a first pass, its partial sums kept in f32
                low_precision_f32(op, in_dtype, data, outer, size, inner,
                                  static_cast<float*>(results));
                return;
            }
            if (out_dtype != in_dtype) {
                plugin::unsupported("a bf16/f16 reduction into another dtype");
            }
            std::vector<float> sums(static_cast<std::size_t>(outer * inner));
            low_precision_f32(op, in_dtype, data, outer, size, inner, sums.data());
            convert_contiguous(out_dtype, KAEL_DTYPE_F32, sums.data(), results, outer * inner);
            return;
        }
        if (!tasks::check_reduce_dims_call(op, out_dtype, in_dtype, results, data, outer, size,
                                           inner)) {
            return;
        }
        if (op == KAEL_REDUCE_LOGSUMEXP && size > 0) {
            log_sum_exp(in_dtype, results, data, outer, size, inner);
            return;
        }
        tasks::with_reducer(op, in_dtype, [&](auto tag) {
            using Tag = decltype(tag);
            using R = typename Tag::Reducer;
            if (size == 0) {  // only reducers with an identity get here
                if constexpr (R::kHasIdentity) {
                    auto* out = static_cast<Storage<typename R::Out>*>(results);
                    for (int64_t output = 0; output < outer * inner; ++output) {
                        store_element<typename R::Out>(out + output, R::finish(R::identity()));
                    }
                }
                return;
            }
            reduce_columns<R, typename Tag::Input>(results, data, outer, size, inner);
        });
    });
}

kael_status reduce_dims_finished(int32_t device, kael_reduce_op op, kael_dtype dtype, void* results,
                                 const void* data, int64_t outer, int64_t size, int64_t inner,
                                 double scale, int32_t root) {
    return plugin::guarded("cpu.reduce_dims_finished", [&] {
        if (kernels::is_low_precision(dtype)) {  // rows in f32, finished, rounded once (mean)
            check_device(device);
            std::vector<float> finished(static_cast<std::size_t>(outer * inner));
            low_precision_f32(op, dtype, data, outer, size, inner, finished.data());
            for (float& value : finished) {
                value = static_cast<float>(value * scale);
                value = root != 0 ? std::sqrt(value) : value;
            }
            convert_contiguous(dtype, KAEL_DTYPE_F32, finished.data(), results, outer * inner);
            return;
        }
        if (op == KAEL_REDUCE_SUM && (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64) &&
            inner > 1 && size > 0) {  // a mean over columns: scaled as it is stored
            tasks::check_reduce_finished_call(op, dtype);
            if (!tasks::check_reduce_dims_call(op, dtype, dtype, results, data, outer, size,
                                               inner)) {
                return;
            }
            const Scaling scaling{scale, root != 0};
            if (dtype == KAEL_DTYPE_F32) {
                reduce_columns<tasks::Accumulate<float, false>, float>(results, data, outer, size,
                                                                       inner, &scaling);
            } else {
                reduce_columns<tasks::Accumulate<double, false>, double>(results, data, outer, size,
                                                                         inner, &scaling);
            }
            return;
        }
        tasks::launch_reduce_dims_finished<Launcher>(
            op, dtype, results, data, outer, size, inner, scale, root,
            [&](kael_reduce_op reduce_op, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                const void* in, int64_t o, int64_t s, int64_t i) {
                tasks::throw_on_failure(
                    reduce_dims(device, reduce_op, out_dtype, in_dtype, out, in, o, s, i));
            });
    });
}

}  // namespace kael::cpu
