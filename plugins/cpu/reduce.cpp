#include "kael/kernels/tasks/reduce.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"
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

template <typename R, typename In>
typename R::State fold(const Storage<In>* row, int64_t begin, int64_t end) {
    if constexpr (kShiftedVariance<R, In>) {
        return fold_shifted_widest<In>(row, begin, end);
    }
    typename R::State state = R::first(load_element<In>(row + begin), begin);
    for (int64_t i = begin + 1; i < end; ++i) {
        state = R::step(state, load_element<In>(row + i), i);
    }
    return state;
}

// Folds kInterleavedBlocks whole blocks side by side, each still in its own order: the same
// partials as folding them one at a time, but independent dependency chains instead of one.
constexpr int64_t kInterleavedBlocks = 8;

template <typename R, typename In>
void fold_whole_blocks(const Storage<In>* row, int64_t first_block, typename R::State* partials) {
    const Storage<In>* starts[kInterleavedBlocks];
    typename R::State states[kInterleavedBlocks];
    for (int64_t lane = 0; lane < kInterleavedBlocks; ++lane) {
        const int64_t begin = (first_block + lane) * kBlock;
        starts[lane] = row + begin;
        states[lane] = R::first(load_element<In>(starts[lane]), begin);
    }
    for (int64_t i = 1; i < kBlock; ++i) {
        for (int64_t lane = 0; lane < kInterleavedBlocks; ++lane) {
            states[lane] = R::step(states[lane], load_element<In>(starts[lane] + i),
                                   (first_block + lane) * kBlock + i);
        }
    }
    for (int64_t lane = 0; lane < kInterleavedBlocks; ++lane) {
        partials[first_block + lane] = states[lane];
    }
}

template <typename R, typename In>
typename R::State reduce_row(const Storage<In>* row, int64_t length, bool parallel_blocks) {
    if (length <= kBlock) {
        return fold<R, In>(row, 0, length);
    }
    const int64_t blocks = (length + kBlock - 1) / kBlock;
    const int64_t whole_blocks = length / kBlock;
    // An array, never std::vector: a vector<bool> packs the states of bool reductions (all,
    // any, min and max of bool) into shared words, and threads writing neighbouring blocks'
    // partials then lose each other's bits.
    const auto partials = std::make_unique<typename R::State[]>(static_cast<size_t>(blocks));
    const auto fold_blocks = [&](int64_t begin, int64_t end) {
        int64_t block = begin;
        if constexpr (!kShiftedVariance<R, In>) {  // its blocks are independent lanes already
            for (; block + kInterleavedBlocks <= std::min(end, whole_blocks);
                 block += kInterleavedBlocks) {
                fold_whole_blocks<R, In>(row, block, partials.get());
            }
        }
        for (; block < end; ++block) {
            partials[block] =
                fold<R, In>(row, block * kBlock, std::min(length, (block + 1) * kBlock));
        }
    };
    if (parallel_blocks) {
        parallel_ranges(blocks, 2, fold_blocks);
    } else {
        fold_blocks(0, blocks);
    }
    typename R::State* const states = partials.get();
    return kernels::tasks::merge_pairs_in_place<R>(states, blocks);
}

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

}  // namespace

kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count) {
    return plugin::guarded("cpu.reduce", [&] {
        check_device(device);
        kernels::tasks::check_reduce_call(op, out_dtype, in_dtype, results, data, chunk_size,
                                          output_count);
        if (output_count == 0) {
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
