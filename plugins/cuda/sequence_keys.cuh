#pragma once
// Device helpers of the sequence kernels (sort, topk, cumsum): order-preserving unsigned keys,
// element copies by size, and a block-wide inclusive sum for any block of whole warps.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kael/plugin_api.h"

namespace kael::cuda {

// Radix sort key bits of dtype: bool sorts on one bit, the rest on their whole width.
inline int key_bits(kael_dtype dtype) {
    return dtype == KAEL_DTYPE_BOOL ? 1 : dtype == KAEL_DTYPE_F32 ? 32 : 64;
}

// The keys' width for dtype: 32 bits for f32 and bool, 64 for f64 and i64.
inline bool wide_keys(kael_dtype dtype) {
    return dtype == KAEL_DTYPE_F64 || dtype == KAEL_DTYPE_I64;
}

// All ones in the dtype's key bits: xor-ing a key with it reverses the order (descending), and
// equal keys stay equal, so a stable sort still puts ties in position order.
template <typename Key>
Key key_inversion(kael_dtype dtype) {
    const int bits = key_bits(dtype);
    return bits == int{8 * sizeof(Key)} ? ~Key{0} : static_cast<Key>((Key{1} << bits) - 1);
}

// Unsigned key whose order is sort()'s order of element i of data: NaN above +inf, every NaN
// equal and -0.0 equal to 0.0 (canonicalised first, so ties keep position order). Key is
// std::uint32_t for f32 and bool, std::uint64_t for f64 and i64; dtype picks among them.
template <typename Key>
__device__ __forceinline__ Key sort_key(const void* data, kael_dtype dtype, std::int64_t i) {
    if constexpr (sizeof(Key) == 4) {
        if (dtype == KAEL_DTYPE_BOOL) {
            return static_cast<const std::uint8_t*>(data)[i] != 0 ? 1U : 0U;
        }
        const float x = static_cast<const float*>(data)[i];
        if (x != x) {
            return 0xFFC00000U;  // the canonical quiet NaN's key
        }
        const std::uint32_t bits = __float_as_uint(x == 0.0F ? 0.0F : x);
        return (bits & 0x80000000U) != 0 ? ~bits : bits | 0x80000000U;
    } else {
        if (dtype == KAEL_DTYPE_I64) {
            const auto x = static_cast<const std::uint64_t*>(data)[i];
            return x ^ 0x8000000000000000ULL;
        }
        const double x = static_cast<const double*>(data)[i];
        if (x != x) {
            return 0xFFF8000000000000ULL;
        }
        const auto bits = static_cast<std::uint64_t>(__double_as_longlong(x == 0.0 ? 0.0 : x));
        return (bits & 0x8000000000000000ULL) != 0 ? ~bits : bits | 0x8000000000000000ULL;
    }
}

// Copies element `from` of source to element `to` of target, elements of element_size bytes.
__device__ __forceinline__ void copy_element(void* target, std::int64_t to, const void* source,
                                             std::int64_t from, int element_size) {
    if (element_size == 1) {
        static_cast<std::uint8_t*>(target)[to] = static_cast<const std::uint8_t*>(source)[from];
    } else if (element_size == 4) {
        static_cast<std::uint32_t*>(target)[to] = static_cast<const std::uint32_t*>(source)[from];
    } else {
        static_cast<std::uint64_t*>(target)[to] = static_cast<const std::uint64_t*>(source)[from];
    }
}

// Inclusive sum of value over the lanes of a whole warp, in lane order.
template <typename V>
__device__ __forceinline__ V warp_inclusive_sum(V value) {
    const unsigned lane = threadIdx.x & 31U;
#pragma unroll
    for (unsigned offset = 1; offset < 32; offset *= 2) {
        const V up = __shfl_up_sync(0xFFFFFFFFU, value, offset);
        if (lane >= offset) {
            value += up;
        }
    }
    return value;
}

// Exclusive sum of value over the block in thread order (blockDim.x a multiple of 32, at most
// 1024); *total receives the block's sum. Every thread calls it; shared holds 33 values and may
// be reused once it returns. Shifts instead of subtracting, so double sums stay exact.
template <typename V>
__device__ V block_exclusive_sum(V value, V* shared, V* total) {
    const unsigned lane = threadIdx.x & 31U;
    const unsigned warp = threadIdx.x >> 5U;
    const V inclusive = warp_inclusive_sum(value);
    const V up_one = __shfl_up_sync(0xFFFFFFFFU, inclusive, 1);
    const V exclusive = lane == 0 ? V{0} : up_one;
    if (lane == 31) {
        shared[warp] = inclusive;
    }
    __syncthreads();
    if (warp == 0) {
        const V warp_total = lane < (blockDim.x >> 5U) ? shared[lane] : V{0};
        const V warps_inclusive = warp_inclusive_sum(warp_total);
        const V warps_before = __shfl_up_sync(0xFFFFFFFFU, warps_inclusive, 1);
        __syncwarp();
        shared[lane] = lane == 0 ? V{0} : warps_before;
        if (lane == 31) {
            shared[32] = warps_inclusive;
        }
    }
    __syncthreads();
    const V result = warp == 0 ? exclusive : shared[warp] + exclusive;
    *total = shared[32];
    __syncthreads();
    return result;
}

}  // namespace kael::cuda
