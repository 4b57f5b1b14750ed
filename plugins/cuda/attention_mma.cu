// bf16/f16 attention forward on tensor cores, FlashAttention-2 style: a block of four warps per
// (batch * head, 64 queries), each warp 16 query rows whose Q fragments stay in registers; 64-key
// tiles of K and V stream through shared memory (cp.async, the next pair in flight during this
// one), S = Q K^T and O += P V run as mma.sync m16n8k16 with f32 accumulators, the online softmax
// stays in f32 (P is rounded to the dtype for P V, as FlashAttention does). lse is f32.
#include <cstdint>
#include <string>
#include <typeinfo>

#include "attention_mma.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"

namespace kael::cuda::attention_mma {
namespace {

template <int kDims, bool kHalf>
__global__ void __launch_bounds__(kThreads)
    attention_forward_mma(AttentionShape shape, std::uint16_t* out, float* lse,
                          const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                          float scale_log2) {
    using T = Tile<kDims>;
    constexpr int kSteps = kDims / 16;  // k-steps of Q K^T, 16-column pairs of P V
    extern __shared__ __align__(16) std::uint16_t shared[];
    std::uint16_t* const q_tile = shared;
    std::uint16_t* const k_tiles = shared + T::kElems;
    std::uint16_t* const v_tiles = k_tiles + 2 * T::kElems;

    const std::int64_t pairs = shape.batch * shape.heads;
    const std::int64_t tiles = (shape.queries + kTile - 1) / kTile;
    const std::int64_t bh = blockIdx.x % pairs;
    const std::int64_t q0 = (tiles - 1 - blockIdx.x / pairs) * kTile;  // most keys first
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int group = lane / 4;
    const int t = lane % 4;

    const std::uint16_t* const k_head = k + AttentionShape::at(shape.k, bh, shape.heads, 0);
    const std::uint16_t* const v_head = v + AttentionShape::at(shape.v, bh, shape.heads, 0);
    const std::int64_t last_query = (q0 + kTile < shape.queries ? q0 + kTile : shape.queries) - 1;
    const std::int64_t key_end = shape.visible_keys(last_query);
    load_tile<kDims>(q_tile, q + AttentionShape::at(shape.q, bh, shape.heads, 0), shape.q[2], q0,
                     shape.queries);
    if (key_end > 0) {
        load_tile<kDims>(k_tiles, k_head, shape.k[2], 0, shape.keys);
        load_tile<kDims>(v_tiles, v_head, shape.v[2], 0, shape.keys);
    }
    commit();
    wait<0>();
    __syncthreads();
    std::uint32_t q_frag[kSteps][4];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
        load_a<T::kStride>(q_frag[s], q_tile, warp * 16, s * 16);
    }
    // This thread's two rows (group, group + 8): the keys each sees, running max and sum.
    std::int64_t visible[2];
    float top[2] = {-INFINITY, -INFINITY};
    float total[2] = {0.F, 0.F};
    float o[kDims / 8][4] = {};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        visible[r] = shape.visible_keys(q0 + warp * 16 + group + 8 * r);
    }
    for (std::int64_t k0 = 0; k0 < key_end; k0 += kTile) {
        const int buffer = static_cast<int>(k0 / kTile) % 2;
        const std::uint16_t* const k_tile = k_tiles + buffer * T::kElems;
        const std::uint16_t* const v_tile = v_tiles + buffer * T::kElems;
        if (k0 + kTile < key_end) {  // the other buffers were released by the last barrier
            load_tile<kDims>(k_tiles + (1 - buffer) * T::kElems, k_head, shape.k[2], k0 + kTile,
                             shape.keys);
            load_tile<kDims>(v_tiles + (1 - buffer) * T::kElems, v_head, shape.v[2], k0 + kTile,
                             shape.keys);
            commit();
            wait<1>();
        } else {
            wait<0>();
        }
        __syncthreads();
        float s[8][4] = {};
#pragma unroll
        for (int step = 0; step < kSteps; ++step) {
#pragma unroll
            for (int p = 0; p < 4; ++p) {
                std::uint32_t b[4];
                load_b_nk<T::kStride>(b, k_tile, p * 16, step * 16);
                mma<kHalf>(s[2 * p], q_frag[step], b);
                mma<kHalf>(s[2 * p + 1], q_frag[step], b + 2);
            }
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float tile_top = -INFINITY;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const std::int64_t key = k0 + 8 * j + 2 * t + e;
                    float& score = s[j][2 * r + e];
                    score = key < visible[r] ? score * scale_log2 : -INFINITY;
                    tile_top = fmaxf(tile_top, score);
                }
            }
            tile_top = fmaxf(tile_top, __shfl_xor_sync(0xffffffffU, tile_top, 1));
            tile_top = fmaxf(tile_top, __shfl_xor_sync(0xffffffffU, tile_top, 2));
            const float new_top = fmaxf(top[r], tile_top);
            const float shift = new_top == -INFINITY ? 0.F : new_top;  // no -inf - -inf
            const float rescale = exp2f(top[r] - shift);
            top[r] = new_top;
            float row_sum = 0.F;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    float& score = s[j][2 * r + e];
                    score = exp2f(score - shift);
                    row_sum += score;
                }
            }
            total[r] = total[r] * rescale + row_sum;
#pragma unroll
            for (int n = 0; n < kDims / 8; ++n) {
                o[n][2 * r] *= rescale;
                o[n][2 * r + 1] *= rescale;
            }
        }
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {  // keys 16 kk.. of the tile
            std::uint32_t a[4];
            accumulators_as_a<kHalf>(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
            for (int p = 0; p < kSteps; ++p) {
                std::uint32_t b[4];
                load_b_kn<T::kStride>(b, v_tile, p * 16, kk * 16);
                mma<kHalf>(o[2 * p], a, b);
                mma<kHalf>(o[2 * p + 1], a, b + 2);
            }
        }
        __syncthreads();  // this tile's buffers may be refilled
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        float sum = total[r];
        sum += __shfl_xor_sync(0xffffffffU, sum, 1);
        sum += __shfl_xor_sync(0xffffffffU, sum, 2);
        const std::int64_t query = q0 + warp * 16 + group + 8 * r;
        if (query >= shape.queries) {
            continue;
        }
        if (t == 0) {
            lse[bh * shape.queries + query] = (top[r] + log2f(sum)) * kLn2;
        }
        const float inverse = sum == 0.F ? NAN : 1.F / sum;  // no key seen: NaN, as the reference
        auto* const row = reinterpret_cast<std::uint32_t*>(
            out + AttentionShape::at(shape.out, bh, shape.heads, query));
#pragma unroll
        for (int n = 0; n < kDims / 8; ++n) {
            row[4 * n + t] = pack<kHalf>(o[n][2 * r] * inverse, o[n][2 * r + 1] * inverse);
        }
    }
}

template <int kDims, bool kHalf>
void launch(const AttentionShape& shape, void* out, float* lse, const void* q, const void* k,
            const void* v) {
    const auto kernel = &attention_forward_mma<kDims, kHalf>;
    const int bytes = static_cast<int>(5 * Tile<kDims>::kElems * sizeof(std::uint16_t));
    allow_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
    const std::int64_t blocks = shape.batch * shape.heads * ((shape.queries + kTile - 1) / kTile);
    kernel<<<static_cast<unsigned>(blocks), kThreads, bytes, launch_stream()>>>(
        shape, static_cast<std::uint16_t*>(out), lse, static_cast<const std::uint16_t*>(q),
        static_cast<const std::uint16_t*>(k), static_cast<const std::uint16_t*>(v),
        static_cast<float>(shape.scale * 1.4426950408889634));
    check_launch(typeid(kernel), __FILE__, __LINE__);
}

}  // namespace

void attention_low_precision(kael_dtype dtype, const AttentionShape& shape, void* out, void* lse,
                             const void* q, const void* k, const void* v) {
    const void* const buffers[] = {out, q, k, v};
    const std::int64_t blocks = shape.batch * shape.heads * ((shape.queries + kTile - 1) / kTile);
    if ((shape.head_dim != 64 && shape.head_dim != 128) || shape.queries <= 8 ||
        shape.keys == 0 || !takes(shape, buffers, 4) || blocks >= (std::int64_t{1} << 31)) {
        plugin::unsupported(std::string("attention of ") + plugin::dtype_name(dtype) + " with head_dim " +
                            std::to_string(shape.head_dim) + ", " +
                            std::to_string(shape.queries) + " queries or this layout");
    }
    if (blocks == 0) {
        return;
    }
    auto* const lse_f = static_cast<float*>(lse);
    const bool half = dtype == KAEL_DTYPE_F16;
    if (shape.head_dim == 64) {
        half ? launch<64, true>(shape, out, lse_f, q, k, v)
             : launch<64, false>(shape, out, lse_f, q, k, v);
    } else {
        half ? launch<128, true>(shape, out, lse_f, q, k, v)
             : launch<128, false>(shape, out, lse_f, q, k, v);
    }
}

}  // namespace kael::cuda::attention_mma
