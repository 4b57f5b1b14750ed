// top-k by radix select, one block per row: histograms of 8-bit digits of the keys (from the
// top) find the k-th key, then one ordered pass collects the keys before it and the first of its
// ties by position, and a rank count in shared memory puts those k in order. The row is read
// once per digit (from L2 after the first) and never sorted.
#include <cstdint>

#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "sequence_keys.cuh"
#include "topk_select.h"

namespace kael::cuda {
namespace {

constexpr int kSelectThreads = 1024;
constexpr int kDigits = 256;
constexpr int kLoadsInFlight = 8;  // keys each thread loads before it counts them
constexpr int kCollectItems = 8;   // consecutive positions per thread in the collecting pass

struct SelectRows {
    const void* data;
    void* values;
    std::int64_t* indices;
    kael_dtype dtype;
    int element_size;
    int top_shift;  // the highest digit's shift: (key bits rounded up to 8) - 8
    std::int64_t chunk_size;
    std::int64_t row_count;
    int k;
};

template <typename Key>
__global__ void __launch_bounds__(kSelectThreads) select_rows(SelectRows rows, Key inversion) {
    __shared__ unsigned histogram[kDigits];
    __shared__ Key candidate_keys[kMaxSelect];
    __shared__ int candidate_positions[kMaxSelect];
    __shared__ unsigned long long scan_space[33];
    __shared__ unsigned chosen_digit;
    __shared__ unsigned below_digit;
    __shared__ unsigned in_digit;
    const int lane = static_cast<int>(threadIdx.x & 31U);
    for (std::int64_t row = blockIdx.x; row < rows.row_count; row += gridDim.x) {
        const std::int64_t row_begin = row * rows.chunk_size;
        const auto key_at = [&](std::int64_t i) {
            return sort_key<Key>(rows.data, rows.dtype, row_begin + i) ^ inversion;
        };
        // The k-th key of the row, digit by digit: keys that agree with prefix under mask are
        // still undecided; `remaining` of them are among the k.
        Key prefix = 0;
        Key mask = 0;
        unsigned remaining = static_cast<unsigned>(rows.k);
        for (int shift = rows.top_shift; shift >= 0; shift -= 8) {
            for (int d = threadIdx.x; d < kDigits; d += blockDim.x) {
                histogram[d] = 0;
            }
            __syncthreads();
            const std::int64_t stride = std::int64_t{blockDim.x} * kLoadsInFlight;
            for (std::int64_t base = threadIdx.x; base < rows.chunk_size; base += stride) {
                Key keys[kLoadsInFlight];
#pragma unroll
                for (int u = 0; u < kLoadsInFlight; ++u) {
                    const std::int64_t i = base + std::int64_t{u} * blockDim.x;
                    keys[u] = i < rows.chunk_size ? key_at(i) : Key{0};
                }
#pragma unroll
                for (int u = 0; u < kLoadsInFlight; ++u) {
                    const std::int64_t i = base + std::int64_t{u} * blockDim.x;
                    if (i < rows.chunk_size && (keys[u] & mask) == prefix) {
                        atomicAdd(&histogram[(keys[u] >> shift) & 0xFFU], 1U);
                    }
                }
            }
            __syncthreads();
            if (threadIdx.x < 32) {
                // Lane l owns digits 8l .. 8l + 7; the lane whose span holds the remaining-th
                // undecided key picks the digit.
                unsigned span = 0;
                for (int d = 0; d < 8; ++d) {
                    span += histogram[lane * 8 + d];
                }
                const unsigned inclusive = warp_inclusive_sum(span);
                unsigned before = inclusive - span;
                if (before < remaining && remaining <= inclusive) {
                    for (int d = lane * 8;; ++d) {
                        if (remaining <= before + histogram[d]) {
                            chosen_digit = static_cast<unsigned>(d);
                            below_digit = before;
                            in_digit = histogram[d];
                            break;
                        }
                        before += histogram[d];
                    }
                }
            }
            __syncthreads();
            prefix |= static_cast<Key>(chosen_digit) << shift;
            mask |= static_cast<Key>(0xFFU) << shift;
            remaining -= below_digit;
            if (in_digit == remaining) {
                break;  // every undecided key is taken: no need to tell them apart
            }
        }
        // Collect in position order: keys below prefix (under mask), then the first `remaining`
        // keys equal to it. A taken key's slot is the number of taken keys before it. Each
        // thread takes kCollectItems consecutive positions of a tile, so one block-wide sum
        // per tile orders them.
        unsigned long long below_so_far = 0;
        unsigned long long equal_so_far = 0;
        const std::int64_t tile = std::int64_t{blockDim.x} * kCollectItems;
        for (std::int64_t base = 0; base < rows.chunk_size; base += tile) {
            const std::int64_t first = base + std::int64_t{threadIdx.x} * kCollectItems;
            Key keys[kCollectItems];
            unsigned below = 0;  // bit u: position first + u is below prefix
            unsigned equal = 0;
#pragma unroll
            for (int u = 0; u < kCollectItems; ++u) {
                keys[u] = first + u < rows.chunk_size ? key_at(first + u) : Key{0};
            }
#pragma unroll
            for (int u = 0; u < kCollectItems; ++u) {
                const Key masked = keys[u] & mask;
                if (first + u < rows.chunk_size) {
                    below |= masked < prefix ? 1U << u : 0U;
                    equal |= masked == prefix ? 1U << u : 0U;
                }
            }
            const unsigned long long counts =
                __popc(below) | static_cast<unsigned long long>(__popc(equal)) << 32;
            unsigned long long tile_total;
            const unsigned long long before = block_exclusive_sum(counts, scan_space, &tile_total);
            unsigned long long below_before = below_so_far + (before & 0xFFFFFFFFULL);
            unsigned long long equal_before = equal_so_far + (before >> 32);
#pragma unroll
            for (int u = 0; u < kCollectItems; ++u) {
                const bool is_below = ((below >> u) & 1U) != 0;
                const bool is_equal = ((equal >> u) & 1U) != 0;
                if (is_below || (is_equal && equal_before < remaining)) {
                    const unsigned long long slot =
                        below_before + (equal_before < remaining ? equal_before : remaining);
                    candidate_keys[slot] = keys[u];
                    candidate_positions[slot] = static_cast<int>(first + u);
                }
                below_before += is_below ? 1 : 0;
                equal_before += is_equal ? 1 : 0;
            }
            below_so_far += tile_total & 0xFFFFFFFFULL;
            equal_so_far += tile_total >> 32;
            if (below_so_far + (equal_so_far < remaining ? equal_so_far : remaining) ==
                static_cast<unsigned long long>(rows.k)) {
                break;  // the same on every thread: the k are all collected
            }
        }
        __syncthreads();
        // Slots are in position order, so a key's rank is the count of smaller keys plus its
        // equals in earlier slots.
        for (int c = threadIdx.x; c < rows.k; c += blockDim.x) {
            const Key key = candidate_keys[c];
            int rank = 0;
            for (int j = 0; j < rows.k; ++j) {
                const Key other = candidate_keys[j];
                rank += (other < key || (other == key && j < c)) ? 1 : 0;
            }
            const int position = candidate_positions[c];
            const std::int64_t out = row * rows.k + rank;
            copy_element(rows.values, out, rows.data, row_begin + position, rows.element_size);
            rows.indices[out] = position;
        }
        __syncthreads();
    }
}

}  // namespace

void launch_topk_select(kael_dtype dtype, void* values, std::int64_t* indices, const void* data,
                        std::int64_t chunk_size, std::int64_t row_count, std::int64_t k,
                        bool largest) {
    const SelectRows rows{data,
                          values,
                          indices,
                          dtype,
                          static_cast<int>(kernels::dtype_size(dtype)),
                          (key_bits(dtype) + 7) / 8 * 8 - 8,
                          chunk_size,
                          row_count,
                          static_cast<int>(k)};
    const auto launch = [&](auto kernel, auto key) {
        const int blocks =
            grid_blocks(reinterpret_cast<const void*>(kernel), row_count, kSelectThreads);
        // Selecting the k smallest keys: largest inverts them, as sort's descending does.
        kernel<<<blocks, kSelectThreads, 0, launch_stream()>>>(
            rows, largest ? key_inversion<decltype(key)>(dtype) : decltype(key){0});
        check_launch(typeid(kernel), __FILE__, __LINE__);
    };
    if (wide_keys(dtype)) {
        launch(&select_rows<std::uint64_t>, std::uint64_t{0});
    } else {
        launch(&select_rows<std::uint32_t>, std::uint32_t{0});
    }
}

}  // namespace kael::cuda
