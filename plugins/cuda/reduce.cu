// Row reductions with the shared reducers (kael/kernels/tasks/reduce.h). A row longer than
// kShortRow is cut into chunks of kInputChunk elements (fewer for few rows), one warp each: every
// lane folds its strided elements in order (16-byte loads where aligned) and a fixed shuffle tree
// merges the lanes. The partials are merged kPartialChunk at a time the same way until one is left
// per row. The order depends only on the shape (and the GPU's size), so results repeat run to run.
// Variance lanes fold shifted sums (LaneFold), not Welford steps, so no lane divides per element.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "reduce_common.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce.h"

namespace kael::cuda {
namespace {

using kernels::load_element;
using kernels::Storage;
namespace tasks = kernels::tasks;

constexpr std::int64_t kShortRow = 16;  // one thread per row: a warp would mostly idle
constexpr std::int64_t kInputChunk = 2048;
// A few long rows (an argmax over a vocabulary) take chunks this short, so that they fill the
// GPU with warps instead of leaving a few warps to walk the row.
constexpr std::int64_t kShortInputChunk = 512;

template <typename S>
struct alignas(16) Pack {
    S values[16 / sizeof(S)];
};

// One warp per chunk of kInputChunk elements of rows of `length`; target gets one partial per
// chunk (row-major, chunks_per_row wide) or, when kFinal, the row's result.
template <typename R, typename In, bool kFinal>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_elements(const Storage<In>* data, void* target, std::int64_t length,
                    std::int64_t chunk_length, std::int64_t chunks_per_row,
                    std::int64_t chunk_count, bool vectorized) {
    using S = Storage<In>;
    constexpr int kWidth = 16 / sizeof(S);
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp;
    std::int64_t chunk = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
    for (; chunk < chunk_count; chunk += warps) {
        const std::int64_t row = chunk / chunks_per_row;
        const std::int64_t begin = (chunk % chunks_per_row) * chunk_length;
        const std::int64_t end = tasks::min_of(length, begin + chunk_length);
        const S* row_data = data + row * length;
        const In shift = load_element<In>(row_data + begin);
        LaneFold<R, In> folded(seed<R>([&] { return R::first(shift, begin); }), shift);
        std::int64_t scalar_begin = begin;
        if (vectorized) {
            const auto* packs = reinterpret_cast<const Pack<S>*>(row_data);
            const std::int64_t pack_end = end / kWidth;
#pragma unroll 4
            for (std::int64_t pack = begin / kWidth + lane; pack < pack_end; pack += kWarp) {
                const Pack<S> values = packs[pack];
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    folded.add(load_element<In>(&values.values[i]), pack * kWidth + i);
                }
            }
            scalar_begin = pack_end * kWidth;
        }
        for (std::int64_t i = scalar_begin + lane; i < end; i += kWarp) {
            folded.add(load_element<In>(row_data + i), i);
        }
        const auto state = warp_combine<R>(folded.result());
        if (lane == 0) {
            store_chunk<R, kFinal>(target, chunk, row, state);
        }
    }
}

template <typename R, typename In>
void launch_elements(bool final, const Storage<In>* data, void* target, std::int64_t length,
                     std::int64_t chunk_length, std::int64_t chunks_per_row, std::int64_t rows,
                     bool vectorized) {
    const auto kernel = final ? &reduce_elements<R, In, true> : &reduce_elements<R, In, false>;
    const std::int64_t chunk_count = rows * chunks_per_row;
    kernel<<<warp_grid(kernel, chunk_count), kThreadsPerBlock, 0, launch_stream()>>>(
        data, target, length, chunk_length, chunks_per_row, chunk_count, vectorized);
    check_launch(typeid(R), __FILE__, __LINE__);
}

template <typename R, typename In>
void reduce_rows(void* results, const void* data, std::int64_t length, std::int64_t rows) {
    using State = typename R::State;
    const auto* input = static_cast<const Storage<In>*>(data);
    if (length <= kShortRow) {  // empty rows too: the task writes the identity
        Launcher::for_each(
            rows, tasks::ReduceRows<R, In>{input, static_cast<Storage<typename R::Out>*>(results),
                                           length});
        return;
    }
    const bool vectorized = reinterpret_cast<std::uintptr_t>(data) % 16 == 0 &&
                            (length * static_cast<std::int64_t>(sizeof(Storage<In>))) % 16 == 0;
    const bool few = rows * tasks::ceil_div(length, kInputChunk) < multiprocessor_count();
    const std::int64_t chunk_length = few ? kShortInputChunk : kInputChunk;
    const std::int64_t chunks = tasks::ceil_div(length, chunk_length);
    if (chunks == 1) {
        launch_elements<R, In>(true, input, results, length, chunk_length, 1, rows, vectorized);
        return;
    }
    // Levels shrink, so two buffers ping-pong: the first level's, and the second's.
    const tasks::Scratch<Launcher, State> first(rows * chunks);
    const tasks::Scratch<Launcher, State> second(rows * tasks::ceil_div(chunks, kPartialChunk));
    launch_elements<R, In>(false, input, first.get(), length, chunk_length, chunks, rows,
                           vectorized);
    merge_partial_rows<R>(first.get(), second.get(), results, chunks, rows);
}

}  // namespace

kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count) {
    return plugin::guarded("cuda.reduce", [&] {
        use_device(device);
        tasks::check_reduce_call(op, out_dtype, in_dtype, results, data, chunk_size, output_count);
        if (output_count == 0) {
            return;
        }
        tasks::with_reducer(op, in_dtype, [&](auto tag) {
            using Tag = decltype(tag);
            reduce_rows<typename Tag::Reducer, typename Tag::Input>(results, data, chunk_size,
                                                                    output_count);
        });
    });
}

}  // namespace kael::cuda
