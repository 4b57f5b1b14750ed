#pragma once
// The pieces of the row (reduce.cu) and column (reduce_dims.cu) reductions: an ordered combine,
// fixed shuffle and block trees, lane seeds, how results are stored, and where the blocks of a
// split output meet so that the last one merges their partials (workspace.h) in the same launch.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce.h"
#include "kael/kernels/tasks/reduce_finished.h"

namespace kael::cuda {
namespace {

using kernels::Storage;
namespace tasks = kernels::tasks;

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

// Lane 0 ends with the merge of all 32 lanes, always through the same tree; with a width of 16,
// 8 or 4 (a warp-uniform power of two), the first lane of each group of that many lanes ends
// with its group's merge. Every lane of the warp calls this.
template <typename R>
__device__ typename R::State warp_combine(typename R::State state, int width = kWarp) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        if (offset < width) {
            state = combine<R>(state, shuffle_down(state, offset));
        }
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
    template <int kWidth>
    __device__ void add_pack(const In (&values)[kWidth], std::int64_t index) {
#pragma unroll
        for (int i = 0; i < kWidth; ++i) {
            add(values[i], index + i);
        }
    }
    __device__ bool overflowed() const {
        return false;
    }
    // Lane 0's merge of the warp's lanes (of each group of `width` lanes, warp_combine's).
    __device__ typename R::State warp_result(int width = kWarp) const {
        return warp_combine<R>(state, width);
    }
};

template <typename In>
struct LaneFold<tasks::Variance<In>, In> {
    tasks::ShiftedSums sums;
    bool past_float = false;  // a pack's square overflowed float
    __device__ LaneFold(tasks::Moments /*identity*/, In shift) : sums(static_cast<double>(shift)) {}
    __device__ void add(In value, std::int64_t /*index*/) { sums.add(static_cast<double>(value)); }
    __device__ tasks::Moments result() const { return sums.result(); }
    __device__ bool overflowed() const { return past_float; }
    // A 16-byte pack of float or narrower: its deviations summed and squared in float, then
    // added in double once (per element, the double conversions and adds held a whole-tensor
    // variance at 60% of a sum's bandwidth on the H100). A square past float's range (values
    // 1e19 apart, an infinity, a NaN) sets past_float, and the caller folds the lane again in
    // double; no branch here, so the loop keeps its loads in flight.
    template <int kWidth>
    __device__ void add_pack(const In (&values)[kWidth], std::int64_t index) {
        if constexpr (sizeof(In) >= 8) {
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                add(values[i], index + i);
            }
        } else {
            const auto shift = static_cast<float>(sums.shift);
            float sum = 0.0f;
            float squares = 0.0f;
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                const float deviation = static_cast<float>(values[i]) - shift;
                sum += deviation;
                squares = fmaf(deviation, deviation, squares);
            }
            past_float = past_float || !isfinite(squares);
            sums.count += kWidth;
            sums.sum += sum;
            sums.squares += squares;
        }
    }
    // Every lane of a warp folds from the same shift (its row's or chunk's first element), so
    // the lanes' sums add: one division at the end instead of a Welford merge at each level.
    // Counts travel as 32-bit integers (a lane's span is far below 2^32 elements): one shuffle.
    __device__ tasks::Moments warp_result(int width = kWarp) const {
        tasks::ShiftedSums total = sums;
        auto count = static_cast<std::uint32_t>(sums.count);
#pragma unroll
        for (int offset = kWarp / 2; offset > 0; offset /= 2) {
            if (offset < width) {  // warp-uniform, as in warp_combine
                count += __shfl_down_sync(0xffffffffu, count, offset);
                total.sum += __shfl_down_sync(0xffffffffu, total.sum, offset);
                total.squares += __shfl_down_sync(0xffffffffu, total.squares, offset);
            }
        }
        total.count = count;
        return total.result();
    }
};

// f32 results stored as they are, or rounded to bf16/f16 (ABI 1.20's last passes).
enum class Rounding : std::uint8_t { None, BFloat16, Half };

// Where results go: values (R::Out each) and, for reduce_indexed, the indices of the extremes.
// A finished call (reduce_dims_finished) stores each float result r as r * scale, or its root,
// in the input's dtype instead: mean, var and std in the reduction's own launch.
struct Results {
    void* values;
    std::int64_t* indices;  // null unless kIndexed
    bool finished = false;
    bool root = false;
    double scale = 1.0;
    bool narrow = false;  // bf16/f16 input: results in its dtype (else f32 partials for the core)
    Rounding rounding = Rounding::None;  // f32 input
};

// An element stored as E read as In: bf16/f16 widened to float (the low-precision reductions
// fold in f32 with the f32 reducers), any other as it is.
template <typename In, typename E>
__device__ In read_as(const E* address) {
    if constexpr (kernels::is_low_precision_v<E>) {
        return kernels::to_float(*address);
    } else {
        return kernels::load_element<In>(address);
    }
}

// The reducer and stored element of a low-precision call.
template <typename R, typename E>
struct LowPrecisionTag {
    using Reducer = R;
    using Element = E;
};

// A low-precision call's sizes and pointers (the shared checks take f32, f64, i64 and bool
// only); an empty run may come without data (with_low_precision_reducer then declines it).
inline void check_low_precision_call(const char* slot, const void* results, const void* data,
                                     std::int64_t outputs, std::int64_t size) {
    if (outputs < 0 || size < 0) {
        plugin::invalid(std::string(slot) + ": negative sizes");
    }
    if (outputs > 0 && (results == nullptr || (size > 0 && data == nullptr))) {
        plugin::invalid(std::string(slot) + ": null results or data");
    }
}

// bf16/f16 reductions (the ABI's low-precision reduce): read as stored and folded by the f32
// reducer (tasks::with_reducer's). Plain calls: argmax/argmin write int64; sum, prod, max, min,
// norm2 and logsumexp the input's dtype or f32 partials. Finished calls (mean, var, std, norm,
// logsumexp): sum, variance, norm2 and logsumexp, in the input's dtype. The variance only
// finishes (its partials are not f32 values), and empty runs are declined: the core then
// reduces an f32 twin on the device.
template <typename Visit>
void with_low_precision_reducer(kael_reduce_op op, kael_dtype in_dtype, kael_dtype out_dtype,
                                std::int64_t size, bool finished, Visit&& visit) {
    const bool arg = op == KAEL_REDUCE_ARGMAX || op == KAEL_REDUCE_ARGMIN;
    bool takes = false;
    if (finished) {
        takes = op == KAEL_REDUCE_SUM || op == KAEL_REDUCE_VARIANCE || op == KAEL_REDUCE_NORM2 ||
                op == KAEL_REDUCE_LOGSUMEXP;
    } else if (arg) {
        takes = out_dtype == KAEL_DTYPE_I64;
    } else {
        takes =
            op != KAEL_REDUCE_VARIANCE && (out_dtype == in_dtype || out_dtype == KAEL_DTYPE_F32);
    }
    if (low_precision_reduce_declined() || !takes || size == 0) {
        plugin::unsupported(std::string(tasks::reduce_op_name(op)) + " of " +
                            plugin::dtype_name(in_dtype) + " here (the core reduces it in f32)");
    }
    const auto by_op = [&](auto element) {
        using E = decltype(element);
        tasks::with_reducer_of<float>(op, KAEL_DTYPE_F32, [&](auto tag) {
            return visit(LowPrecisionTag<typename decltype(tag)::Reducer, E>{});
        });
    };
    if (in_dtype == KAEL_DTYPE_BF16) {
        by_op(kernels::BFloat16{});
    } else {
        by_op(kernels::Half{});
    }
}

// ABI 1.20's last pass (tasks::is_last_pass): the f32 kernels, their results rounded as stored.
// Declined for empty runs and where low-precision reductions are turned off.
template <typename Visit>
void with_last_pass_reducer(const char* slot, kael_reduce_op op, kael_dtype out_dtype,
                            void* results, const void* data, std::int64_t outputs,
                            std::int64_t size, Visit&& visit) {
    check_low_precision_call(slot, results, data, outputs, size);
    tasks::check_last_pass(op, out_dtype, !low_precision_reduce_declined() && size > 0);
    if (outputs == 0) {
        return;
    }
    Results stored{results, nullptr};
    stored.rounding = out_dtype == KAEL_DTYPE_BF16 ? Rounding::BFloat16 : Rounding::Half;
    tasks::with_reducer_of<float>(op, KAEL_DTYPE_F32, [&](auto tag) { return visit(tag, stored); });
}

// Calls visit(In, E) for the elements of dtype: bf16/f16 stored as E and read as float, any
// other dtype as itself (max/min with indices, whose values keep the stored dtype).
template <typename Visit>
void with_stored_element(kael_dtype dtype, Visit&& visit) {
    if (dtype == KAEL_DTYPE_BF16) {
        visit(float{}, kernels::BFloat16{});
    } else if (dtype == KAEL_DTYPE_F16) {
        visit(float{}, kernels::Half{});
    } else {
        kernels::with_dtype(dtype, [&](auto tag) {
            using In = kernels::TagType<decltype(tag)>;
            visit(In{}, Storage<In>{});
        });
    }
}

// max/min with their indices in one pass: ArgExtreme's state is both, so it stores both.
template <typename R>
struct Indexed : R {};
template <typename R>
inline constexpr bool kIndexed = false;
template <typename R>
inline constexpr bool kIndexed<Indexed<R>> = true;

template <typename R, typename In, typename E = Storage<In>>
__device__ void store_result(const Results& results, std::int64_t output, typename R::State state) {
    if constexpr (kIndexed<R>) {
        if constexpr (kernels::is_low_precision_v<E>) {
            static_cast<E*>(results.values)[output] = kernels::from_float<E>(state.value);
        } else {
            kernels::store_element<In>(static_cast<Storage<In>*>(results.values) + output,
                                       state.value);
        }
        results.indices[output] = state.index;
    } else if constexpr (kernels::is_low_precision_v<E> &&
                         std::is_integral_v<typename R::Out>) {  // argmax/argmin
        static_cast<std::int64_t*>(results.values)[output] = R::finish(state);
    } else if constexpr (kernels::is_low_precision_v<E>) {
        auto value = static_cast<double>(R::finish(state));
        if (results.finished) {
            value = tasks::finished(value, results.scale, results.root);
        }
        if (results.narrow) {  // finished results are always in the dtype
            static_cast<E*>(results.values)[output] =
                kernels::from_float<E>(static_cast<float>(value));
        } else {
            static_cast<float*>(results.values)[output] = static_cast<float>(value);
        }
    } else {
        if constexpr (std::is_same_v<In, float> && std::is_same_v<typename R::Out, float>) {
            if (results.rounding == Rounding::BFloat16) {
                static_cast<kernels::BFloat16*>(results.values)[output] =
                    kernels::from_float<kernels::BFloat16>(R::finish(state));
                return;
            }
            if (results.rounding == Rounding::Half) {
                static_cast<kernels::Half*>(results.values)[output] =
                    kernels::from_float<kernels::Half>(R::finish(state));
                return;
            }
        }
        if constexpr (std::is_floating_point_v<In>) {
            if (results.finished) {
                const double value = static_cast<double>(R::finish(state));
                kernels::store_element<In>(
                    static_cast<Storage<In>*>(results.values) + output,
                    static_cast<In>(tasks::finished(value, results.scale, results.root)));
                return;
            }
        }
        kernels::store_element<typename R::Out>(
            static_cast<Storage<typename R::Out>*>(results.values) + output, R::finish(state));
    }
}

// Thread 0 ends with the merge of the block's states: each warp's shuffle tree, then the warps
// in order. `warps` is shared memory for one state per warp; every thread must call this.
template <typename R>
__device__ typename R::State block_combine_warps(typename R::State state, typename R::State* warps);

template <typename R>
__device__ typename R::State block_combine(typename R::State state, typename R::State* warps) {
    return block_combine_warps<R>(warp_combine<R>(state), warps);
}

// block_combine's second half, for states already merged within each warp (at its lane 0).
template <typename R>
__device__ typename R::State block_combine_warps(typename R::State state,
                                                 typename R::State* warps) {
    const int warp = static_cast<int>(threadIdx.x) / kWarp;
    if (threadIdx.x % kWarp == 0) {
        warps[warp] = state;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const int count = static_cast<int>((blockDim.x + kWarp - 1) / kWarp);
        for (int other = 1; other < count; ++other) {
            state = combine<R>(state, warps[other]);
        }
    }
    __syncthreads();  // warps is free again for the caller's next use
    return state;
}

// After this block's partial writes (each writer fenced them): whether it is the last of
// `expected` blocks to arrive at counter, block-uniform. The last one resets the counter, so
// the workspace's counters are zero between launches, and fences before reading the partials.
__device__ inline bool last_to_arrive(unsigned* counter, unsigned expected, bool* flag) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const bool last = atomicAdd(counter, 1u) == expected - 1;
        if (last) {
            *counter = 0;
        }
        *flag = last;
    }
    __syncthreads();
    const bool last = *flag;
    if (last) {
        __threadfence();
    }
    __syncthreads();  // flag is read before a later call rewrites it
    return last;
}

template <typename Kernel>
int warp_grid(Kernel kernel, std::int64_t chunk_count) {
    return grid_blocks(reinterpret_cast<const void*>(kernel),
                       blocks_for(chunk_count, kThreadsPerBlock / kWarp));
}

}  // namespace
}  // namespace kael::cuda
