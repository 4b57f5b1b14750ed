// bf16/f16 attention backward on tensor cores, FlashAttention-2 style, head_dim 64: first
// D_i = grad_out_i . out_i per query (f32) and a zeroed f32 grad_q accumulator; then a block of
// four warps per (batch * head, 64 keys), each warp 16 keys, walks the query tiles that see its
// keys: S^T = K Q^T, P^T from S^T and the forward's lse, dP^T = V dO^T, dS^T = P^T (dP^T - D);
// dV += P^T dO and dK += dS^T Q stay in registers, dQ += dS K goes to the accumulator by f32x2
// atomics; a last pass scales it into grad_q's dtype and layout. Products are mma.sync m16n8k16
// with f32 accumulators; P and dS are rounded to the dtype for them, as FlashAttention does.
// grad_k and grad_v repeat run to run; grad_q may differ in the last bits (atomic order).
#include <cstdint>
#include <string>
#include <typeinfo>

#include "attention_mma.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"

namespace kael::cuda::attention_mma {
namespace {

constexpr int kDims = 64;
using T = Tile<kDims>;
constexpr int kSteps = kDims / 16;

// D per query row (8 lanes a row, 16 bytes a lane), and the row's grad_q accumulator zeroed.
template <bool kHalf>
__global__ void attention_row_dots_mma(AttentionShape shape, float* row_dots, float* sums,
                                       const std::uint16_t* grad_out, const std::uint16_t* out,
                                       std::int64_t rows) {
    const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t row = thread / 8;
    const int piece = static_cast<int>(thread % 8);
    float dot = 0.F;
    if (row < rows) {
        const std::int64_t bh = row / shape.queries;
        const std::int64_t query = row % shape.queries;
        const std::int64_t at = AttentionShape::at(shape.out, bh, shape.heads, query) + piece * 8;
        const uint4 g = *reinterpret_cast<const uint4*>(grad_out + at);
        const uint4 o = *reinterpret_cast<const uint4*>(out + at);
        const std::uint32_t gw[4] = {g.x, g.y, g.z, g.w};
        const std::uint32_t ow[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            dot += to_float<kHalf>(static_cast<std::uint16_t>(gw[i] & 0xFFFFU)) *
                       to_float<kHalf>(static_cast<std::uint16_t>(ow[i] & 0xFFFFU)) +
                   to_float<kHalf>(static_cast<std::uint16_t>(gw[i] >> 16U)) *
                       to_float<kHalf>(static_cast<std::uint16_t>(ow[i] >> 16U));
        }
        *reinterpret_cast<float4*>(sums + row * kDims + piece * 8) = make_float4(0, 0, 0, 0);
        *reinterpret_cast<float4*>(sums + row * kDims + piece * 8 + 4) = make_float4(0, 0, 0, 0);
    }
#pragma unroll
    for (int offset = 4; offset > 0; offset /= 2) {
        dot += __shfl_xor_sync(0xffffffffU, dot, offset);
    }
    if (row < rows && piece == 0) {
        row_dots[row] = dot;
    }
}

template <bool kHalf>
__global__ void __launch_bounds__(kThreads)
    attention_grad_keys_mma(AttentionShape shape, std::uint16_t* grad_k, std::uint16_t* grad_v,
                            float* query_sums, const std::uint16_t* grad_out,
                            const std::uint16_t* q, const std::uint16_t* k,
                            const std::uint16_t* v, const float* lse, const float* row_dots,
                            float scale_log2) {
    extern __shared__ __align__(16) std::uint16_t shared[];
    std::uint16_t* const k_tile = shared;
    std::uint16_t* const v_tile = k_tile + T::kElems;
    std::uint16_t* const q_tile = v_tile + T::kElems;
    std::uint16_t* const g_tile = q_tile + T::kElems;   // grad_out rows of the query tile
    std::uint16_t* const ds_tile = g_tile + T::kElems;  // dS^T [key][query]
    auto* const lse_tile = reinterpret_cast<float*>(ds_tile + T::kElems);  // lse * log2(e)
    float* const dot_tile = lse_tile + kTile;

    const std::int64_t pairs = shape.batch * shape.heads;
    const std::int64_t bh = blockIdx.x % pairs;
    const std::int64_t k0 = (blockIdx.x / pairs) * kTile;  // the first key tiles see the most
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int group = lane / 4;
    const int t = lane % 4;
    const std::int64_t offset = shape.keys - shape.queries;  // key j is seen by i >= j - offset
    // The first query that sees key k0 (causal), rounded down to its tile.
    std::int64_t q_start = 0;
    if (shape.causal && k0 - offset > 0) {
        q_start = (k0 - offset) / kTile * kTile;
    }
    load_tile<kDims>(k_tile, k + AttentionShape::at(shape.k, bh, shape.heads, 0), shape.k[2], k0,
                     shape.keys);
    load_tile<kDims>(v_tile, v + AttentionShape::at(shape.v, bh, shape.heads, 0), shape.v[2], k0,
                     shape.keys);
    commit();
    const std::uint16_t* const q_head = q + AttentionShape::at(shape.q, bh, shape.heads, 0);
    const std::uint16_t* const g_head =
        grad_out + AttentionShape::at(shape.out, bh, shape.heads, 0);
    float dk[kDims / 8][4] = {};
    float dv[kDims / 8][4] = {};
    const std::int64_t my_key[2] = {k0 + warp * 16 + group, k0 + warp * 16 + group + 8};
    for (std::int64_t q0 = q_start; q0 < shape.queries; q0 += kTile) {
        load_tile<kDims>(q_tile, q_head, shape.q[2], q0, shape.queries);
        load_tile<kDims>(g_tile, g_head, shape.out[2], q0, shape.queries);
        commit();
        if (threadIdx.x < kTile) {
            const std::int64_t query = q0 + threadIdx.x;
            const bool inside = query < shape.queries;
            lse_tile[threadIdx.x] = inside ? lse[bh * shape.queries + query] * kLog2e : 0.F;
            dot_tile[threadIdx.x] = inside ? row_dots[bh * shape.queries + query] : 0.F;
        }
        wait<0>();
        __syncthreads();
        float s[8][4] = {};  // S^T: this warp's 16 keys x the tile's 64 queries
        float dp[8][4] = {};
#pragma unroll
        for (int step = 0; step < kSteps; ++step) {
            std::uint32_t a_k[4];
            std::uint32_t a_v[4];
            load_a<T::kStride>(a_k, k_tile, warp * 16, step * 16);
            load_a<T::kStride>(a_v, v_tile, warp * 16, step * 16);
#pragma unroll
            for (int p = 0; p < 4; ++p) {
                std::uint32_t b[4];
                load_b_nk<T::kStride>(b, q_tile, p * 16, step * 16);
                mma<kHalf>(s[2 * p], a_k, b);
                mma<kHalf>(s[2 * p + 1], a_k, b + 2);
                load_b_nk<T::kStride>(b, g_tile, p * 16, step * 16);
                mma<kHalf>(dp[2 * p], a_v, b);
                mma<kHalf>(dp[2 * p + 1], a_v, b + 2);
            }
        }
        // P^T and dS^T = P^T (dP^T - D); a key past the end or hidden from a query gives 0.
#pragma unroll
        for (int j = 0; j < 8; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int column = 8 * j + 2 * t + (e & 1);
                const std::int64_t query = q0 + column;
                const std::int64_t key = my_key[e / 2];
                const bool seen = key < shape.keys && query < shape.queries &&
                                  (!shape.causal || key <= query + offset);
                const float p = seen ? exp2f(s[j][e] * scale_log2 - lse_tile[column]) : 0.F;
                s[j][e] = p;
                dp[j][e] = p * (dp[j][e] - dot_tile[column]);
            }
        }
        // dV += P^T dO and dK += dS^T Q (k = the tile's queries).
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            std::uint32_t a_p[4];
            std::uint32_t a_ds[4];
            accumulators_as_a<kHalf>(a_p, s[2 * kk], s[2 * kk + 1]);
            accumulators_as_a<kHalf>(a_ds, dp[2 * kk], dp[2 * kk + 1]);
#pragma unroll
            for (int p = 0; p < kSteps; ++p) {
                std::uint32_t b[4];
                load_b_kn<T::kStride>(b, g_tile, p * 16, kk * 16);
                mma<kHalf>(dv[2 * p], a_p, b);
                mma<kHalf>(dv[2 * p + 1], a_p, b + 2);
                load_b_kn<T::kStride>(b, q_tile, p * 16, kk * 16);
                mma<kHalf>(dk[2 * p], a_ds, b);
                mma<kHalf>(dk[2 * p + 1], a_ds, b + 2);
            }
        }
        // dS^T to shared memory, so each warp can take 16 queries' rows of dQ += dS K.
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            auto* const upper = reinterpret_cast<std::uint32_t*>(
                ds_tile + (warp * 16 + group) * T::kStride + 8 * j + 2 * t);
            auto* const lower = reinterpret_cast<std::uint32_t*>(
                ds_tile + (warp * 16 + group + 8) * T::kStride + 8 * j + 2 * t);
            *upper = pack<kHalf>(dp[j][0], dp[j][1]);
            *lower = pack<kHalf>(dp[j][2], dp[j][3]);
        }
        __syncthreads();
        float dq[kDims / 8][4] = {};
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {  // keys 16 kk.. of the tile
            std::uint32_t a[4];
            load_a_transposed<T::kStride>(a, ds_tile, warp * 16, kk * 16);
#pragma unroll
            for (int p = 0; p < kSteps; ++p) {
                std::uint32_t b[4];
                load_b_kn<T::kStride>(b, k_tile, p * 16, kk * 16);
                mma<kHalf>(dq[2 * p], a, b);
                mma<kHalf>(dq[2 * p + 1], a, b + 2);
            }
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const std::int64_t query = q0 + warp * 16 + group + 8 * r;
            if (query < shape.queries) {
                float* const row = query_sums + (bh * shape.queries + query) * kDims;
#pragma unroll
                for (int n = 0; n < kDims / 8; ++n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
                    atomicAdd(reinterpret_cast<float2*>(row + 8 * n + 2 * t),
                              make_float2(dq[n][2 * r], dq[n][2 * r + 1]));
#else
                    atomicAdd(row + 8 * n + 2 * t, dq[n][2 * r]);
                    atomicAdd(row + 8 * n + 2 * t + 1, dq[n][2 * r + 1]);
#endif
                }
            }
        }
        __syncthreads();  // the tiles may be refilled
    }
    const auto scale = static_cast<float>(shape.scale);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (my_key[r] >= shape.keys) {
            continue;
        }
        auto* const k_row = reinterpret_cast<std::uint32_t*>(
            grad_k + AttentionShape::at(shape.k, bh, shape.heads, my_key[r]));
        auto* const v_row = reinterpret_cast<std::uint32_t*>(
            grad_v + AttentionShape::at(shape.v, bh, shape.heads, my_key[r]));
#pragma unroll
        for (int n = 0; n < kDims / 8; ++n) {
            k_row[4 * n + t] = pack<kHalf>(dk[n][2 * r] * scale, dk[n][2 * r + 1] * scale);
            v_row[4 * n + t] = pack<kHalf>(dv[n][2 * r], dv[n][2 * r + 1]);
        }
    }
}

// grad_q = scale * the accumulator, in the dtype and q's layout (8 lanes a row).
template <bool kHalf>
__global__ void attention_store_grad_queries_mma(AttentionShape shape, std::uint16_t* grad_q,
                                                 const float* sums, std::int64_t rows) {
    const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t row = thread / 8;
    const int piece = static_cast<int>(thread % 8);
    if (row >= rows) {
        return;
    }
    const auto scale = static_cast<float>(shape.scale);
    const float* const sum = sums + row * kDims + piece * 8;
    const float4 low = *reinterpret_cast<const float4*>(sum);
    const float4 high = *reinterpret_cast<const float4*>(sum + 4);
    const uint4 packed = make_uint4(pack<kHalf>(low.x * scale, low.y * scale),
                                    pack<kHalf>(low.z * scale, low.w * scale),
                                    pack<kHalf>(high.x * scale, high.y * scale),
                                    pack<kHalf>(high.z * scale, high.w * scale));
    const std::int64_t bh = row / shape.queries;
    const std::int64_t query = row % shape.queries;
    *reinterpret_cast<uint4*>(grad_q + AttentionShape::at(shape.q, bh, shape.heads, query) +
                              piece * 8) = packed;
}

template <bool kHalf>
void run_backward(const AttentionShape& shape, void* grad_q, void* grad_k, void* grad_v,
                  const void* grad_out, const void* q, const void* k, const void* v,
                  const void* out, const float* lse) {
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    auto* const row_dots = static_cast<float*>(device_malloc(rows * std::int64_t{4}));
    auto* const sums = static_cast<float*>(device_malloc(rows * kDims * std::int64_t{4}));
    const auto* const g16 = static_cast<const std::uint16_t*>(grad_out);
    attention_row_dots_mma<kHalf><<<static_cast<unsigned>(blocks_for(rows * 8)),
                                     kThreadsPerBlock, 0, launch_stream()>>>(
        shape, row_dots, sums, g16, static_cast<const std::uint16_t*>(out), rows);
    check_launch(typeid(&attention_row_dots_mma<kHalf>), __FILE__, __LINE__);
    const auto kernel = &attention_grad_keys_mma<kHalf>;
    const int bytes = static_cast<int>(5 * T::kElems * sizeof(std::uint16_t) +
                                       2 * kTile * sizeof(float));
    allow_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
    const std::int64_t blocks = shape.batch * shape.heads * ((shape.keys + kTile - 1) / kTile);
    kernel<<<static_cast<unsigned>(blocks), kThreads, bytes, launch_stream()>>>(
        shape, static_cast<std::uint16_t*>(grad_k), static_cast<std::uint16_t*>(grad_v), sums,
        g16, static_cast<const std::uint16_t*>(q), static_cast<const std::uint16_t*>(k),
        static_cast<const std::uint16_t*>(v), lse, row_dots,
        static_cast<float>(shape.scale * 1.4426950408889634));
    check_launch(typeid(kernel), __FILE__, __LINE__);
    attention_store_grad_queries_mma<kHalf><<<static_cast<unsigned>(blocks_for(rows * 8)),
                                               kThreadsPerBlock, 0, launch_stream()>>>(
        shape, static_cast<std::uint16_t*>(grad_q), sums, rows);
    check_launch(typeid(&attention_store_grad_queries_mma<kHalf>), __FILE__, __LINE__);
    device_free(sums);  // stream-ordered: after the kernels
    device_free(row_dots);
}

}  // namespace

void attention_backward_low_precision(kael_dtype dtype, const AttentionShape& shape, void* grad_q,
                                      void* grad_k, void* grad_v, const void* grad_out,
                                      const void* q, const void* k, const void* v,
                                      const void* out, const void* lse) {
    const void* const buffers[] = {grad_q, grad_k, grad_v, grad_out, q, k, v, out};
    const std::int64_t blocks = shape.batch * shape.heads * ((shape.keys + kTile - 1) / kTile);
    if (shape.head_dim != kDims || !takes(shape, buffers, 8) || blocks == 0 ||
        blocks >= (std::int64_t{1} << 31) || shape.queries == 0) {
        plugin::unsupported(std::string("attention_backward of ") + plugin::dtype_name(dtype) +
                            " with head_dim " + std::to_string(shape.head_dim) +
                            " or this layout");
    }
    const auto* const lse_f = static_cast<const float*>(lse);
    if (dtype == KAEL_DTYPE_F16) {
        run_backward<true>(shape, grad_q, grad_k, grad_v, grad_out, q, k, v, out, lse_f);
    } else {
        run_backward<false>(shape, grad_q, grad_k, grad_v, grad_out, q, k, v, out, lse_f);
    }
}

}  // namespace kael::cuda::attention_mma
