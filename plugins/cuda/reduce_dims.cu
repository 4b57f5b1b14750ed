// Reductions along i of outer x size x inner (element (o, i, j) at (o * size + i) * inner + j).
// Threads run across columns j, so every load of a warp is coalesced, and each thread folds its
// column's rows in order, kRowUnroll loads in flight. A block covers a tile of `width` columns;
// when inner < 256 a tile is whole rows and the block's row groups take every groups-th row,
// merged through shared memory by a fixed tree. When the tiles alone cannot fill the GPU, i is
// split over blockIdx.y into partials that the tile's last block merges in the same launch
// (reduce_common.cuh). f32 sums and products fold the shared paired terms (fold_column_pairs). The
// split depends only on the shape, so results repeat on any GPU; inner == 1 is the row path's.
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce_dims.h"
#include "reduce_common.cuh"
#include "workspace.h"

namespace kael::cuda {
namespace {

using kernels::load_element;

constexpr int kColumnThreads = 256;
// At most 64 registers a thread: at the 40 of six blocks, max/min and variance columns kept
// fewer loads in flight (or spilled) and read at half the bandwidth of sums (ncu, H200).
constexpr int kColumnBlocksPerSm = 4;
// One-byte and two-byte columns keep twice the loads in flight: at 8, `any` over dim 0 of an
// 8192x8192 bool had too few bytes in flight to reach the bandwidth of f32 columns.
template <typename In>
constexpr int kRowUnroll = sizeof(In) >= 4 ? 8 : 16;
// Just under one wave of blocks on an H100/H200 (132 SMs x 4), so no block waits for a second
// wave; a constant, not the device's count, so the summation order does not change with the GPU.
constexpr std::int64_t kTargetBlocks = 512;
constexpr std::int64_t kMinRowsPerThread = 32;
constexpr std::int64_t kMaxGridX = std::int64_t{1} << 20;

struct ColumnGrid {
    std::int64_t width;            // columns per tile
    std::int64_t groups;           // row groups per block (kColumnThreads / width)
    std::int64_t tiles_per_outer;  // ceil(inner / width)
    std::int64_t tiles;            // outer * tiles_per_outer
    std::int64_t splits;           // pieces of i, gridDim.y
    std::int64_t rows_per_split;
    std::int64_t outputs;  // outer * inner
};

ColumnGrid column_grid(std::int64_t outer, std::int64_t size, std::int64_t inner) {
    ColumnGrid grid{};
    grid.width = inner < kColumnThreads ? inner : kColumnThreads;
    grid.groups = kColumnThreads / grid.width;
    grid.tiles_per_outer = tasks::ceil_div(inner, grid.width);
    grid.tiles = outer * grid.tiles_per_outer;
    std::int64_t splits = 1;
    if (grid.tiles < kTargetBlocks) {
        splits = tasks::min_of(tasks::ceil_div(kTargetBlocks, grid.tiles),
                               tasks::ceil_div(size, grid.groups * kMinRowsPerThread));
    }
    // Whole pair groups (tasks::kPairGroup) a split, so each split's pairs are its own.
    grid.rows_per_split =
        tasks::ceil_div(tasks::ceil_div(size, splits < 1 ? 1 : splits), tasks::kPairGroup) *
        tasks::kPairGroup;
    grid.splits = tasks::ceil_div(size, grid.rows_per_split);
    grid.outputs = outer * inner;
    return grid;
}

// Rows [begin, end) of one column, every `step`-th from `first`, folded in order into lane.
template <typename R, typename In, typename E>
__device__ void fold_column(LaneFold<R, In>& lane, const E* column, std::int64_t inner,
                            std::int64_t first, std::int64_t end, std::int64_t step) {
    std::int64_t i = first;
    constexpr int kUnroll = kRowUnroll<E>;
    for (; i + (kUnroll - 1) * step < end; i += kUnroll * step) {
        In values[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            values[k] = read_as<In>(column + (i + k * step) * inner);
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            lane.add(values[k], i + k * step);
        }
    }
    for (; i < end; i += step) {
        lane.add(read_as<In>(column + i * inner), i);
    }
}

// Paired f32 sums and products (tasks::kPaired) of rows [begin, end) of one column (begin a
// group's start): in each 64-row group, rows first, first + step, ... below 32 with their
// partners 32 rows on. Pointers step through whole groups unchecked (a first version that mapped
// a flat slot index to rows, with 64-bit multiplies and checks per pair, ran column sums at half
// the bandwidth of max/min on the H200).
template <typename R>
__device__ typename R::State fold_column_pairs(const float* column, std::int64_t inner,
                                               std::int64_t begin, std::int64_t end,
                                               std::int64_t first, std::int64_t step) {
    using State = typename R::State;
    constexpr std::int64_t kGroup = tasks::kPairGroup;
    constexpr std::int64_t kHalf = tasks::kPairHalf;
    State state = seed<R>([] { return State{}; });
    const std::int64_t stride = step * inner;
    const std::int64_t partner = kHalf * inner;
    for (std::int64_t group = begin; group < end; group += kGroup) {
        const float* low = column + (group + first) * inner;
        if (group + kGroup <= end) {
#pragma unroll 4
            for (std::int64_t row = first; row < kHalf; row += step, low += stride) {
                state = R::merge(state, R::pair(low[0], low[partner]));
            }
            continue;
        }
        for (std::int64_t row = group + first; row < tasks::min_of(end, group + kHalf);
             row += step, low += stride) {
            state = R::merge(state,
                             row + kHalf < end ? R::pair(low[0], low[partner]) : R::lone(low[0]));
        }
    }
    return state;
}

// The states of a block's row groups merged by a fixed tree into group 0 (blocks of one group
// return state as it is). Every thread of the block calls this.
template <typename R>
__device__ typename R::State merge_groups(typename R::State state, typename R::State* states,
                                          const ColumnGrid& grid, bool active, std::int64_t group) {
    if (grid.groups == 1) {
        return state;
    }
    states[threadIdx.x] = state;
    __syncthreads();
    std::int64_t stride = 1;
    while (stride * 2 < grid.groups) {
        stride *= 2;
    }
    for (; stride > 0; stride /= 2) {
        if (active && group < stride && group + stride < grid.groups) {
            states[threadIdx.x] =
                combine<R>(states[threadIdx.x], states[threadIdx.x + stride * grid.width]);
        }
        __syncthreads();
    }
    state = states[threadIdx.x];
    __syncthreads();  // the next use overwrites states
    return state;
}

// With splits > 1, each block writes its columns' partials (partials[split * outputs + output])
// and the last block of a tile to arrive at counters[tile] merges them in split order.
template <typename R, typename In, typename E>
__global__ void __launch_bounds__(kColumnThreads, kColumnBlocksPerSm)
    reduce_columns(const E* data, Results results, typename R::State* partials, unsigned* counters,
                   std::int64_t size, std::int64_t inner, ColumnGrid grid) {
    using State = typename R::State;
    __shared__ State states[kColumnThreads];
    __shared__ bool last;
    const std::int64_t column_in_tile = threadIdx.x % grid.width;
    const std::int64_t group = threadIdx.x / grid.width;
    const std::int64_t split = blockIdx.y;
    const std::int64_t begin = split * grid.rows_per_split;
    const std::int64_t end = tasks::min_of(size, begin + grid.rows_per_split);
    for (std::int64_t tile = blockIdx.x; tile < grid.tiles; tile += gridDim.x) {
        const std::int64_t o = tile / grid.tiles_per_outer;
        const std::int64_t j = tile % grid.tiles_per_outer * grid.width + column_in_tile;
        const bool active = group < grid.groups && j < inner;
        const std::int64_t output = o * inner + j;
        State state{};
        if (active) {
            const E* column = data + o * size * inner + j;
            if constexpr (tasks::kPaired<R> && std::is_same_v<E, float>) {
                state = fold_column_pairs<R>(reinterpret_cast<const float*>(column), inner, begin,
                                             end, group, grid.groups);
            } else {
                const In shift = read_as<In>(column + begin * inner);
                LaneFold<R, In> lane(seed<R>([&] { return R::first(shift, begin); }), shift);
                fold_column<R, In, E>(lane, column, inner, begin + group, end, grid.groups);
                state = lane.result();
            }
        }
        state = merge_groups<R>(state, states, grid, active, group);
        if (grid.splits == 1) {
            if (active && group == 0) {
                store_result<R, In, E>(results, output, state);
            }
            continue;
        }
        if (active && group == 0) {
            partials[split * grid.outputs + output] = state;
            __threadfence();
        }
        if (!last_to_arrive(counters + tile, static_cast<unsigned>(grid.splits), &last)) {
            continue;
        }
        if (active) {
            state = seed<R>([&] { return partials[output]; });
            for (std::int64_t piece = group; piece < grid.splits; piece += grid.groups) {
                state = combine<R>(state, partials[piece * grid.outputs + output]);
            }
        }
        state = merge_groups<R>(state, states, grid, active, group);
        if (active && group == 0) {
            store_result<R, In, E>(results, output, state);
        }
    }
}

// size > 0, inner > 1; E as reduce_rows' (reduce.cu).
template <typename R, typename In, typename E = Storage<In>>
void reduce_column_tiles(Results results, const void* data, std::int64_t outer, std::int64_t size,
                         std::int64_t inner) {
    using State = typename R::State;
    const auto* input = static_cast<const E*>(data);
    const ColumnGrid grid = column_grid(outer, size, inner);
    const dim3 blocks(static_cast<unsigned>(tasks::min_of(grid.tiles, kMaxGridX)),
                      static_cast<unsigned>(grid.splits));
    if (grid.splits == 1) {
        reduce_columns<R, In, E><<<blocks, kColumnThreads, 0, launch_stream()>>>(
            input, results, nullptr, nullptr, size, inner, grid);
        check_launch(typeid(R), __FILE__, __LINE__);
        return;
    }
    const Workspace workspace(grid.outputs * grid.splits * std::int64_t{sizeof(State)}, grid.tiles);
    reduce_columns<R, In, E><<<blocks, kColumnThreads, 0, launch_stream()>>>(
        input, results, static_cast<State*>(workspace.partials()), workspace.counters(), size,
        inner, grid);
    check_launch(typeid(R), __FILE__, __LINE__);
}

template <typename R, typename In>
void reduce_columns_or_empty(Results results, const void* data, std::int64_t outer,
                             std::int64_t size, std::int64_t inner) {
    if (size == 0) {  // the shared task writes the identity (only reducers with one get here)
        if constexpr (!kIndexed<R>) {
            Launcher::for_each(
                outer * inner,
                tasks::ReduceColumns<R, In>{static_cast<const Storage<In>*>(data),
                                            static_cast<Storage<typename R::Out>*>(results.values),
                                            size, inner});
        }
        return;
    }
    reduce_column_tiles<R, In>(results, data, outer, size, inner);
}

// bf16/f16 columns (size > 0, inner > 1), as reduce_rows_low_precision's rows.
void reduce_columns_low_precision(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                                  void* results, const void* data, std::int64_t outer,
                                  std::int64_t size, std::int64_t inner, bool finished,
                                  double scale, bool root) {
    with_low_precision_reducer(op, in_dtype, out_dtype, size, finished, [&](auto tag) {
        using Tag = decltype(tag);
        reduce_column_tiles<typename Tag::Reducer, float, typename Tag::Element>(
            Results{results, nullptr, finished, root, scale, out_dtype == in_dtype}, data, outer,
            size, inner);
    });
}

}  // namespace

kael_status reduce_dims(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, void* results, const void* data, int64_t outer,
                        int64_t size, int64_t inner) {
    if (inner == 1) {
        return reduce(device, op, out_dtype, in_dtype, results, data, size, outer);
    }
    return plugin::guarded("cuda.reduce_dims", [&] {
        use_device(device);
        if (tasks::is_last_pass(out_dtype, in_dtype)) {
            with_last_pass_reducer("reduce_dims", op, out_dtype, results, data, outer * inner, size,
                                   [&](auto tag, const Results& stored) {
                                       reduce_column_tiles<typename decltype(tag)::Reducer, float>(
                                           stored, data, outer, size, inner);
                                   });
            return;
        }
        if (kernels::is_low_precision(in_dtype)) {
            check_low_precision_call("reduce_dims", results, data, outer * inner, size);
            if (outer * inner > 0) {
                reduce_columns_low_precision(op, out_dtype, in_dtype, results, data, outer, size,
                                             inner, false, 1.0, false);
            }
            return;
        }
        if (!tasks::check_reduce_dims_call(op, out_dtype, in_dtype, results, data, outer, size,
                                           inner)) {
            return;
        }
        tasks::with_reducer(op, in_dtype, [&](auto tag) {
            using R = typename decltype(tag)::Reducer;
            using In = typename decltype(tag)::Input;
            reduce_columns_or_empty<R, In>(Results{results, nullptr}, data, outer, size, inner);
        });
    });
}

kael_status reduce_dims_finished(int32_t device, kael_reduce_op op, kael_dtype dtype, void* results,
                                 const void* data, int64_t outer, int64_t size, int64_t inner,
                                 double scale, int32_t root) {
    return plugin::guarded("cuda.reduce_dims_finished", [&] {
        use_device(device);
        if (kernels::is_low_precision(dtype)) {  // mean, var, std, norm, logsumexp in the dtype
            check_low_precision_call("reduce_dims_finished", results, data, outer * inner, size);
            if (outer * inner == 0) {
                return;
            }
            if (inner == 1) {
                reduce_rows_low_precision(op, dtype, dtype, results, data, size, outer, true, scale,
                                          root != 0);
            } else {
                reduce_columns_low_precision(op, dtype, dtype, results, data, outer, size, inner,
                                             true, scale, root != 0);
            }
            return;
        }
        tasks::check_reduce_finished_call(op, dtype);
        if (!tasks::check_reduce_dims_call(op, tasks::reduce_out_dtype(op, dtype), dtype, results,
                                           data, outer, size, inner)) {
            return;
        }
        // An empty reduction takes the row path, whose store finishes each identity.
        if (inner == 1 || size == 0) {
            reduce_rows_finished(op, dtype, results, data, size, outer * inner, scale, root != 0);
            return;
        }
        tasks::with_reducer(op, dtype, [&](auto tag) {
            using R = typename decltype(tag)::Reducer;
            using In = typename decltype(tag)::Input;
            reduce_column_tiles<R, In>(Results{results, nullptr, true, root != 0, scale}, data,
                                       outer, size, inner);
        });
    });
}

kael_status reduce_indexed(int32_t device, kael_reduce_op op, kael_dtype dtype, void* values,
                           int64_t* indices, const void* data, int64_t outer, int64_t size,
                           int64_t inner) {
    return plugin::guarded("cuda.reduce_indexed", [&] {
        use_device(device);
        // bf16/f16 (values in the dtype, compared in f32) are checked as the f32 call.
        const bool low = kernels::is_low_precision(dtype);
        if (low && low_precision_reduce_declined()) {
            plugin::unsupported("reduce_indexed of bf16/f16 here (the core uses f32)");
        }
        const bool largest = tasks::check_reduce_indexed_call(
            op, low ? KAEL_DTYPE_F32 : dtype, values, indices, data, outer, size, inner);
        if (outer * inner == 0) {
            return;
        }
        if (inner == 1) {
            reduce_rows_indexed(largest, dtype, values, indices, data, size, outer);
            return;
        }
        with_stored_element(dtype, [&](auto in, auto element) {
            using In = decltype(in);
            using E = decltype(element);
            const Results results{values, indices};
            if (largest) {
                reduce_column_tiles<Indexed<tasks::ArgExtreme<In, true>>, In, E>(
                    results, data, outer, size, inner);
            } else {
                reduce_column_tiles<Indexed<tasks::ArgExtreme<In, false>>, In, E>(
                    results, data, outer, size, inner);
            }
        });
    });
}

}  // namespace kael::cuda
