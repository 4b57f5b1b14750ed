// Fused attention in f32, flash-attention style: a block per (batch * head, 64 queries) walks
// 64-key tiles of K and V through shared memory with an online softmax, skipping tiles a causal
// mask hides, so no T x T scores reach memory; the next tiles' copies (cp.async) overlap the
// current tile's products. A few queries (decoding with a KV cache) split
// the keys instead: a block per (row, 128 keys), then one warp per row merges the splits.
// f64 and head_dim > 128 run the shared reference tasks.
#include <algorithm>
#include <cstdint>
#include <typeinfo>

#include "attention_tiles.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"

namespace kael::cuda {

namespace {

using namespace attention_tiles;
namespace tasks = kernels::tasks;

constexpr std::int64_t kDecodeQueries = 8;  // at most this many queries use the key split
constexpr int kSplitKeys = 128;             // keys per decoding block, one per thread
constexpr int kMaxDims = 128;

template <int kGroups>
__global__ void __launch_bounds__(kThreads, 2)
    attention_forward_tiles(AttentionShape shape, float* out, float* lse, const float* q,
                            const float* k, const float* v, float scale_log2, bool vectorized) {
    using T = Tile<kGroups>;
    extern __shared__ float4 shared_memory[];
    // Two K and two V tiles: with 16-byte operands the next pair's copies fly during this one.
    float* const q_tile = reinterpret_cast<float*>(shared_memory);
    float* const k_tiles = q_tile + T::kFloats;
    float* const v_tiles = k_tiles + 2 * T::kFloats;
    float* const p_tile = v_tiles + 2 * T::kFloats;
    // Each tile row's visible key count, in shared memory rather than 8 registers a thread.
    auto* const visible = reinterpret_cast<std::int64_t*>(p_tile + kScoreFloats);

    const std::int64_t pairs = shape.batch * shape.heads;
    const std::int64_t tiles = (shape.queries + kTile - 1) / kTile;
    // The last query tiles see the most keys under a causal mask: they start first.
    const std::int64_t bh = blockIdx.x % pairs;
    const std::int64_t q0 = (tiles - 1 - blockIdx.x / pairs) * kTile;
    const int ty = thread_row();
    const int tx = thread_column();
    const int dims = static_cast<int>(shape.head_dim);

    load_tile<kGroups>(q_tile, q + AttentionShape::at(shape.q, bh, shape.heads, 0), shape.q[2], q0,
                       shape.queries, dims, vectorized);
    const std::int64_t last_query = tasks::min_of(q0 + kTile, shape.queries) - 1;
    const std::int64_t filled = shape.filled_keys(bh);  // keys past it are never read
    const std::int64_t key_end = shape.visible_keys(last_query, filled);
    if (threadIdx.x < kTile) {
        visible[threadIdx.x] = shape.visible_keys(q0 + threadIdx.x, filled);
    }
    float top[4];
    float partial_sum[4];
    float4 sums[4][kGroups];
    clear(sums);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        top[i] = -INFINITY;
        partial_sum[i] = 0.F;
    }
    const float* k_head = k + AttentionShape::at(shape.k, bh, shape.heads, 0);
    const float* v_head = v + AttentionShape::at(shape.v, bh, shape.heads, 0);
    if (vectorized && key_end > 0) {
        load_tile_async<kGroups>(k_tiles, k_head, shape.k[2], 0, filled, dims);
        load_tile_async<kGroups>(v_tiles, v_head, shape.v[2], 0, filled, dims);
        __pipeline_commit();
    }
    for (std::int64_t k0 = 0; k0 < key_end; k0 += kTile) {
        const int buffer = static_cast<int>(k0 / kTile) % 2;
        float* const k_tile = k_tiles + buffer * T::kFloats;
        float* const v_tile = v_tiles + buffer * T::kFloats;
        __syncthreads();  // the previous tile's readers are done, so its buffers may refill
        if (!vectorized) {
            load_tile<kGroups>(k_tile, k_head, shape.k[2], k0, filled, dims, false);
            load_tile<kGroups>(v_tile, v_head, shape.v[2], k0, filled, dims, false);
        } else if (k0 + kTile < key_end) {
            const int next = 1 - buffer;
            load_tile_async<kGroups>(k_tiles + next * T::kFloats, k_head, shape.k[2], k0 + kTile,
                                     filled, dims);
            load_tile_async<kGroups>(v_tiles + next * T::kFloats, v_head, shape.v[2], k0 + kTile,
                                     filled, dims);
            __pipeline_commit();
            __pipeline_wait_prior(1);  // this tile's copies are in; the next pair's may fly
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        float scores[4][4];
        tile_dots<kGroups>(q_tile, k_tile, scores);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float tile_top = -INFINITY;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const bool seen = k0 + tx + 16 * j < visible[ty * 4 + i];
                scores[i][j] = seen ? scores[i][j] * scale_log2 : -INFINITY;
                tile_top = fmaxf(tile_top, scores[i][j]);
            }
#pragma unroll
            for (int offset = 8; offset > 0; offset /= 2) {
                tile_top = fmaxf(tile_top, __shfl_xor_sync(0xffffffffU, tile_top, offset));
            }
            const float new_top = fmaxf(top[i], tile_top);
            // A row that has seen no key yet keeps zeros (no -inf - -inf).
            const float shift = new_top == -INFINITY ? 0.F : new_top;
            const float rescale = exp2f(top[i] - shift);
            top[i] = new_top;
            float row_sum = 0.F;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                scores[i][j] = exp2f(scores[i][j] - shift);
                row_sum += scores[i][j];
            }
            partial_sum[i] = partial_sum[i] * rescale + row_sum;
#pragma unroll
            for (int g = 0; g < kGroups; ++g) {
                sums[i][g].x *= rescale;
                sums[i][g].y *= rescale;
                sums[i][g].z *= rescale;
                sums[i][g].w *= rescale;
            }
        }
        store_scores(p_tile, scores);
        __syncthreads();
        tile_mix<kGroups>(p_tile, v_tile, sums);
    }
    float inverse[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float total = partial_sum[i];
#pragma unroll
        for (int offset = 8; offset > 0; offset /= 2) {
            total += __shfl_xor_sync(0xffffffffU, total, offset);
        }
        inverse[i] = 1.F / total;  // no key seen: 0 * inf = NaN, as the reference
        const std::int64_t query = q0 + ty * 4 + i;
        if (tx == 0 && query < shape.queries) {
            lse[bh * shape.queries + query] = (top[i] + log2f(total)) * kLn2;
        }
        if (total == 0.F) {
            inverse[i] = NAN;
        }
    }
    store_rows<kGroups>(out + AttentionShape::at(shape.out, bh, shape.heads, 0), shape.out[2], q0,
                        shape.queries, dims, vectorized, sums, inverse);
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
__global__ void __launch_bounds__(kSplitKeys)
    attention_decode_split(AttentionShape shape, float* partials, std::int64_t splits,
                           const float* q, const float* k, const float* v, float scale_log2,
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
    const float* q_row = q + AttentionShape::at(shape.q, bh, shape.heads, query);
    for (int e = t; e < kMaxDims; e += kSplitKeys) {
        query_row[e] = e < dims ? q_row[e] : 0.F;
    }
    __syncthreads();
    const std::int64_t k0 = split * kSplitKeys;
    const std::int64_t key = k0 + t;
    const std::int64_t filled = shape.filled_keys(bh);  // keys past it are never read
    const bool seen = key < shape.visible_keys(query, filled);
    float score = -INFINITY;
    if (seen) {
        const float* k_row = k + AttentionShape::at(shape.k, bh, shape.heads, key);
        float dot = 0.F;
        if (vectorized) {
            // Unrolled, so a key row's loads are in flight together, not one after another.
#pragma unroll 8
            for (int e = 0; e < dims; e += 4) {
                const float4 four = *reinterpret_cast<const float4*>(k_row + e);
                dot = fmaf(query_row[e], four.x, dot);
                dot = fmaf(query_row[e + 1], four.y, dot);
                dot = fmaf(query_row[e + 2], four.z, dot);
                dot = fmaf(query_row[e + 3], four.w, dot);
            }
        } else {
            for (int e = 0; e < dims; ++e) {
                dot = fmaf(query_row[e], k_row[e], dot);
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
    const float* v_rows = v + AttentionShape::at(shape.v, bh, shape.heads, k0);
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
                const float4 value =
                    *reinterpret_cast<const float4*>(v_rows + j * shape.v[2] + pack * 4);
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
            sum = fmaf(weights[j], v_rows[j * shape.v[2] + e], sum);
        }
        partial[2 + e] = sum;
    }
}

// One warp per query row merges the splits' partials into out and lse.
__global__ void __launch_bounds__(kThreadsPerBlock)
    attention_decode_merge(AttentionShape shape, float* out, float* lse, const float* partials,
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
    float* out_row = out + AttentionShape::at(shape.out, bh, shape.heads, query);
    const float inverse = total == 0.F ? NAN : 1.F / total;
    for (int e = lane; e < shape.head_dim; e += 32) {
        float sum = 0.F;
#pragma unroll 8
        for (std::int64_t s = 0; s < splits; ++s) {
            const float* partial = row_partials + s * (kMaxDims + 2);
            sum += partial[2 + e] * exp2f(partial[0] - shift);
        }
        out_row[e] = sum * inverse;
    }
    if (lane == 0) {
        lse[row] = (top + log2f(total)) * kLn2;
    }
}

template <int kGroups>
void launch_forward_tiles(const AttentionShape& shape, float* out, float* lse, const float* q,
                          const float* k, const float* v, float scale_log2, bool vectorized) {
    const auto kernel = &attention_forward_tiles<kGroups>;
    const int bytes = static_cast<int>((5 * Tile<kGroups>::kFloats + kScoreFloats) * sizeof(float) +
                                       kTile * sizeof(std::int64_t));
    allow_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
    const std::int64_t blocks = shape.batch * shape.heads * ((shape.queries + kTile - 1) / kTile);
    kernel<<<static_cast<unsigned>(blocks), kThreads, bytes, launch_stream()>>>(
        shape, out, lse, q, k, v, scale_log2, vectorized);
    check_launch(typeid(kernel), __FILE__, __LINE__);
}

void launch_decode(const AttentionShape& shape, float* out, float* lse, const float* q,
                   const float* k, const float* v, float scale_log2, bool vectorized) {
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    const std::int64_t splits = (shape.keys + kSplitKeys - 1) / kSplitKeys;
    float* const partials =
        static_cast<float*>(device_malloc(rows * splits * (kMaxDims + 2) * std::int64_t{4}));
    attention_decode_split<<<static_cast<unsigned>(rows * splits), kSplitKeys, 0,
                             launch_stream()>>>(shape, partials, splits, q, k, v, scale_log2,
                                                vectorized);
    check_launch(typeid(&attention_decode_split), __FILE__, __LINE__);
    attention_decode_merge<<<static_cast<unsigned>(blocks_for(rows, kThreadsPerBlock / 32)),
                             kThreadsPerBlock, 0, launch_stream()>>>(shape, out, lse, partials,
                                                                     splits, rows);
    check_launch(typeid(&attention_decode_merge), __FILE__, __LINE__);
    device_free(partials);  // stream-ordered: after the merge
}

// Whether a grid of `blocks` one-dimensional blocks can be launched.
bool fits_grid(std::int64_t blocks) {
    return blocks < (std::int64_t{1} << 31) - 1;
}

}  // namespace

kael_status attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                      const void* k, const void* v, const kael_attention_layout* layout) {
    return plugin::guarded("cuda.attention", [&] {
        use_device(device);
        const AttentionShape shape = tasks::attention_shape("attention", dtype, layout);
        const std::int64_t rows = shape.batch * shape.heads * shape.queries;
        const std::int64_t splits = (shape.keys + kSplitKeys - 1) / kSplitKeys;
        const bool decode = shape.queries <= kDecodeQueries;
        const std::int64_t blocks =
            decode ? rows * splits
                   : shape.batch * shape.heads * ((shape.queries + kTile - 1) / kTile);
        if (dtype != KAEL_DTYPE_F32 || shape.head_dim > kMaxDims || !fits_grid(blocks) ||
            rows == 0 || out == nullptr || lse == nullptr || q == nullptr || k == nullptr ||
            v == nullptr) {
            tasks::launch_attention<Launcher>(dtype, out, lse, q, k, v, layout);
            return;
        }
        const auto scale_log2 = static_cast<float>(shape.scale * 1.4426950408889634);
        auto* const out_f = static_cast<float*>(out);
        auto* const lse_f = static_cast<float*>(lse);
        const auto* const q_f = static_cast<const float*>(q);
        const auto* const k_f = static_cast<const float*>(k);
        const auto* const v_f = static_cast<const float*>(v);
        const void* const buffers[] = {out, q, k, v};
        const bool vectorized = aligned_for_vectors(shape, buffers, 4);
        if (decode) {
            launch_decode(shape, out_f, lse_f, q_f, k_f, v_f, scale_log2, vectorized);
            return;
        }
        if (shape.head_dim <= 64) {
            launch_forward_tiles<1>(shape, out_f, lse_f, q_f, k_f, v_f, scale_log2, vectorized);
        } else {
            launch_forward_tiles<2>(shape, out_f, lse_f, q_f, k_f, v_f, scale_log2, vectorized);
        }
    });
}

kael_status attention_backward(int32_t device, kael_dtype dtype, void* grad_q, void* grad_k,
                               void* grad_v, const void* grad_out, const void* q, const void* k,
                               const void* v, const void* out, const void* lse,
                               const kael_attention_layout* layout) {
    return plugin::guarded("cuda.attention_backward", [&] {
        use_device(device);
        const AttentionShape shape = tasks::attention_shape("attention_backward", dtype, layout);
        const std::int64_t pairs = shape.batch * shape.heads;
        const std::int64_t most_tiles = (std::max(shape.queries, shape.keys) + kTile - 1) / kTile;
        const bool buffers_given = grad_q != nullptr && grad_k != nullptr && grad_v != nullptr &&
                                   grad_out != nullptr && q != nullptr && k != nullptr &&
                                   v != nullptr && out != nullptr && lse != nullptr;
        if (dtype != KAEL_DTYPE_F32 || shape.head_dim > kMaxDims ||
            !fits_grid(pairs * most_tiles) || pairs * shape.keys == 0 || shape.queries == 0 ||
            !buffers_given) {
            tasks::launch_attention_backward<Launcher>(dtype, grad_q, grad_k, grad_v, grad_out, q,
                                                       k, v, out, lse, layout);
            return;
        }
        attention_backward_f32(shape, static_cast<float*>(grad_q), static_cast<float*>(grad_k),
                               static_cast<float*>(grad_v), static_cast<const float*>(grad_out),
                               static_cast<const float*>(q), static_cast<const float*>(k),
                               static_cast<const float*>(v), static_cast<const float*>(out),
                               static_cast<const float*>(lse));
    });
}

}  // namespace kael::cuda
