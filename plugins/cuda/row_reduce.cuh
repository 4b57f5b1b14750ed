#pragma once
// Building blocks of the softmax family's kernels: a reduction over the threads that share a row
// (one warp, or a whole block) with xor shuffles, so every thread ends with the same value, and
// row walkers with 16-byte loads from the first 16-byte boundary of the row on, issued in
// batches.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kael/kernels/tasks/softmax.h"

namespace kael::cuda::rows {

using kernels::tasks::LogSumExp;

inline constexpr int kWarp = 32;

template <typename T>
struct alignas(16) Pack {
    static constexpr int kWidth = 16 / sizeof(T);
    T values[kWidth];
};

struct Add {
    template <typename T>
    __device__ T operator()(T a, T b) const {
        return a + b;
    }
};

struct Max {
    template <typename T>
    __device__ T operator()(T a, T b) const {
        return kernels::nan_aware_max(a, b);
    }
};

struct Merge {
    template <typename A>
    __device__ LogSumExp<A> operator()(LogSumExp<A> a, const LogSumExp<A>& b) const {
        a.merge(b);
        return a;
    }
};

template <typename T>
__device__ T shuffle_xor(T value, int mask) {
    return __shfl_xor_sync(0xffffffffu, value, mask);
}

template <typename A>
__device__ LogSumExp<A> shuffle_xor(LogSumExp<A> value, int mask) {
    return {shuffle_xor(value.maximum, mask), shuffle_xor(value.total, mask)};
}

// Every lane of the warp ends with the same result: the ops are commutative, and each level
// combines the same pairs on both sides.
template <typename T, typename Op>
__device__ T warp_reduce(T value, Op op) {
#pragma unroll
    for (int mask = kWarp / 2; mask > 0; mask /= 2) {
        value = op(value, shuffle_xor(value, mask));
    }
    return value;
}

// Reduces over kThreads threads: a warp, or the whole block (then every thread must call it,
// and shared holds kThreads / 32 values). Every thread gets the result, merged in one order.
template <int kThreads, typename T, typename Op>
__device__ T group_reduce(T value, Op op, T* shared) {
    value = warp_reduce(value, op);
    if constexpr (kThreads > kWarp) {
        const int warp = static_cast<int>(threadIdx.x) / kWarp;
        __syncthreads();  // the previous reduction's readers are done with shared
        if (static_cast<int>(threadIdx.x) % kWarp == 0) {
            shared[warp] = value;
        }
        __syncthreads();
        value = shared[0];
#pragma unroll
        for (int other = 1; other < kThreads / kWarp; ++other) {
            value = op(value, shared[other]);
        }
    }
    return value;
}

// Elements before the row's first 16-byte boundary (rows hold whole elements, so this is exact).
template <typename T>
__device__ std::int64_t unaligned_head(const T* row, std::int64_t count) {
    constexpr int kWidth = Pack<T>::kWidth;
    const auto misaligned =
        static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(row) % 16 / sizeof(T));
    return count < (kWidth - misaligned) % kWidth ? count : (kWidth - misaligned) % kWidth;
}

// use(i, load(i)) for i = first, first + step, ... below end, kBatch loads issued before their
// uses so that each thread keeps several requests in flight (uses may store: no reordering then).
template <int kBatch, typename Load, typename Use>
__device__ void batched(std::int64_t first, std::int64_t end, std::int64_t step, Load&& load,
                        Use&& use) {
    std::int64_t i = first;
    for (; i + (kBatch - 1) * step < end; i += kBatch * step) {
        decltype(load(i)) values[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k) {
            values[k] = load(i + k * step);
        }
#pragma unroll
        for (int k = 0; k < kBatch; ++k) {
            use(i + k * step, values[k]);
        }
    }
    for (; i < end; i += step) {
        use(i, load(i));
    }
}

inline constexpr int kBatch = 4;

// visit(value) for every element of row[0, count) this thread (t of kThreads) owns.
template <int kThreads, typename T, typename Visit>
__device__ void for_each_in_row(const T* row, std::int64_t count, int t, Visit&& visit) {
    constexpr int kWidth = Pack<T>::kWidth;
    const std::int64_t head = unaligned_head(row, count);
    if (t < head) {
        visit(row[t]);
    }
    const auto* packs = reinterpret_cast<const Pack<T>*>(row + head);
    const std::int64_t pack_count = (count - head) / kWidth;
    batched<kBatch>(
        t, pack_count, kThreads, [&](std::int64_t p) { return packs[p]; },
        [&](std::int64_t, const Pack<T>& loaded) {
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                visit(loaded.values[i]);
            }
        });
    for (std::int64_t i = head + pack_count * kWidth + t; i < count; i += kThreads) {
        visit(row[i]);
    }
}

// out[c] = f(c, in[c]) for the elements of thread t; 16-byte packs where in and out share their
// offset from a 16-byte boundary, else element by element.
template <int kThreads, typename T, typename F>
__device__ void map_row(const T* in, T* out, std::int64_t count, int t, F&& f) {
    constexpr int kWidth = Pack<T>::kWidth;
    const bool together =
        reinterpret_cast<std::uintptr_t>(in) % 16 == reinterpret_cast<std::uintptr_t>(out) % 16;
    const std::int64_t head = together ? unaligned_head(in, count) : count;
    batched<kBatch>(
        t, head, kThreads, [&](std::int64_t i) { return in[i]; },
        [&](std::int64_t i, T x) { out[i] = f(i, x); });
    if (!together) {
        return;
    }
    const auto* in_packs = reinterpret_cast<const Pack<T>*>(in + head);
    auto* out_packs = reinterpret_cast<Pack<T>*>(out + head);
    const std::int64_t pack_count = (count - head) / kWidth;
    batched<kBatch>(
        t, pack_count, kThreads, [&](std::int64_t p) { return in_packs[p]; },
        [&](std::int64_t p, const Pack<T>& loaded) {
            Pack<T> result;
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                result.values[i] = f(head + p * kWidth + i, loaded.values[i]);
            }
            out_packs[p] = result;
        });
    for (std::int64_t i = head + pack_count * kWidth + t; i < count; i += kThreads) {
        out[i] = f(i, in[i]);
    }
}

}  // namespace kael::cuda::rows
