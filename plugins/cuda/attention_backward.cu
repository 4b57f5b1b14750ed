// The f32 attention backward, FlashAttention-2 style: D_i = grad_out_i . out_i per query row
// first; then a block per (batch * head, 64 keys) walks the query tiles that see its keys,
// recomputing P from q, k and lse, accumulates grad_k and grad_v in registers and adds each
// query tile's share of grad_q by atomics (16-byte ones on sm_90): straight into grad_q, which
// the D pass zeroes, when every operand takes 16-byte accesses; else into an f32 scratch that a
// last pass scales into grad_q's layout. grad_k and grad_v repeat run to run; grad_q may
// differ in the last bits (the order of the atomic adds), as PyTorch's does.
#include <cstdint>
#include <typeinfo>

#include "attention_tiles.cuh"
#include "cuda_launch.cuh"

namespace kael::cuda::attention_tiles {
namespace {

namespace tasks = kernels::tasks;

// Lanes per query row in the row kernels below: 16 when 16-byte loads cover a row of at most
// 64 dims (two rows a warp), else 32 (a warp a row, one element a lane at a time).
__host__ __device__ inline int lanes_per_row(const AttentionShape& shape, bool vectorized) {
    return vectorized && shape.head_dim <= 64 ? 16 : 32;
}

// row_dots[row] = grad_out_row . out_row; with 16-byte operands it also zeroes the row of grad_q
// that the gradient kernel then adds into. Every lane of a warp reaches the shuffles.
__global__ void __launch_bounds__(kThreadsPerBlock)
    attention_row_dots(AttentionShape shape, float* row_dots, float* grad_q, const float* grad_out,
                       const float* out, std::int64_t rows, bool vectorized) {
    const int lanes = lanes_per_row(shape, vectorized);
    const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    const std::int64_t row = thread / lanes;
    const int lane = static_cast<int>(thread % lanes);
    float sum = 0.F;
    if (row < rows) {
        const std::int64_t offset =
            AttentionShape::at(shape.out, row / shape.queries, shape.heads, row % shape.queries);
        if (vectorized) {
            float* const zeroed = grad_q + AttentionShape::at(shape.q, row / shape.queries,
                                                              shape.heads, row % shape.queries);
            for (int e = lane * 4; e < shape.head_dim; e += lanes * 4) {
                *reinterpret_cast<float4*>(zeroed + e) = make_float4(0.F, 0.F, 0.F, 0.F);
            }
        }
        if (lanes == 16) {
            for (int e = lane * 4; e < shape.head_dim; e += 64) {
                const float4 g = *reinterpret_cast<const float4*>(grad_out + offset + e);
                const float4 o = *reinterpret_cast<const float4*>(out + offset + e);
                sum = fmaf(g.x, o.x, fmaf(g.y, o.y, fmaf(g.z, o.z, fmaf(g.w, o.w, sum))));
            }
        } else {
            for (int e = lane; e < shape.head_dim; e += 32) {
                sum = fmaf(grad_out[offset + e], out[offset + e], sum);
            }
        }
    }
    for (int step = lanes / 2; step > 0; step /= 2) {
        sum += __shfl_xor_sync(0xffffffffU, sum, step);
    }
    if (row < rows && lane == 0) {
        row_dots[row] = sum;
    }
}

// Per-query lse and D for the 64 rows of a query tile; zeros past the end. async: as cp.async
// copies the caller commits (the 16-byte-operand path), else plain loads.
__device__ void load_row_stats(float* lse_tile, float* dots_tile, const float* lse,
                               const float* row_dots, std::int64_t row0, std::int64_t q0,
                               std::int64_t queries, bool async) {
    const int t = static_cast<int>(threadIdx.x);
    if (t < kTile) {
        const bool inside = q0 + t < queries;
        const std::int64_t at = inside ? row0 + q0 + t : 0;
        if (async) {
            __pipeline_memcpy_async(lse_tile + t, lse + at, 4, inside ? 0 : 4);
            __pipeline_memcpy_async(dots_tile + t, row_dots + at, 4, inside ? 0 : 4);
        } else {
            lse_tile[t] = inside ? lse[at] : 0.F;
            dots_tile[t] = inside ? row_dots[at] : 0.F;
        }
    }
}

// Adds a thread's sums (times factor) into rows first + ty * 4 + i (below limit): row r at
// rows + r * row_stride, dims below dims.
template <int kGroups>
__device__ void add_rows(float* rows, std::int64_t row_stride, int dims, float factor,
                         std::int64_t first, std::int64_t limit, const float4 (&sums)[4][kGroups]) {
    for_owned_rows<kGroups>(first, limit, [&](int i, int g, std::int64_t token, int dim) {
        if (dim >= dims) {
            return;
        }
        float* target = rows + token * row_stride + dim;
        const float4 s = sums[i][g];
        const float4 value = make_float4(factor * s.x, factor * s.y, factor * s.z, factor * s.w);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        atomicAdd(reinterpret_cast<float4*>(target), value);
#else
        atomicAdd(target, value.x);
        atomicAdd(target + 1, value.y);
        atomicAdd(target + 2, value.z);
        atomicAdd(target + 3, value.w);
#endif
    });
}

// grad_q = scale * the scratch rows, one warp per query row, into grad_q's strides (the path
// of operands without 16-byte accesses).
__global__ void __launch_bounds__(kThreadsPerBlock)
    attention_store_grad_queries(AttentionShape shape, float* grad_q, const float* query_sums,
                                 int padded_dims, std::int64_t rows) {
    const std::int64_t row =
        (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (row >= rows) {
        return;
    }
    float* target =
        grad_q + AttentionShape::at(shape.q, row / shape.queries, shape.heads, row % shape.queries);
    const auto scale = static_cast<float>(shape.scale);
    for (int e = lane; e < shape.head_dim; e += 32) {
        target[e] = scale * query_sums[row * padded_dims + e];
    }
}

template <int kGroups>
__global__ void __launch_bounds__(kThreads, kGroups == 1 ? 2 : 1)
    attention_grad_keys(AttentionShape shape, float* grad_k, float* grad_v, float* grad_q,
                        float* query_sums, const float* grad_out, const float* q, const float* k,
                        const float* v, const float* lse, const float* row_dots, float scale_log2,
                        bool vectorized) {
    using T = Tile<kGroups>;
    extern __shared__ float4 shared_memory[];
    float* const k_tile = reinterpret_cast<float*>(shared_memory);
    float* const v_tile = k_tile + T::kFloats;
    float* const q_tile = v_tile + T::kFloats;
    float* const g_tile = q_tile + T::kFloats;  // grad_out rows
    float* const p_tile = g_tile + T::kFloats;  // P^T: key rows, query columns
    float* const ds_tile = p_tile + kScoreFloats;
    float* const lse_tile = ds_tile + kScoreFloats;
    float* const dots_tile = lse_tile + kTile;

    const std::int64_t pairs = shape.batch * shape.heads;
    // Under a causal mask the first key tiles are seen by the most queries: they start first.
    const std::int64_t bh = blockIdx.x % pairs;
    const std::int64_t k0 = (blockIdx.x / pairs) * kTile;
    const int ty = thread_row();
    const int tx = thread_column();
    const int dims = static_cast<int>(shape.head_dim);
    const std::int64_t row0 = bh * shape.queries;

    load_tile<kGroups>(k_tile, k + AttentionShape::at(shape.k, bh, shape.heads, 0), shape.k[2], k0,
                       shape.keys, dims, vectorized);
    load_tile<kGroups>(v_tile, v + AttentionShape::at(shape.v, bh, shape.heads, 0), shape.v[2], k0,
                       shape.keys, dims, vectorized);
    const float* q_head = q + AttentionShape::at(shape.q, bh, shape.heads, 0);
    const float* g_head = grad_out + AttentionShape::at(shape.out, bh, shape.heads, 0);
    float4 k_sums[4][kGroups];
    float4 v_sums[4][kGroups];
    clear(k_sums);
    clear(v_sums);
    // With 16-byte operands, a query tile's q, grad_out and row stats are cp.async copies issued
    // once the previous tile's products are done with them, landing during its grad_q share.
    const auto issue_query_tile = [&](std::int64_t q0) {
        load_tile_async<kGroups>(q_tile, q_head, shape.q[2], q0, shape.queries, dims);
        load_tile_async<kGroups>(g_tile, g_head, shape.out[2], q0, shape.queries, dims);
        load_row_stats(lse_tile, dots_tile, lse, row_dots, row0, q0, shape.queries, true);
        __pipeline_commit();
    };
    const std::int64_t q_first = (shape.first_query(k0) / kTile) * kTile;
    if (vectorized && q_first < shape.queries) {
        issue_query_tile(q_first);
    }
    // Pair (key k0 + r, query q0 + c) is seen when c < queries_left, r < keys_left and
    // r - c <= causal_limit: small ints, not the 64-bit visible_keys per score.
    const int keys_left = static_cast<int>(tasks::min_of(shape.keys - k0, kTile));
    for (std::int64_t q0 = q_first; q0 < shape.queries; q0 += kTile) {
        if (vectorized) {
            __pipeline_wait_prior(0);
        } else {
            __syncthreads();  // the previous query tile's readers are done
            load_tile<kGroups>(q_tile, q_head, shape.q[2], q0, shape.queries, dims, false);
            load_tile<kGroups>(g_tile, g_head, shape.out[2], q0, shape.queries, dims, false);
            load_row_stats(lse_tile, dots_tile, lse, row_dots, row0, q0, shape.queries, false);
        }
        __syncthreads();  // this tile is in, and the previous tile's ds readers are done
        const int queries_left = static_cast<int>(tasks::min_of(shape.queries - q0, kTile));
        const std::int64_t offset = q0 - k0 + shape.keys - shape.queries;
        const int causal_limit = !shape.causal ? kTile
                                               : static_cast<int>(offset < -kTile  ? -kTile - 1
                                                                  : offset > kTile ? kTile
                                                                                   : offset);
        float p[4][4];
        float dp[4][4];
        tile_dots<kGroups>(k_tile, q_tile, p);   // S^T
        tile_dots<kGroups>(v_tile, g_tile, dp);  // dP^T = v . grad_out
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = ty * 4 + i;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int column = tx + 16 * j;
                const bool seen =
                    column < queries_left && row < keys_left && row - column <= causal_limit;
                // Only pairs the mask shows: a query that sees no key has D = NaN.
                p[i][j] = seen ? exp2f(p[i][j] * scale_log2 - lse_tile[column] * kLog2e) : 0.F;
                dp[i][j] = seen ? p[i][j] * (dp[i][j] - dots_tile[column]) : 0.F;
            }
        }
        store_scores(p_tile, p);
        store_scores(ds_tile, dp);
        __syncthreads();
        tile_mix<kGroups>(p_tile, g_tile, v_sums);
        tile_mix<kGroups>(ds_tile, q_tile, k_sums);
        if (vectorized && q0 + kTile < shape.queries) {
            __syncthreads();  // q_tile, g_tile and the stats are free: the next tile may land
            issue_query_tile(q0 + kTile);
        }
        float4 q_sums[4][kGroups];
        clear(q_sums);
        tile_mix_transposed<kGroups>(ds_tile, k_tile, q_sums);
        if (query_sums == nullptr) {  // straight into grad_q, scaled
            add_rows<kGroups>(grad_q + AttentionShape::at(shape.q, bh, shape.heads, 0), shape.q[2],
                              dims, static_cast<float>(shape.scale), q0, shape.queries, q_sums);
        } else {
            add_rows<kGroups>(query_sums + row0 * T::kDims, T::kDims, T::kDims, 1.F, q0,
                              shape.queries, q_sums);
        }
    }
    const auto scale = static_cast<float>(shape.scale);
    const float k_factor[4] = {scale, scale, scale, scale};
    const float v_factor[4] = {1.F, 1.F, 1.F, 1.F};
    store_rows<kGroups>(grad_k + AttentionShape::at(shape.k, bh, shape.heads, 0), shape.k[2], k0,
                        shape.keys, dims, vectorized, k_sums, k_factor);
    store_rows<kGroups>(grad_v + AttentionShape::at(shape.v, bh, shape.heads, 0), shape.v[2], k0,
                        shape.keys, dims, vectorized, v_sums, v_factor);
}

template <int kGroups>
void launch_gradients(const AttentionShape& shape, float* grad_q, float* grad_k, float* grad_v,
                      const float* grad_out, const float* q, const float* k, const float* v,
                      const float* lse, const float* row_dots, float scale_log2, bool vectorized) {
    constexpr int kDims = Tile<kGroups>::kDims;
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    // 16-byte operands: the atomics go straight into grad_q (zeroed by the D pass).
    float* query_sums = nullptr;
    if (!vectorized) {
        const std::int64_t sum_bytes = rows * kDims * std::int64_t{4};
        query_sums = static_cast<float*>(device_malloc(sum_bytes));
        KAEL_CUDA_CHECK(
            cudaMemsetAsync(query_sums, 0, static_cast<std::size_t>(sum_bytes), launch_stream()));
    }
    const auto kernel = &attention_grad_keys<kGroups>;
    const int bytes = static_cast<int>((4 * Tile<kGroups>::kFloats + 2 * kScoreFloats + 2 * kTile) *
                                       sizeof(float));
    allow_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
    const std::int64_t blocks = shape.batch * shape.heads * ((shape.keys + kTile - 1) / kTile);
    kernel<<<static_cast<unsigned>(blocks), kThreads, bytes, launch_stream()>>>(
        shape, grad_k, grad_v, grad_q, query_sums, grad_out, q, k, v, lse, row_dots, scale_log2,
        vectorized);
    check_launch(typeid(kernel), __FILE__, __LINE__);
    if (query_sums == nullptr) {
        return;
    }
    attention_store_grad_queries<<<static_cast<unsigned>(blocks_for(rows * 32)), kThreadsPerBlock,
                                   0, launch_stream()>>>(shape, grad_q, query_sums, kDims, rows);
    check_launch(typeid(&attention_store_grad_queries), __FILE__, __LINE__);
    device_free(query_sums);  // stream-ordered: after the store
}

}  // namespace

void attention_backward_f32(const AttentionShape& shape, float* grad_q, float* grad_k,
                            float* grad_v, const float* grad_out, const float* q, const float* k,
                            const float* v, const float* out, const float* lse) {
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    float* const row_dots = static_cast<float*>(device_malloc(rows * std::int64_t{4}));
    const void* const buffers[] = {grad_q, grad_k, grad_v, grad_out, q, k, v, out};
    const bool vectorized = aligned_for_vectors(shape, buffers, 8);
    const std::int64_t threads = rows * lanes_per_row(shape, vectorized);
    attention_row_dots<<<static_cast<unsigned>(blocks_for(threads)), kThreadsPerBlock, 0,
                         launch_stream()>>>(shape, row_dots, grad_q, grad_out, out, rows,
                                            vectorized);
    check_launch(typeid(&attention_row_dots), __FILE__, __LINE__);
    const auto scale_log2 = static_cast<float>(shape.scale * 1.4426950408889634);
    if (shape.head_dim <= 64) {
        launch_gradients<1>(shape, grad_q, grad_k, grad_v, grad_out, q, k, v, lse, row_dots,
                            scale_log2, vectorized);
    } else {
        launch_gradients<2>(shape, grad_q, grad_k, grad_v, grad_out, q, k, v, lse, row_dots,
                            scale_log2, vectorized);
    }
    device_free(row_dots);  // stream-ordered: after the gradient kernels
}

}  // namespace kael::cuda::attention_tiles
