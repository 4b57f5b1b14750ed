#pragma once
// The warp-level pieces of the row (reduce.cu) and column (reduce_dims.cu) reductions: an
// ordered combine, a fixed shuffle tree, lane seeds, and the kernel that merges rows of partial
// states kPartialChunk per warp, level after level, until one is left per row.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuda_launch.cuh"
#include "kael/kernels/tasks/reduce.h"

namespace kael::cuda {
namespace {

using kernels::Storage;
namespace tasks = kernels::tasks;

constexpr std::int64_t kPartialChunk = 1024;
constexpr int kWarp = 32;

template <typename State>
inline constexpr bool kIsPosition = false;
template <typename In>
inline constexpr bool kIsPosition<tasks::Position<In>> = true;

// Lanes meet in any order in the tree; arg reducers need (earlier, later), so order them first.
template <typename R>
__device__ typename R::State combine(typename R::State a, typename R::State b) {
    if constexpr (kIsPosition<typename R::State>) {
        return a.index <= b.index ? R::merge(a, b) : R::merge(b, a);
    } else {
        return R::merge(a, b);
    }
}

template <typename T>
__device__ T shuffle_down(T value, int offset) {
    constexpr int kWords = (sizeof(T) + 3) / 4;
    int words[kWords] = {};
    std::memcpy(words, &value, sizeof(T));
#pragma unroll
    for (int word = 0; word < kWords; ++word) {
        words[word] = __shfl_down_sync(0xffffffffu, words[word], offset);
    }
    T result;
    std::memcpy(&result, words, sizeof(T));
    return result;
}

// Lane 0 ends with the merge of all 32 lanes, always through the same tree.
template <typename R>
__device__ typename R::State warp_combine(typename R::State state) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        state = combine<R>(state, shuffle_down(state, offset));
    }
    return state;
}

// Where a lane starts: the identity (-0.0 for float sums, so -0.0 survives), or, for reducers
// without one, the chunk's first element, which merging twice leaves unchanged.
template <typename R, typename Source>
__device__ typename R::State seed(const Source& first) {
    using State = typename R::State;
    if constexpr (R::kHasIdentity) {
        const State identity = R::identity();
        if constexpr (std::is_floating_point_v<State>) {
            return identity == State(0) ? State(-0.0) : identity;
        }
        return identity;
    } else {
        return first();
    }
}

// How a lane folds its elements: R::step onto R's state, except for the variance, whose
// Welford step divides per element: its lanes sum deviations from a shift (an element of the
// chunk, so an offset stays out of the squares) and make one Moments state at the end.
template <typename R, typename In>
struct LaneFold {
    typename R::State state;
    __device__ LaneFold(typename R::State seed_state, In /*shift*/) : state(seed_state) {}
    __device__ void add(In value, std::int64_t index) { state = R::step(state, value, index); }
    __device__ typename R::State result() const { return state; }
};

template <typename In>
struct LaneFold<tasks::Variance<In>, In> {
    tasks::ShiftedSums sums;
    __device__ LaneFold(tasks::Moments /*identity*/, In shift)
        : sums(static_cast<double>(shift)) {}
    __device__ void add(In value, std::int64_t /*index*/) { sums.add(static_cast<double>(value)); }
    __device__ tasks::Moments result() const { return sums.result(); }
};

template <typename R, bool kFinal>
__device__ void store_chunk(void* target, std::int64_t chunk, std::int64_t row,
                            typename R::State state) {
    if constexpr (kFinal) {
        kernels::store_element<typename R::Out>(
            static_cast<Storage<typename R::Out>*>(target) + row, R::finish(state));
    } else {
        static_cast<typename R::State*>(target)[chunk] = state;
    }
}

// The same over rows of `length` partial states, kPartialChunk per warp.
template <typename R, bool kFinal>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_partials(const typename R::State* partials, void* target, std::int64_t length,
                    std::int64_t chunks_per_row, std::int64_t chunk_count) {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp;
    std::int64_t chunk = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
    for (; chunk < chunk_count; chunk += warps) {
        const std::int64_t row = chunk / chunks_per_row;
        const std::int64_t begin = (chunk % chunks_per_row) * kPartialChunk;
        const std::int64_t end = tasks::min_of(length, begin + kPartialChunk);
        const typename R::State* row_partials = partials + row * length;
        auto state = seed<R>([&] { return row_partials[begin]; });
        for (std::int64_t i = begin + lane; i < end; i += kWarp) {
            state = combine<R>(state, row_partials[i]);
        }
        state = warp_combine<R>(state);
        if (lane == 0) {
            store_chunk<R, kFinal>(target, chunk, row, state);
        }
    }
}

template <typename Kernel>
int warp_grid(Kernel kernel, std::int64_t chunk_count) {
    return grid_blocks(reinterpret_cast<const void*>(kernel),
                       blocks_for(chunk_count, kThreadsPerBlock / kWarp));
}

template <typename R>
void launch_partials(bool final, const typename R::State* partials, void* target,
                     std::int64_t length, std::int64_t chunks_per_row, std::int64_t rows) {
    const auto kernel = final ? &reduce_partials<R, true> : &reduce_partials<R, false>;
    const std::int64_t chunk_count = rows * chunks_per_row;
    kernel<<<warp_grid(kernel, chunk_count), kThreadsPerBlock, 0, launch_stream()>>>(
        partials, target, length, chunks_per_row, chunk_count);
    check_launch(typeid(R), __FILE__, __LINE__);
}

// Merges rows of `width` partial states into results, one level per launch; spare holds
// rows * ceil_div(width, kPartialChunk) states and may be null when width <= kPartialChunk.
template <typename R>
void merge_partial_rows(typename R::State* source, typename R::State* spare, void* results,
                        std::int64_t width, std::int64_t rows) {
    for (;;) {
        const std::int64_t next = tasks::ceil_div(width, kPartialChunk);
        if (next == 1) {
            launch_partials<R>(true, source, results, width, 1, rows);
            return;
        }
        launch_partials<R>(false, source, spare, width, next, rows);
        std::swap(source, spare);
        width = next;
    }
}

}  // namespace
}  // namespace kael::cuda
