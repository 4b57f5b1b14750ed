// Attention for a few queries (decoding with a KV cache), in f32, bf16 or f16 (computed in
// f32): the keys are split instead of the queries, a block per (row, 128 keys) giving a partial
// softmax in the log2 domain, then one warp per row merges the splits into out and lse (f32).
// A bf16 cache is read as it is, never widened: decoding reads the whole cache every token.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <typeinfo>

#include "attention_tiles.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "element_cast.cuh"

namespace kael::cuda::attention_tiles {

namespace {

namespace tasks = kernels::tasks;

// Four elements from 16 (f32) or 8 (bf16, f16) aligned bytes.
__device__ inline float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
template <typename E>
__device__ inline float4 load4(const E* p) {
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    E parts[4];
    std::memcpy(parts, &raw, sizeof raw);
    return make_float4(as<float>(parts[0]), as<float>(parts[1]), as<float>(parts[2]), as<float>(parts[3]));
}

__device__ float block_reduce(float value, float* scratch, bool maximum) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_xor_sync(0xffffffffU, value, offset);
        value = maximum ? fmaxf(value, other) : value + other;
    }
    __syncthreads();  // scratch may still be read from a previous call
    if (lane == 0) {
        scratch[warp] = value;
    }
    __syncthreads();
    value = scratch[0];
    for (int w = 1; w < kSplitKeys / 32; ++w) {
        value = maximum ? fmaxf(value, scratch[w]) : value + scratch[w];
    }
    return value;
}

// One query row's softmax over one split of kSplitKeys keys: partial (top, sum, sums[dims])
// in the log2 domain, into partials[(row * splits + split) * (kMaxDims + 2)].
template <typename E>
__global__ void __launch_bounds__(kSplitKeys)
    attention_decode_split(AttentionShape shape, float* partials, std::int64_t splits,
                           const E* q, const E* k, const E* v, float scale_log2,
                           bool vectorized) {
    __shared__ float query_row[kMaxDims];
    __shared__ float weights[kSplitKeys];
    __shared__ float scratch[kSplitKeys / 32];
    __shared__ float4 mixed[kSplitKeys];
    const std::int64_t row = blockIdx.x / splits;
    const std::int64_t split = blockIdx.x % splits;
    const std::int64_t bh = row / shape.queries;
    const std::int64_t query = row % shape.queries;
    const int t = static_cast<int>(threadIdx.x);
    const int dims = static_cast<int>(shape.head_dim);
    const E* q_row = q + AttentionShape::at(shape.q, bh, shape.heads, query);
    for (int e = t; e < kMaxDims; e += kSplitKeys) {
        query_row[e] = e < dims ? as<float>(q_row[e]) : 0.F;
    }
    __syncthreads();
    const std::int64_t k0 = split * kSplitKeys;
    const std::int64_t key = k0 + t;
    const std::int64_t filled = shape.filled_keys(bh);  // keys past it are never read
    const bool seen = key < shape.visible_keys(query, filled);
    float score = -INFINITY;
    if (seen) {
        const E* k_row = k + AttentionShape::at(shape.k, bh, shape.heads, key);
        float dot = 0.F;
        if (vectorized) {
            // Unrolled, so a key row's loads are in flight together, not one after another.
#pragma unroll 8
            for (int e = 0; e < dims; e += 4) {
                const float4 four = load4(k_row + e);
                dot = fmaf(query_row[e], four.x, dot);
                dot = fmaf(query_row[e + 1], four.y, dot);
                dot = fmaf(query_row[e + 2], four.z, dot);
                dot = fmaf(query_row[e + 3], four.w, dot);
            }
        } else {
            for (int e = 0; e < dims; ++e) {
                dot = fmaf(query_row[e], as<float>(k_row[e]), dot);
            }
        }
        score = dot * scale_log2;
    }
    const float top = block_reduce(score, scratch, true);
    const float p = seen ? exp2f(score - top) : 0.F;
    const float total = block_reduce(p, scratch, false);
    weights[t] = p;
    __syncthreads();
    float* partial = partials + (row * splits + split) * (kMaxDims + 2);
    if (t == 0) {
        partial[0] = top;
        partial[1] = total;
    }
    const std::int64_t count = tasks::min_of(kSplitKeys, filled - k0);
    const E* v_rows = v + AttentionShape::at(shape.v, bh, shape.heads, k0);
    if (vectorized) {
        // Every thread takes a 16-byte pack of V's columns for every groups-th key, so the
        // keys' loads overlap; the groups' sums then meet in shared memory.
        const int packs = dims / 4;
        const int groups = kSplitKeys / packs;
        const int group = t / packs;
        const int pack = t % packs;
        float4 sum = make_float4(0.F, 0.F, 0.F, 0.F);
        if (group < groups) {
#pragma unroll 4
            for (std::int64_t j = group; j < count; j += groups) {
                const float4 value = load4(v_rows + j * shape.v[2] + pack * 4);
                scale_add(sum, weights[j], value);
            }
        }
        mixed[t] = sum;
        __syncthreads();
        if (t < packs) {
            float4 total = mixed[t];
            for (int g = 1; g < groups; ++g) {
                const float4 other = mixed[g * packs + t];
                total.x += other.x;
                total.y += other.y;
                total.z += other.z;
                total.w += other.w;
            }
            partial[2 + 4 * t] = total.x;
            partial[3 + 4 * t] = total.y;
            partial[4 + 4 * t] = total.z;
            partial[5 + 4 * t] = total.w;
        }
        return;
    }
    for (int e = t; e < dims; e += kSplitKeys) {
        float sum = 0.F;
#pragma unroll 8
        for (std::int64_t j = 0; j < count; ++j) {
            sum = fmaf(weights[j], as<float>(v_rows[j * shape.v[2] + e]), sum);
        }
        partial[2 + e] = sum;
    }
}

// One warp per query row merges the splits' partials into out and lse.
template <typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    attention_decode_merge(AttentionShape shape, E* out, float* lse, const float* partials,
                           std::int64_t splits, std::int64_t rows) {
    const std::int64_t row =
        (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (row >= rows) {
        return;
    }
    const float* row_partials = partials + row * splits * (kMaxDims + 2);
    // Lanes read the splits' maxima and sums side by side (a warp's loads in flight at once).
    float top = -INFINITY;
    for (std::int64_t s = lane; s < splits; s += 32) {
        top = fmaxf(top, row_partials[s * (kMaxDims + 2)]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        top = fmaxf(top, __shfl_xor_sync(0xffffffffU, top, offset));
    }
    const float shift = top == -INFINITY ? 0.F : top;
    float total = 0.F;
    for (std::int64_t s = lane; s < splits; s += 32) {
        total +=
            row_partials[s * (kMaxDims + 2) + 1] * exp2f(row_partials[s * (kMaxDims + 2)] - shift);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        total += __shfl_xor_sync(0xffffffffU, total, offset);
    }
    const std::int64_t bh = row / shape.queries;
    const std::int64_t query = row % shape.queries;
    E* out_row = out + AttentionShape::at(shape.out, bh, shape.heads, query);
    const float inverse = total == 0.F ? NAN : 1.F / total;
    for (int e = lane; e < shape.head_dim; e += 32) {
        float sum = 0.F;
#pragma unroll 8
        for (std::int64_t s = 0; s < splits; ++s) {
            const float* partial = row_partials + s * (kMaxDims + 2);
            sum += partial[2 + e] * exp2f(partial[0] - shift);
        }
        out_row[e] = as<E>(sum * inverse);
    }
    if (lane == 0) {
        lse[row] = (top + log2f(total)) * kLn2;
    }
}


template <typename E>
void launch(const AttentionShape& shape, void* out_data, float* lse, const void* q_data,
            const void* k_data, const void* v_data, bool vectorized) {
    auto* const out = static_cast<E*>(out_data);
    const auto* const q = static_cast<const E*>(q_data);
    const auto* const k = static_cast<const E*>(k_data);
    const auto* const v = static_cast<const E*>(v_data);
    const auto scale_log2 = static_cast<float>(shape.scale * 1.4426950408889634);
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    const std::int64_t splits = (shape.keys + kSplitKeys - 1) / kSplitKeys;
    float* const partials =
        static_cast<float*>(device_malloc(rows * splits * (kMaxDims + 2) * std::int64_t{4}));
    attention_decode_split<E><<<static_cast<unsigned>(rows * splits), kSplitKeys, 0,
                                launch_stream()>>>(shape, partials, splits, q, k, v, scale_log2,
                                                   vectorized);
    check_launch(typeid(&attention_decode_split<E>), __FILE__, __LINE__);
    attention_decode_merge<E><<<static_cast<unsigned>(blocks_for(rows, kThreadsPerBlock / 32)),
                                kThreadsPerBlock, 0, launch_stream()>>>(shape, out, lse, partials,
                                                                        splits, rows);
    check_launch(typeid(&attention_decode_merge<E>), __FILE__, __LINE__);
    device_free(partials);  // stream-ordered: after the merge
}

}  // namespace

void launch_decode(kael_dtype dtype, const AttentionShape& shape, void* out, float* lse,
                   const void* q, const void* k, const void* v) {
    const void* const buffers[] = {out, q, k, v};
    const bool vectorized = aligned_for_vectors(shape, buffers, 4);
    if (dtype == KAEL_DTYPE_BF16) {
        launch<__nv_bfloat16>(shape, out, lse, q, k, v, vectorized);
    } else if (dtype == KAEL_DTYPE_F16) {
        launch<__half>(shape, out, lse, q, k, v, vectorized);
    } else {
        launch<float>(shape, out, lse, q, k, v, vectorized);
    }
}

}  // namespace kael::cuda::attention_tiles
