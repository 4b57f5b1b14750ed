// Row reductions with the shared reducers (kael/kernels/tasks/reduce.h). A row longer than
// kShortRow is cut into chunks of kInputChunk elements, one warp each: every lane folds its
// strided elements in order (16-byte loads where aligned) and a fixed shuffle tree merges the
// lanes. The partials are merged kPartialChunk at a time the same way until one is left per row.
// The order depends only on the row length, so results repeat run to run.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce.h"

namespace kael::cuda {
namespace {

using kernels::load_element;
using kernels::Storage;
namespace tasks = kernels::tasks;

constexpr std::int64_t kShortRow = 16;  // one thread per row: a warp would mostly idle
constexpr std::int64_t kInputChunk = 2048;
constexpr std::int64_t kPartialChunk = 1024;
constexpr int kWarp = 32;

template <typename S>
struct alignas(16) Pack {
    S values[16 / sizeof(S)];
};

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

// One warp per chunk of kInputChunk elements of rows of `length`; target gets one partial per
// chunk (row-major, chunks_per_row wide) or, when kFinal, the row's result.
template <typename R, typename In, bool kFinal>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_elements(const Storage<In>* data, void* target, std::int64_t length,
                    std::int64_t chunks_per_row, std::int64_t chunk_count, bool vectorized) {
    using S = Storage<In>;
    constexpr int kWidth = 16 / sizeof(S);
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp;
    std::int64_t chunk = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
    for (; chunk < chunk_count; chunk += warps) {
        const std::int64_t row = chunk / chunks_per_row;
        const std::int64_t begin = (chunk % chunks_per_row) * kInputChunk;
        const std::int64_t end = tasks::min_of(length, begin + kInputChunk);
        const S* row_data = data + row * length;
        auto state = seed<R>([&] { return R::first(load_element<In>(row_data + begin), begin); });
        std::int64_t scalar_begin = begin;
        if (vectorized) {
            const auto* packs = reinterpret_cast<const Pack<S>*>(row_data);
            const std::int64_t pack_end = end / kWidth;
#pragma unroll 4
            for (std::int64_t pack = begin / kWidth + lane; pack < pack_end; pack += kWarp) {
                const Pack<S> values = packs[pack];
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    state = R::step(state, load_element<In>(&values.values[i]), pack * kWidth + i);
                }
            }
            scalar_begin = pack_end * kWidth;
        }
        for (std::int64_t i = scalar_begin + lane; i < end; i += kWarp) {
            state = R::step(state, load_element<In>(row_data + i), i);
        }
        state = warp_combine<R>(state);
        if (lane == 0) {
            store_chunk<R, kFinal>(target, chunk, row, state);
        }
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

template <typename R, typename In>
void launch_elements(bool final, const Storage<In>* data, void* target, std::int64_t length,
                     std::int64_t chunks_per_row, std::int64_t rows, bool vectorized) {
    const auto kernel = final ? &reduce_elements<R, In, true> : &reduce_elements<R, In, false>;
    const std::int64_t chunk_count = rows * chunks_per_row;
    kernel<<<warp_grid(kernel, chunk_count), kThreadsPerBlock>>>(
        data, target, length, chunks_per_row, chunk_count, vectorized);
    check_launch(typeid(R), __FILE__, __LINE__);
}

template <typename R>
void launch_partials(bool final, const typename R::State* partials, void* target,
                     std::int64_t length, std::int64_t chunks_per_row, std::int64_t rows) {
    const auto kernel = final ? &reduce_partials<R, true> : &reduce_partials<R, false>;
    const std::int64_t chunk_count = rows * chunks_per_row;
    kernel<<<warp_grid(kernel, chunk_count), kThreadsPerBlock>>>(partials, target, length,
                                                                 chunks_per_row, chunk_count);
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
    const std::int64_t chunks = tasks::ceil_div(length, kInputChunk);
    if (chunks == 1) {
        launch_elements<R, In>(true, input, results, length, 1, rows, vectorized);
        return;
    }
    // Levels shrink, so two buffers ping-pong: the first level's, and the second's.
    const tasks::Scratch<Launcher, State> first(rows * chunks);
    const tasks::Scratch<Launcher, State> second(rows * tasks::ceil_div(chunks, kPartialChunk));
    launch_elements<R, In>(false, input, first.get(), length, chunks, rows, vectorized);
    State* source = first.get();
    State* spare = second.get();
    for (std::int64_t width = chunks;;) {
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

void check_reduce_call(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                       const void* results, const void* data, int64_t chunk_size,
                       int64_t output_count) {
    if (op < 0 || op >= KAEL_REDUCE_COUNT) {
        plugin::invalid("invalid reduce op " + std::to_string(op));
    }
    const std::string name = tasks::reduce_op_name(op);
    if (!kernels::valid_dtype(in_dtype) || !kernels::valid_dtype(out_dtype)) {
        plugin::invalid(name + ": invalid dtype");
    }
    const kael_dtype expected = tasks::reduce_out_dtype(op, in_dtype);
    if (out_dtype != expected) {
        plugin::invalid(name + " of " + plugin::dtype_name(in_dtype) + " writes " +
                        plugin::dtype_name(expected) + ", not " + plugin::dtype_name(out_dtype));
    }
    tasks::check_rows(name.c_str(), chunk_size, output_count);
    if (output_count > 0 && (results == nullptr || (chunk_size > 0 && data == nullptr))) {
        plugin::invalid(name + ": null results or data");
    }
    if (output_count > 0 && chunk_size == 0 && op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_PROD) {
        plugin::invalid(name + " of an empty row has no value");
    }
}

}  // namespace

kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count) {
    return plugin::guarded("cuda.reduce", [&] {
        use_device(device);
        check_reduce_call(op, out_dtype, in_dtype, results, data, chunk_size, output_count);
        if (output_count == 0) {
            return;
        }
        kernels::with_dtype(in_dtype, [&](auto tag) {
            using In = kernels::TagType<decltype(tag)>;
            switch (op) {
                case KAEL_REDUCE_SUM:
                    return reduce_rows<tasks::Accumulate<In, false>, In>(results, data, chunk_size,
                                                                         output_count);
                case KAEL_REDUCE_PROD:
                    return reduce_rows<tasks::Accumulate<In, true>, In>(results, data, chunk_size,
                                                                        output_count);
                case KAEL_REDUCE_MAX:
                    return reduce_rows<tasks::Extreme<In, true>, In>(results, data, chunk_size,
                                                                     output_count);
                case KAEL_REDUCE_MIN:
                    return reduce_rows<tasks::Extreme<In, false>, In>(results, data, chunk_size,
                                                                      output_count);
                case KAEL_REDUCE_ARGMAX:
                    return reduce_rows<tasks::ArgExtreme<In, true>, In>(results, data, chunk_size,
                                                                        output_count);
                default:
                    return reduce_rows<tasks::ArgExtreme<In, false>, In>(results, data, chunk_size,
                                                                         output_count);
            }
        });
    });
}

}  // namespace kael::cuda
