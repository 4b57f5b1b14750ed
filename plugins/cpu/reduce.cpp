#include "kael/kernels/tasks/reduce.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "convert_low_precision.h"
#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/reduce_finished.h"
#include "reduce_lanes.h"
#include "reduce_low_precision.h"
#include "reduce_rows_f32.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

using kernels::load_element;
using kernels::Storage;

// Rows longer than one block are folded block by block and the partials merged pairwise, the
// same fixed tree at any thread count (and the one the device plugins use).
constexpr int64_t kBlock = 4096;
constexpr int64_t kMinParallelElements = int64_t{1} << 16;

// The reducers are the shared ones (kael/kernels/tasks/reduce.h), so every plugin folds alike.

// The f32/f64 variance folds a block as the device plugins' lanes do (ShiftedSums: sums of
// x - x[begin] and of its squares), in kVarianceLanes independent lanes, so the loop
// vectorizes; Welford's division per element ran var over 1024-element rows at PyTorch's speed.
template <typename R, typename In>
inline constexpr bool kShiftedVariance = std::is_same_v<R, kernels::tasks::Variance<In>> &&
                                         (std::is_same_v<In, float> || std::is_same_v<In, double>);

constexpr int64_t kVarianceLanes = 16;

template <typename In>
[[gnu::always_inline]] inline kernels::tasks::Moments fold_shifted(const In* row, int64_t begin,
                                                                   int64_t end) {
    const double shift = static_cast<double>(row[begin]);
    double sums[kVarianceLanes] = {};
    double squares[kVarianceLanes] = {};
    int64_t i = begin;
    for (; i + kVarianceLanes <= end; i += kVarianceLanes) {
        for (int64_t lane = 0; lane < kVarianceLanes; ++lane) {
            const double deviation = static_cast<double>(row[i + lane]) - shift;
            sums[lane] += deviation;
            squares[lane] += deviation * deviation;
        }
    }
    for (int64_t lane = 0; i < end; ++i, ++lane) {
        const double deviation = static_cast<double>(row[i]) - shift;
        sums[lane] += deviation;
        squares[lane] += deviation * deviation;
    }
    kernels::tasks::ShiftedSums total(shift);
    for (int64_t lane = 0; lane < kVarianceLanes; ++lane) {  // a fixed order
        total.sum += sums[lane];
        total.squares += squares[lane];
    }
    total.count = static_cast<double>(end - begin);
    return total.result();
}

template <typename In>
[[gnu::target("avx512f")]] kernels::tasks::Moments fold_shifted_avx512(const In* row, int64_t begin,
                                                                       int64_t end) {
    return fold_shifted(row, begin, end);
}

template <typename In>
[[gnu::target("avx2")]] kernels::tasks::Moments fold_shifted_avx2(const In* row, int64_t begin,
                                                                  int64_t end) {
    return fold_shifted(row, begin, end);
}

template <typename In>
kernels::tasks::Moments fold_shifted_widest(const In* row, int64_t begin, int64_t end) {
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512: return fold_shifted_avx512(row, begin, end);
        case vector_math::Isa::Avx2: return fold_shifted_avx2(row, begin, end);
        default: return fold_shifted(row, begin, end);
    }
}

// Sums, products, extremes and their positions fold in lanes (reduce_lanes.h), variances in
// shifted lanes; pieces too short for lanes fold in order.
template <typename R, typename In>
typename R::State fold(const Storage<In>* row, int64_t begin, int64_t end) {
    namespace tasks = kernels::tasks;
    if constexpr (kShiftedVariance<R, In>) {
        return fold_shifted_widest<In>(row, begin, end);
    } else if constexpr (std::is_same_v<In, float> && lanes::kHasLaneFold<R>) {
        if (end - begin >= rows_f32::kMinCount) {  // f32: explicit vectors (reduce_rows_f32.h)
            const rows_f32::Table& f32 = rows_f32::table();
            const float* piece = row + begin;
            const int64_t count = end - begin;
            if constexpr (std::is_same_v<R, tasks::Extreme<float, true>>) {
                return f32.max(piece, count);
            } else if constexpr (std::is_same_v<R, tasks::Extreme<float, false>>) {
                return f32.min(piece, count);
            } else if constexpr (std::is_same_v<R, tasks::Accumulate<float, false>>) {
                return f32.sum(piece, count);
            } else if constexpr (std::is_same_v<R, tasks::Accumulate<float, true>>) {
                return f32.prod(piece, count);
            } else if constexpr (std::is_same_v<R, tasks::EuclideanNorm<float>>) {
                return f32.squares(piece, count);
            } else {
                static_assert(std::is_same_v<typename R::State, tasks::Position<float>>);
                constexpr bool kLargest = std::is_same_v<R, tasks::ArgExtreme<float, true>>;
                const rows_f32::Position best =
                    kLargest ? f32.argmax(piece, count) : f32.argmin(piece, count);
                return {best.value, begin + best.index};
            }
        }
    } else if constexpr (lanes::kHasLaneFold<R>) {
        if (end - begin >= lanes::kMinLength<R, In>) {
            return lanes::fold_widest<R, In>(row, begin, end);
        }
    }
    return kernels::tasks::fold<R, In>(row, begin, end);
}

template <typename R, typename In>
typename R::State reduce_row(const Storage<In>* row, int64_t length, bool parallel_blocks) {
    if (length <= kBlock) {
        return fold<R, In>(row, 0, length);
    }
    const int64_t blocks = (length + kBlock - 1) / kBlock;
    // An array, never std::vector: a vector<bool> packs the states of bool reductions (all,
    // any, min and max of bool) into shared words, and threads writing neighbouring blocks'
    // partials then lose each other's bits. Rows of a few blocks keep them on the stack: one
    // allocation per row cost 5% of a 1024x8192 sum over its rows.
    constexpr int64_t kLocalBlocks = 8;
    typename R::State local[kLocalBlocks];
    std::unique_ptr<typename R::State[]> allocated;  // new[] of 0 would still allocate
    if (blocks > kLocalBlocks) {
        allocated = std::make_unique<typename R::State[]>(static_cast<size_t>(blocks));
    }
    typename R::State* const partials = allocated ? allocated.get() : local;
    const auto fold_blocks = [&](int64_t begin, int64_t end) {
        for (int64_t block = begin; block < end; ++block) {
            partials[block] =
                fold<R, In>(row, block * kBlock, std::min(length, (block + 1) * kBlock));
        }
    };
    if (parallel_blocks) {
        parallel_ranges(blocks, 2, fold_blocks);
    } else {
        fold_blocks(0, blocks);
    }
    return kernels::tasks::merge_pairs_in_place<R>(partials, blocks);
}

// The f32 reducers that reduce_rows_f32 folds a batch of rows for (kHas false for the rest).
template <typename R>
struct RowsF32 {
    static constexpr bool kHas = false;
    static constexpr rows_f32::Op kOp = rows_f32::Op::kMax;
};
template <bool Largest>
struct RowsF32<kernels::tasks::Extreme<float, Largest>> {
    static constexpr bool kHas = true;
    static constexpr rows_f32::Op kOp = Largest ? rows_f32::Op::kMax : rows_f32::Op::kMin;
};
template <bool Multiply>
struct RowsF32<kernels::tasks::Accumulate<float, Multiply>> {
    static constexpr bool kHas = true;
    static constexpr rows_f32::Op kOp = Multiply ? rows_f32::Op::kProd : rows_f32::Op::kSum;
};
template <>
struct RowsF32<kernels::tasks::EuclideanNorm<float>> {
    static constexpr bool kHas = true;
    static constexpr rows_f32::Op kOp = rows_f32::Op::kNorm2;
};
template <bool Largest>
struct RowsF32<kernels::tasks::ArgExtreme<float, Largest>> {
    static constexpr bool kHas = true;
    static constexpr rows_f32::Op kOp = Largest ? rows_f32::Op::kArgmax : rows_f32::Op::kArgmin;
};

template <typename R, typename In>
void run_reduce(const char* op_name, void* results, const void* data, int64_t chunk_size,
                int64_t output_count) {
    using Out = typename R::Out;
    auto* out = static_cast<Storage<Out>*>(results);
    if (chunk_size == 0) {
        if constexpr (R::kHasIdentity) {
            for (int64_t row = 0; row < output_count; ++row) {
                kernels::store_element<Out>(out + row, R::finish(R::identity()));
            }
            return;
        } else {
            plugin::invalid(std::string(op_name) + " of an empty row has no value");
        }
    }
    const auto* input = static_cast<const Storage<In>*>(data);
    const bool large = chunk_size * output_count >= kMinParallelElements;
    const bool parallel_rows = large && output_count >= worker_count();
    const auto reduce_rows = [&](int64_t begin, int64_t end) {
        if constexpr (RowsF32<R>::kHas) {
            if (chunk_size >= rows_f32::kMinCount && chunk_size <= kBlock) {
                rows_f32::table().fold_rows(RowsF32<R>::kOp, input + begin * chunk_size, chunk_size,
                                            end - begin, out + begin);
                return;
            }
        }
        for (int64_t row = begin; row < end; ++row) {
            const auto state =
                reduce_row<R, In>(input + row * chunk_size, chunk_size, large && !parallel_rows);
            kernels::store_element<Out>(out + row, R::finish(state));
        }
    };
    if (parallel_rows) {
        parallel_ranges(output_count, 0, reduce_rows);
    } else {
        reduce_rows(0, output_count);
    }
}

constexpr int64_t kLowBlock = kBlock;  // f32 scratch per task: 16 KiB; the f32 row folds take it

// Reduces rows of f32 (contiguous, chunk_size each) into f32 results with the f32 kernels.
void reduce_f32(kael_reduce_op op, const float* data, int64_t chunk_size, int64_t rows,
                float* results) {
    kernels::tasks::with_reducer_of<float>(op, KAEL_DTYPE_F32, [&](auto tag) {
        using Tag = decltype(tag);
        if constexpr (std::is_same_v<typename Tag::Reducer::Out, float>) {
            run_reduce<typename Tag::Reducer, float>("reduce", results, data, chunk_size, rows);
        }
    });
}

}  // namespace

// bf16/f16 sum, prod, max and min as PyTorch's CPU kernels compute them: blocks of rows, or of
// one long row, reduced in f32 (sums in registers, the rest converted into L2-sized scratch for
// the f32 row kernels), a long row's block partials then reduced in f32. Other ops are
// declined: the core reduces f32 twins.
void reduce_rows_low_precision(kael_reduce_op op, kael_dtype in_dtype, const void* data,
                               int64_t chunk_size, int64_t rows, float* results) {
    if (op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_PROD && op != KAEL_REDUCE_MAX &&
        op != KAEL_REDUCE_MIN) {
        plugin::unsupported(std::string(kernels::tasks::reduce_op_name(op)) + " of " +
                            plugin::dtype_name(in_dtype) + " (the core reduces it in f32)");
    }
    if (rows == 0 || (chunk_size == 0 && (op == KAEL_REDUCE_MAX || op == KAEL_REDUCE_MIN))) {
        plugin::unsupported("an empty max or min");  // the core's f32 path says why
    }
    if (results == nullptr || (chunk_size > 0 && data == nullptr)) {
        plugin::invalid("reduce: null results or data");
    }
    const int64_t pieces = std::max<int64_t>(1, (chunk_size + kLowBlock - 1) / kLowBlock);
    const int64_t rows_per_task =
        pieces == 1 ? std::max<int64_t>(1, kLowBlock / std::max<int64_t>(chunk_size, 1)) : 1;
    const int64_t tasks = pieces == 1 ? (rows + rows_per_task - 1) / rows_per_task : rows * pieces;
    std::vector<float> partials(pieces > 1 ? static_cast<std::size_t>(rows * pieces) : 0);
    float* const firsts = pieces > 1 ? partials.data() : results;
    const auto* input = static_cast<const std::byte*>(data);
    parallel_ranges(tasks, kMinParallelElements / kLowBlock, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(static_cast<std::size_t>(kLowBlock));
        for (int64_t task = begin; task < end; ++task) {
            int64_t first = 0;  // the block's first element, its rows, their length
            int64_t count = 0;
            int64_t length = chunk_size;
            if (pieces == 1) {
                const int64_t first_row = task * rows_per_task;
                count = std::min(rows_per_task, rows - first_row);
                first = first_row * chunk_size;
            } else {
                const int64_t start = (task % pieces) * kLowBlock;
                first = (task / pieces) * chunk_size + start;
                count = 1;
                length = std::min(kLowBlock, chunk_size - start);
            }
            float* const partial = firsts + (pieces == 1 ? task * rows_per_task : task);
            if (rows_low_precision(op, in_dtype, input + first * 2, count, length, partial)) {
                continue;  // reduced in registers, no scratch
            }
            convert_contiguous(KAEL_DTYPE_F32, in_dtype, input + first * 2, scratch.data(),
                               count * length);
            reduce_f32(op, scratch.data(), length, count, partial);
        }
    });
    if (pieces > 1) {
        reduce_f32(op, partials.data(), pieces, rows, results);
    }
}

namespace {

void reduce_low_precision(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                          void* results, const void* data, int64_t chunk_size, int64_t rows) {
    if (out_dtype == KAEL_DTYPE_F32) {  // a first pass whose partial results stay in f32
        reduce_rows_low_precision(op, in_dtype, data, chunk_size, rows,
                                  static_cast<float*>(results));
        return;
    }
    if (out_dtype != in_dtype) {
        plugin::unsupported(std::string(kernels::tasks::reduce_op_name(op)) + " of " +
                            plugin::dtype_name(in_dtype) + " into another dtype");
    }
    std::vector<float> finished(static_cast<std::size_t>(rows));
    reduce_rows_low_precision(op, in_dtype, data, chunk_size, rows, finished.data());
    convert_contiguous(out_dtype, KAEL_DTYPE_F32, finished.data(), results, rows);
}

}  // namespace

kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count) {
    return plugin::guarded("cpu.reduce", [&] {
        check_device(device);
        if (kernels::tasks::is_last_pass(out_dtype, in_dtype)) {
            rounded_last_pass(op, out_dtype, results, output_count, [&](float* wide) {
                kernels::tasks::throw_on_failure(reduce(device, op, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
                                                        wide, data, chunk_size, output_count));
            });
            return;
        }
        if (kernels::is_low_precision(in_dtype)) {
            reduce_low_precision(op, out_dtype, in_dtype, results, data, chunk_size, output_count);
            return;
        }
        kernels::tasks::check_reduce_call(op, out_dtype, in_dtype, results, data, chunk_size,
                                          output_count);
        if (output_count == 0) {
            return;
        }
        if (op == KAEL_REDUCE_LOGSUMEXP && chunk_size > 0) {
            log_sum_exp(in_dtype, results, data, output_count, chunk_size, 1);
            return;
        }
        const char* name = kernels::tasks::reduce_op_name(op);
        kernels::tasks::with_reducer(op, in_dtype, [&](auto tag) {
            using Tag = decltype(tag);
            run_reduce<typename Tag::Reducer, typename Tag::Input>(name, results, data, chunk_size,
                                                                   output_count);
        });
    });
}

}  // namespace kael::cpu
