// Fused attention in f32, flash-attention style: a block per (batch * head, 64 queries) walks
// 64-key tiles of K and V through shared memory with an online softmax, skipping tiles a causal
// mask hides, so no T x T scores reach memory; the next tiles' copies (cp.async) overlap the
// current tile's products. A few queries (decoding with a KV cache) split the keys instead
// (attention_decode.cu, f32, bf16 and f16); bf16/f16 otherwise run on tensor cores
// (attention_mma.cu). f64 and head_dim > 128 run the shared reference tasks.
#include <algorithm>
#include <cstdint>
#include <string>
#include <typeinfo>

#include "attention_mma.cuh"
#include "attention_tiles.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"

namespace kael::cuda {

namespace {

using namespace attention_tiles;
namespace tasks = kernels::tasks;

constexpr std::int64_t kDecodeQueries = 8;  // at most this many queries use the key split

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

// Whether a grid of `blocks` one-dimensional blocks can be launched.
bool fits_grid(std::int64_t blocks) {
    return blocks < (std::int64_t{1} << 31) - 1;
}

// Whether the decoding kernel (attention_decode.cu) takes the call: a few f32, bf16 or f16
// queries of at most kMaxDims, every buffer given.
bool decodes(const AttentionShape& shape, kael_dtype dtype, bool given) {
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    const std::int64_t splits = (shape.keys + kSplitKeys - 1) / kSplitKeys;
    return (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16) &&
           shape.queries <= kDecodeQueries && given && rows > 0 && shape.head_dim <= kMaxDims &&
           fits_grid(rows * splits);
}

}  // namespace

kael_status attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                      const void* k, const void* v, const kael_attention_layout* layout) {
    return plugin::guarded("cuda.attention", [&] {
        use_device(device);
        const AttentionShape shape = tasks::attention_shape("attention", dtype, layout, true);
        const std::int64_t rows = shape.batch * shape.heads * shape.queries;
        const bool given = out != nullptr && lse != nullptr && q != nullptr && k != nullptr &&
                           v != nullptr;
        if (decodes(shape, dtype, given)) {
            launch_decode(dtype, shape, out, static_cast<float*>(lse), q, k, v);
            return;
        }
        if (dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16) {
            // Tensor cores, or declined (the core then runs it in f32).
            attention_mma::attention_low_precision(dtype, shape, out, lse, q, k, v);
            return;
        }
        // Tiles (the decoding sizes that fail decodes() fail here too, for the same reason).
        const std::int64_t blocks =
            shape.batch * shape.heads * ((shape.queries + kTile - 1) / kTile);
        if (dtype != KAEL_DTYPE_F32 || shape.queries <= kDecodeQueries ||
            shape.head_dim > kMaxDims || !fits_grid(blocks) || rows == 0 || !given) {
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
        if (shape.head_dim <= 64) {
            launch_forward_tiles<1>(shape, out_f, lse_f, q_f, k_f, v_f, scale_log2, vectorized);
        } else {
            launch_forward_tiles<2>(shape, out_f, lse_f, q_f, k_f, v_f, scale_log2, vectorized);
        }
    });
}

kael_status cached_attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                             void* k, void* v, const kael_attention_layout* layout,
                             const kael_cache_append* append) {
    return plugin::guarded("cuda.cached_attention", [&] {
        use_device(device);
        if (append == nullptr || append->struct_size < sizeof(kael_cache_append) ||
            append->keys == nullptr || append->values == nullptr || layout == nullptr ||
            layout->struct_size < sizeof(kael_attention_layout) || layout->key_lengths == nullptr) {
            plugin::invalid("cached_attention: append, a layout and its key_lengths are needed");
        }
        const AttentionShape shape =
            tasks::attention_shape("cached_attention", dtype, layout, true);
        // KAEL_CUDA_FUSED_APPEND=0 declines every call (the core then stores and attends).
        static const bool fused = !env_is_zero("KAEL_CUDA_FUSED_APPEND");
        const bool given =
            out != nullptr && lse != nullptr && q != nullptr && k != nullptr && v != nullptr;
        if (!fused || !decodes(shape, dtype, given)) {
            plugin::unsupported("cached_attention stores and attends in one launch for up to " +
                                std::to_string(kDecodeQueries) + " f32, bf16 or f16 queries");
        }
        CacheAppend own;
        own.keys = append->keys;
        own.values = append->values;
        for (int i = 0; i < 3; ++i) {
            own.k[i] = append->key_strides[i];
            own.v[i] = append->value_strides[i];
        }
        own.k_cache = k;
        own.v_cache = v;
        launch_decode(dtype, shape, out, static_cast<float*>(lse), q, k, v, own);
    });
}

kael_status attention_backward(int32_t device, kael_dtype dtype, void* grad_q, void* grad_k,
                               void* grad_v, const void* grad_out, const void* q, const void* k,
                               const void* v, const void* out, const void* lse,
                               const kael_attention_layout* layout) {
    return plugin::guarded("cuda.attention_backward", [&] {
        use_device(device);
        const AttentionShape shape =
            tasks::attention_shape("attention_backward", dtype, layout, true);
        const std::int64_t pairs = shape.batch * shape.heads;
        const std::int64_t most_tiles = (std::max(shape.queries, shape.keys) + kTile - 1) / kTile;
        const bool buffers_given = grad_q != nullptr && grad_k != nullptr && grad_v != nullptr &&
                                   grad_out != nullptr && q != nullptr && k != nullptr &&
                                   v != nullptr && out != nullptr && lse != nullptr;
        if (dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16) {
            attention_mma::attention_backward_low_precision(dtype, shape, grad_q, grad_k, grad_v,
                                                            grad_out, q, k, v, out, lse);
            return;
        }
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
