// Row reductions with the shared reducers (kael/kernels/tasks/reduce.h), one launch each. Rows of
// up to kShortRow elements take a thread each. Shorter rows, or enough rows to fill the GPU, take
// a warp each: every lane folds its strided elements in order (16-byte loads where aligned) and
// a fixed shuffle tree merges the lanes. Long rows that are few are cut into chunks of a block
// each; a chunk's block writes its partial to the workspace and the last block of the row to
// arrive merges the row's partials in chunk order. The cut depends only on the shape, so results
// repeat run to run. Variance lanes fold shifted sums (LaneFold), so no lane divides per element;
// f32 sums and products fold the shared paired terms (fold_pairs).
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce.h"
#include "reduce_common.cuh"
#include "workspace.h"

namespace kael::cuda {
namespace {

using kernels::load_element;
using kernels::Storage;
namespace tasks = kernels::tasks;

constexpr std::int64_t kShortRow = 16;  // one thread per row: a warp would mostly idle
// Their elements have no pair partners (tasks::kPaired), so an in-order fold is the paired one.
static_assert(kShortRow <= tasks::kPairHalf);
constexpr std::int64_t kWarpRow = 2048;   // rows up to this long take a warp each
constexpr std::int64_t kWarpRows = 4096;  // and so do longer rows when there are this many
constexpr std::int64_t kMinChunk = 4096;  // elements of a block's chunk: 16 a thread at least
// About a resident wave of blocks on an H100/H200; a constant, not the device's count, so the
// summation order does not change with the GPU.
constexpr std::int64_t kTargetBlocks = 1024;

template <typename S>
struct alignas(16) Pack {
    S values[16 / sizeof(S)];
};

// Paired f32 sums and products (tasks::kPaired): a thread folds pair slots, slot s holding
// elements k and k + 32 of group s / 32 (k = 64 * (s / 32) + s % 32 from begin, a group's
// start); aligned rows load four slots at once as two 16-byte packs 128 bytes apart.
template <typename R>
__device__ typename R::State fold_pairs(const float* row, std::int64_t begin, std::int64_t end,
                                        int thread, int threads, bool vectorized) {
    using State = typename R::State;
    constexpr std::int64_t kGroup = tasks::kPairGroup;
    constexpr std::int64_t kHalf = tasks::kPairHalf;
    State state = seed<R>([] { return State{}; });
    std::int64_t rest = begin;
    if (vectorized) {
        constexpr std::int64_t kPacks = kHalf / 4;  // packs of four in half a group
        const std::int64_t groups = (end - begin) / kGroup;
        const auto* packs = reinterpret_cast<const float4*>(row + begin);
#pragma unroll 4
        for (std::int64_t slot = thread; slot < groups * kPacks; slot += threads) {
            const std::int64_t low = slot / kPacks * 2 * kPacks + slot % kPacks;
            const float4 a = packs[low];
            const float4 b = packs[low + kPacks];
            state = R::merge(state, R::pair(a.x, b.x));
            state = R::merge(state, R::pair(a.y, b.y));
            state = R::merge(state, R::pair(a.z, b.z));
            state = R::merge(state, R::pair(a.w, b.w));
        }
        rest = begin + groups * kGroup;
    }
    const std::int64_t slots = tasks::ceil_div(end - rest, kGroup) * kHalf;
    for (std::int64_t slot = thread; slot < slots; slot += threads) {
        const std::int64_t k = rest + slot / kHalf * kGroup + slot % kHalf;
        if (k < end) {
            const float low = row[k];
            state = R::merge(state, k + kHalf < end ? R::pair(low, row[k + kHalf]) : R::lone(low));
        }
    }
    return state;
}

// A lane's 16-byte packs of row_data[begin, end) (begin a multiple of a pack) folded into
// folded, as packs or (kOneByOne) element by element; returns where the packs end.
template <bool kOneByOne, typename R, typename In, typename S>
__device__ std::int64_t fold_packs(LaneFold<R, In>& folded, const S* row_data, std::int64_t begin,
                                   std::int64_t end, int thread, int threads) {
    constexpr int kWidth = 16 / sizeof(S);
    const auto* packs = reinterpret_cast<const Pack<S>*>(row_data);
    const std::int64_t pack_end = end / kWidth;
#pragma unroll 4
    for (std::int64_t pack = begin / kWidth + thread; pack < pack_end; pack += threads) {
        const Pack<S> pack_values = packs[pack];
        In values[kWidth];
#pragma unroll
        for (int i = 0; i < kWidth; ++i) {
            values[i] = read_as<In>(&pack_values.values[i]);
        }
        if constexpr (kOneByOne) {
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                folded.add(values[i], pack * kWidth + i);
            }
        } else {
            folded.add_pack(values, pack * kWidth);
        }
    }
    return pack_end * kWidth;
}

// fold_span_warps for the other reducers: each thread's elements in order into its LaneFold.
template <typename R, typename In, typename E>
__device__ LaneFold<R, In> fold_lanes(const E* row_data, std::int64_t begin, std::int64_t end,
                                      int thread, int threads, bool vectorized) {
    const In shift = read_as<In>(row_data + begin);
    const auto fresh = [&] {
        return LaneFold<R, In>(seed<R>([&] { return R::first(shift, begin); }), shift);
    };
    LaneFold<R, In> folded = fresh();
    std::int64_t scalar_begin = begin;
    if (vectorized) {
        scalar_begin = fold_packs<false>(folded, row_data, begin, end, thread, threads);
        if (folded.overflowed()) {  // packs folded in float overflowed: again in double
            folded = fresh();
            fold_packs<true>(folded, row_data, begin, end, thread, threads);
        }
    }
    for (std::int64_t i = scalar_begin + thread; i < end; i += threads) {
        folded.add(read_as<In>(row_data + i), i);
    }
    return folded;
}

// The elements [begin, end) of row_data folded by `threads` threads from `thread` on, merged
// within each warp (the result is lane 0's); every thread of the warp calls this.
template <typename R, typename In, typename E>
__device__ typename R::State fold_span_warps(const E* row_data, std::int64_t begin,
                                             std::int64_t end, int thread, int threads,
                                             bool vectorized) {
    if constexpr (tasks::kPaired<R> && std::is_same_v<E, float>) {
        return warp_combine<R>(fold_pairs<R>(reinterpret_cast<const float*>(row_data), begin, end,
                                             thread, threads, vectorized));
    } else {
        return fold_lanes<R, In, E>(row_data, begin, end, thread, threads, vectorized)
            .warp_result();
    }
}

template <typename R, typename In, typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_short_rows(const E* data, Results results, std::int64_t length, std::int64_t rows) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         row < rows; row += stride) {
        const E* row_data = data + row * length;
        if (length == 0) {  // only reducers with an identity get here (the core refuses others)
            if constexpr (R::kHasIdentity) {
                store_result<R, In, E>(results, row, R::identity());
            }
            continue;
        }
        auto state = R::first(read_as<In>(row_data), 0);
        for (std::int64_t i = 1; i < length; ++i) {
            state = R::step(state, read_as<In>(row_data + i), i);
        }
        store_result<R, In, E>(results, row, state);
    }
}

// Rows that may take fewer lanes than a warp: the arg extremes, whose result is the same whatever
// lanes fold which elements (combine orders lanes by index), and the other bf16/f16 reducers
// (sums, products, norms, variances, logsumexp), whose lanes' order moves only their rounding in
// f32 or double; the width comes from the shape, so results still repeat. f32 keeps a warp a row
// (its paired sums repeat the cpu's order), and so do the plain extremes, whose -0.0 or 0.0
// depends on the fold order. bf16 rows of 128 on the H100: var 25.0 -> 15.3 us, logsumexp
// 49.8 -> 28.1, sum 13.2 -> 11.3.
template <typename R>
inline constexpr bool kExtremeRows = false;
template <typename In, bool kLargest>
inline constexpr bool kExtremeRows<tasks::Extreme<In, kLargest>> = true;
template <typename R, typename E>
inline constexpr bool kGroupRows = kIsPosition<typename R::State> ||  // the arg extremes
                                   (kernels::is_low_precision_v<E> && !kExtremeRows<R>);

template <typename R, typename In, typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_warp_rows(const E* data, Results results, std::int64_t length, std::int64_t rows,
                     bool vectorized) {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp;
    std::int64_t row = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
    for (; row < rows; row += warps) {
        const auto state =
            fold_span_warps<R, In, E>(data + row * length, 0, length, lane, kWarp, vectorized);
        if (lane == 0) {
            store_result<R, In, E>(results, row, state);
        }
    }
}

// reduce_warp_rows with a row a group of `width` lanes (16, 8 or 4): a bf16 row of 128 is 16
// packs, and half a warp idled on it (argmax at 0.85 of PyTorch's speed). A warp's groups step
// together, since their shuffles take every lane; a group past the last row folds that row
// again, unstored. (A kernel of its own: a runtime width slowed the warp-a-row loops.)
template <typename R, typename In, typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_group_rows(const E* data, Results results, std::int64_t length, std::int64_t rows,
                      bool vectorized, int width) {
    const int lane = static_cast<int>(threadIdx.x) % width;
    const int groups = kWarp / width;  // rows a warp takes at a time
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp;
    const std::int64_t warp =
        (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
    const int group = static_cast<int>(threadIdx.x) % kWarp / width;
    for (std::int64_t first = warp * groups; first < rows; first += warps * groups) {
        const std::int64_t row = first + group;
        const auto folded = fold_lanes<R, In, E>(data + tasks::min_of(row, rows - 1) * length, 0,
                                                 length, lane, width, vectorized);
        const auto state = folded.warp_result(width);
        if (lane == 0 && row < rows) {
            store_result<R, In, E>(results, row, state);
        }
    }
}

// One block per chunk of chunk_length elements; chunks_per_row > 1 meet at the row's counter.
template <typename R, typename In, typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_chunks(const E* data, Results results, typename R::State* partials, unsigned* counters,
                  std::int64_t length, std::int64_t chunk_length, std::int64_t chunks_per_row,
                  std::int64_t chunk_count, bool vectorized) {
    using State = typename R::State;
    __shared__ State warps[kThreadsPerBlock / kWarp];
    __shared__ bool last;
    const int thread = static_cast<int>(threadIdx.x);
    for (std::int64_t chunk = blockIdx.x; chunk < chunk_count; chunk += gridDim.x) {
        const std::int64_t row = chunk / chunks_per_row;
        const std::int64_t begin = (chunk % chunks_per_row) * chunk_length;
        const std::int64_t end = tasks::min_of(length, begin + chunk_length);
        const E* row_data = data + row * length;
        State state = block_combine_warps<R>(
            fold_span_warps<R, In, E>(row_data, begin, end, thread, kThreadsPerBlock, vectorized),
            warps);
        if (chunks_per_row == 1) {
            if (thread == 0) {
                store_result<R, In, E>(results, row, state);
            }
            continue;
        }
        if (thread == 0) {
            partials[chunk] = state;
            __threadfence();
        }
        if (!last_to_arrive(counters + row, static_cast<unsigned>(chunks_per_row), &last)) {
            continue;
        }
        const State* row_partials = partials + row * chunks_per_row;
        State merged = seed<R>([&] { return row_partials[0]; });
        for (std::int64_t i = thread; i < chunks_per_row; i += kThreadsPerBlock) {
            merged = combine<R>(merged, row_partials[i]);
        }
        merged = block_combine<R>(merged, warps);
        if (thread == 0) {
            store_result<R, In, E>(results, row, merged);
        }
    }
}

template <typename Kernel>
int block_grid(Kernel kernel, std::int64_t wanted) {
    return grid_blocks(reinterpret_cast<const void*>(kernel), wanted);
}

// E: how the elements are stored (In's own storage, or bf16/f16 folded as float).
template <typename R, typename In, typename E = Storage<In>>
void reduce_rows(Results results, const void* data, std::int64_t length, std::int64_t rows) {
    using State = typename R::State;
    const auto* input = static_cast<const E*>(data);
    if (length <= kShortRow) {
        const auto kernel = &reduce_short_rows<R, In, E>;
        kernel<<<block_grid(kernel, blocks_for(rows)), kThreadsPerBlock, 0, launch_stream()>>>(
            input, results, length, rows);
        check_launch(typeid(R), __FILE__, __LINE__);
        return;
    }
    // A single row needs only its start aligned: its packs end before its last partial pack
    // (a vocabulary of 50257 logits, say), and the elements after them fold one by one.
    const bool vectorized =
        reinterpret_cast<std::uintptr_t>(data) % 16 == 0 &&
        (rows == 1 || (length * static_cast<std::int64_t>(sizeof(E))) % 16 == 0);
    if (length <= kWarpRow || rows >= kWarpRows) {
        if constexpr (kGroupRows<R, E>) {  // the fewest lanes (at least 4) that cover the row
            const std::int64_t pieces =
                vectorized ? tasks::ceil_div(length * std::int64_t{sizeof(E)}, 16) : length;
            int width = kWarp;
            while (width > 4 && width / 2 >= pieces) {
                width /= 2;
            }
            if (width < kWarp) {
                const auto kernel = &reduce_group_rows<R, In, E>;
                kernel<<<warp_grid(kernel, tasks::ceil_div(rows, kWarp / width)), kThreadsPerBlock,
                         0, launch_stream()>>>(input, results, length, rows, vectorized, width);
                check_launch(typeid(R), __FILE__, __LINE__);
                return;
            }
        }
        const auto kernel = &reduce_warp_rows<R, In, E>;
        kernel<<<warp_grid(kernel, rows), kThreadsPerBlock, 0, launch_stream()>>>(
            input, results, length, rows, vectorized);
        check_launch(typeid(R), __FILE__, __LINE__);
        return;
    }
    std::int64_t chunks =
        tasks::min_of(tasks::ceil_div(kTargetBlocks, rows), tasks::ceil_div(length, kMinChunk));
    // A multiple of 64 elements, so every chunk starts on a 16-byte boundary of its row.
    const std::int64_t chunk_length = tasks::ceil_div(tasks::ceil_div(length, chunks), 64) * 64;
    chunks = tasks::ceil_div(length, chunk_length);
    const auto kernel = &reduce_chunks<R, In, E>;
    const int blocks = block_grid(kernel, rows * chunks);
    if (chunks == 1) {
        kernel<<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(
            input, results, nullptr, nullptr, length, chunk_length, 1, rows, vectorized);
        check_launch(typeid(R), __FILE__, __LINE__);
        return;
    }
    const Workspace workspace(rows * chunks * std::int64_t{sizeof(State)}, rows);
    kernel<<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(
        input, results, static_cast<State*>(workspace.partials()), workspace.counters(), length,
        chunk_length, chunks, rows * chunks, vectorized);
    check_launch(typeid(R), __FILE__, __LINE__);
}

}  // namespace

void reduce_rows_indexed(bool largest, kael_dtype dtype, void* values, std::int64_t* indices,
                         const void* data, std::int64_t length, std::int64_t rows) {
    with_stored_element(dtype, [&](auto in, auto element) {
        using In = decltype(in);
        using E = decltype(element);
        const Results results{values, indices};
        if (largest) {
            reduce_rows<Indexed<tasks::ArgExtreme<In, true>>, In, E>(results, data, length, rows);
        } else {
            reduce_rows<Indexed<tasks::ArgExtreme<In, false>>, In, E>(results, data, length, rows);
        }
    });
}

void reduce_rows_low_precision(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                               void* results, const void* data, std::int64_t length,
                               std::int64_t rows, bool finished, double scale, bool root) {
    with_low_precision_reducer(op, in_dtype, out_dtype, length, finished, [&](auto tag) {
        using Tag = decltype(tag);
        reduce_rows<typename Tag::Reducer, float, typename Tag::Element>(
            Results{results, nullptr, finished, root, scale, out_dtype == in_dtype}, data, length,
            rows);
    });
}

void reduce_rows_finished(kael_reduce_op op, kael_dtype dtype, void* results, const void* data,
                          std::int64_t length, std::int64_t rows, double scale, bool root) {
    tasks::with_reducer(op, dtype, [&](auto tag) {
        using Tag = decltype(tag);
        reduce_rows<typename Tag::Reducer, typename Tag::Input>(
            Results{results, nullptr, true, root, scale}, data, length, rows);
    });
}

kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count) {
    return plugin::guarded("cuda.reduce", [&] {
        use_device(device);
        if (tasks::is_last_pass(out_dtype, in_dtype)) {
            with_last_pass_reducer("reduce", op, out_dtype, results, data, output_count, chunk_size,
                                   [&](auto tag, const Results& stored) {
                                       reduce_rows<typename decltype(tag)::Reducer, float>(
                                           stored, data, chunk_size, output_count);
                                   });
            return;
        }
        if (kernels::is_low_precision(in_dtype)) {
            check_low_precision_call("reduce", results, data, output_count, chunk_size);
            if (output_count > 0) {
                reduce_rows_low_precision(op, out_dtype, in_dtype, results, data, chunk_size,
                                          output_count, false, 1.0, false);
            }
            return;
        }
        tasks::check_reduce_call(op, out_dtype, in_dtype, results, data, chunk_size, output_count);
        if (output_count == 0) {
            return;
        }
        tasks::with_reducer(op, in_dtype, [&](auto tag) {
            using Tag = decltype(tag);
            reduce_rows<typename Tag::Reducer, typename Tag::Input>(Results{results, nullptr}, data,
                                                                    chunk_size, output_count);
        });
    });
}

}  // namespace kael::cuda
