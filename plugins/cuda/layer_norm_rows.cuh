#pragma once
// What the layer_norm kernels share. A row of at most 32 * 16 (forward) or 32 * 8 (backward)
// packs of 16 bytes whose buffers are 16-byte aligned is held in registers by one warp (lane l
// owns packs l, l + 32, ...); any other row is read from memory by a block. Sums go through butterfly shuffles, so every lane
// ends with the same bits, and block sums add the warps' sums in warp order: run to run the
// results repeat. Accumulation is in T (f32 for f32, as PyTorch does).
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "cuda_launch.cuh"
#include "element_cast.cuh"

namespace kael::cuda::layer_norm_rows {

inline constexpr int kWarp = 32;
inline constexpr int kRowThreads = 256;  // blocks of 8 warps for the row-per-warp kernels
inline constexpr int kWarpsPerBlock = kRowThreads / kWarp;
// Packs per lane at most: forward 16 (2048 f32 or 1024 f64 columns), backward 8, whose
// running sums of the parameters' gradients need registers too.
inline constexpr int kMaxForwardChunks = 16;
inline constexpr int kMaxChunks = 8;

template <typename T>
inline constexpr int kPackWidth = static_cast<int>(16 / sizeof(T));

template <typename T>
struct alignas(16) Pack {
    T v[kPackWidth<T>];
};

template <typename T>
__device__ inline T reciprocal_sqrt(T value) {
    if constexpr (sizeof(T) == 4) {
        return ::rsqrtf(value);
    } else {
        return ::rsqrt(value);
    }
}

template <typename T>
__device__ inline T warp_sum(T value) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    }
    return value;
}

// The sum over the block (blockDim.x a multiple of 32, at most 1024) for every thread; scratch
// holds 32 values. Every thread of the block must call it.
template <typename T>
__device__ inline T block_sum(T value, T* scratch) {
    value = warp_sum(value);
    if (threadIdx.x % kWarp == 0) {
        scratch[threadIdx.x / kWarp] = value;
    }
    __syncthreads();
    T total = 0;
    for (unsigned warp = 0; warp < blockDim.x / kWarp; ++warp) {
        total += scratch[warp];
    }
    __syncthreads();  // scratch is reused by the next call
    return total;
}

// Threads of a block that walks one row in memory: about four elements each, 32 to 512.
inline int threads_for_row(std::int64_t columns) {
    const std::int64_t wanted = (columns + 4 * kWarp - 1) / (4 * kWarp) * kWarp;
    return static_cast<int>(wanted < kWarp ? kWarp : (wanted > 512 ? 512 : wanted));
}

// Packs per lane for a row held in registers: a bucket of at most kMax (1, 2, 4, 6, 8, 12 or
// 16), or 0 when the row does not fit or a buffer is not 16-byte aligned.
template <typename T, int kMax>
int register_chunks(std::int64_t columns, std::initializer_list<const void*> buffers) {
    constexpr std::int64_t width = kPackWidth<T>;
    if (columns % width != 0) {
        return 0;
    }
    for (const void* buffer : buffers) {
        if (reinterpret_cast<std::uintptr_t>(buffer) % 16 != 0) {
            return 0;  // null pointers pass: they are never read
        }
    }
    const std::int64_t chunks = (columns / width + kWarp - 1) / kWarp;
    for (const int bucket : {1, 2, 4, 6, 8, 12, 16}) {
        if (chunks <= bucket && bucket <= kMax) {
            return bucket;
        }
    }
    return 0;
}

// Runs launch(std::integral_constant<int, chunks>) for a bucket from register_chunks<T, kMax>.
template <int kMax, typename Launch>
void with_chunks(int chunks, const Launch& launch) {
    switch (chunks) {
        case 1: return launch(std::integral_constant<int, 1>{});
        case 2: return launch(std::integral_constant<int, 2>{});
        case 4: return launch(std::integral_constant<int, 4>{});
        case 6: return launch(std::integral_constant<int, 6>{});
        default: break;
    }
    if constexpr (kMax > 8) {
        if (chunks == 12) {
            return launch(std::integral_constant<int, 12>{});
        }
        if (chunks == 16) {
            return launch(std::integral_constant<int, 16>{});
        }
    }
    return launch(std::integral_constant<int, 8>{});
}

// Blocks for a grid-stride kernel of kRowThreads threads, kWarpsPerBlock rows per block.
inline int warp_row_grid(const void* kernel, std::int64_t rows) {
    return grid_blocks(kernel, (rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kRowThreads);
}

// Blocks for a grid-stride kernel of one row per block of `threads` threads: about as many as a
// multiprocessor holds (resident_blocks caches one block size per kernel; this one varies).
inline int block_row_grid(std::int64_t rows, int threads) {
    const std::int64_t resident = std::int64_t{multiprocessor_count()} * (2048 / threads);
    return static_cast<int>(rows < resident ? rows : resident);
}

}  // namespace kael::cuda::layer_norm_rows
