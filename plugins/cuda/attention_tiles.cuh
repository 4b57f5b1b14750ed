#pragma once
// Building blocks of the f32 flash-attention kernels (attention.cu, attention_backward.cu):
// 64-token tiles of q/k/v rows in shared memory, and 256-thread register-tiled products on them.
// Thread (ty, tx) = (threadIdx.x / 16, threadIdx.x % 16) owns tile rows ty * 4 + i (i < 4); in
// a 64 x 64 score tile it owns columns tx + 16 * j (j < 4), in a 64 x head_dim tile the dims
// tx * 4 + 64 * g (+0..3, g < kGroups). Row stride padding (+4 floats) keeps the 16-byte loads
// free of bank conflicts. Head dims are padded with zeros to 64 * kGroups.
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kael/kernels/tasks/attention.h"

namespace kael::cuda::attention_tiles {

using kernels::tasks::AttentionShape;

inline constexpr int kTile = 64;
inline constexpr int kSplitKeys = 1024;  // keys per decoding block (a cache this long: one launch)
inline constexpr int kMaxDims = 128;    // the largest head_dim the tile and decoding kernels take
inline constexpr int kThreads = 256;
inline constexpr int kScoreStride = kTile + 4;
inline constexpr int kScoreFloats = kTile * kScoreStride;
inline constexpr float kLog2e = 1.4426950408889634F;
inline constexpr float kLn2 = 0.6931471805599453F;

template <int kGroups>
struct Tile {
    static constexpr int kDims = 64 * kGroups;
    static constexpr int kStride = kDims + 4;
    static constexpr int kFloats = kTile * kStride;
};

__device__ inline int thread_row() {
    return static_cast<int>(threadIdx.x) / 16;
}
__device__ inline int thread_column() {
    return static_cast<int>(threadIdx.x) % 16;
}

// Calls copy(target, source, inside) for each of this thread's 16-byte chunks of a tile of rows
// first .. first + 63: source is the chunk's 4 floats in rows (row stride token_stride), inside
// false past limit or head_dim (source then is rows itself, a valid address).
template <int kGroups, typename Copy>
__device__ void for_each_tile_chunk(float* tile, const float* rows, std::int64_t token_stride,
                                    std::int64_t first, std::int64_t limit, int head_dim,
                                    Copy copy) {
    using T = Tile<kGroups>;
    constexpr int kChunks = T::kDims / 4;
#pragma unroll
    for (int c = static_cast<int>(threadIdx.x); c < kTile * kChunks; c += kThreads) {
        const int row = c / kChunks;
        const int dim = (c % kChunks) * 4;
        const bool inside = first + row < limit && dim < head_dim;
        copy(tile + row * T::kStride + dim,
             inside ? rows + (first + row) * token_stride + dim : rows, inside);
    }
}

// Copies rows first .. first + 63 of a [tokens, head_dim] matrix (row stride token_stride) into
// tile; rows at or past limit and dims past head_dim become zeros. vectorized: 16-byte loads
// (head_dim, strides and base all multiples of 4 floats).
template <int kGroups>
__device__ void load_tile(float* tile, const float* rows, std::int64_t token_stride,
                          std::int64_t first, std::int64_t limit, int head_dim, bool vectorized) {
    using T = Tile<kGroups>;
    if (vectorized) {
        for_each_tile_chunk<kGroups>(tile, rows, token_stride, first, limit, head_dim,
                                     [](float* target, const float* source, bool inside) {
                                         *reinterpret_cast<float4*>(target) =
                                             inside ? *reinterpret_cast<const float4*>(source)
                                                    : make_float4(0.F, 0.F, 0.F, 0.F);
                                     });
        return;
    }
    for (int e = static_cast<int>(threadIdx.x); e < kTile * T::kDims; e += kThreads) {
        const int row = e / T::kDims;
        const int dim = e % T::kDims;
        const bool inside = first + row < limit && dim < head_dim;
        tile[row * T::kStride + dim] = inside ? rows[(first + row) * token_stride + dim] : 0.F;
    }
}

// load_tile's 16-byte path as cp.async copies (zeros past limit and head_dim) that land while
// the block computes on another tile: the caller commits them and waits with
// __pipeline_wait_prior, then a __syncthreads makes every thread's copies visible.
template <int kGroups>
__device__ void load_tile_async(float* tile, const float* rows, std::int64_t token_stride,
                                std::int64_t first, std::int64_t limit, int head_dim) {
    for_each_tile_chunk<kGroups>(tile, rows, token_stride, first, limit, head_dim,
                                 [](float* target, const float* source, bool inside) {
                                     // Outside, nothing is read: all 16 bytes zero-filled.
                                     __pipeline_memcpy_async(target, source, 16, inside ? 0 : 16);
                                 });
}

// scores[i][j] = a[ty * 4 + i] . b[tx + 16 * j] over the padded head dims.
template <int kGroups>
__device__ void tile_dots(const float* a, const float* b, float (&scores)[4][4]) {
    using T = Tile<kGroups>;
    const int ty = thread_row();
    const int tx = thread_column();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            scores[i][j] = 0.F;
        }
    }
#pragma unroll 4
    for (int d = 0; d < T::kDims; d += 4) {
        float4 av[4];
        float4 bv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            av[i] = *reinterpret_cast<const float4*>(a + (ty * 4 + i) * T::kStride + d);
            bv[i] = *reinterpret_cast<const float4*>(b + (tx + 16 * i) * T::kStride + d);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                float s = scores[i][j];
                s = fmaf(av[i].x, bv[j].x, s);
                s = fmaf(av[i].y, bv[j].y, s);
                s = fmaf(av[i].z, bv[j].z, s);
                s = fmaf(av[i].w, bv[j].w, s);
                scores[i][j] = s;
            }
        }
    }
}

// Writes a thread's scores[i][j] at row ty * 4 + i, column tx + 16 * j of a score tile.
__device__ inline void store_scores(float* tile, const float (&scores)[4][4]) {
    const int ty = thread_row();
    const int tx = thread_column();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            tile[(ty * 4 + i) * kScoreStride + tx + 16 * j] = scores[i][j];
        }
    }
}

__device__ inline void scale_add(float4& target, float w, const float4& b) {
    target.x = fmaf(w, b.x, target.x);
    target.y = fmaf(w, b.y, target.y);
    target.z = fmaf(w, b.z, target.z);
    target.w = fmaf(w, b.w, target.w);
}

// sums[i][g] += sum over t of weights[ty * 4 + i][t] * b[t][tx * 4 + 64 * g ..] (a score tile
// times a 64-row tile).
template <int kGroups>
__device__ void tile_mix(const float* weights, const float* b, float4 (&sums)[4][kGroups]) {
    using T = Tile<kGroups>;
    const int ty = thread_row();
    const int tx = thread_column();
#pragma unroll 2
    for (int t = 0; t < kTile; t += 4) {
        float w[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float4 four =
                *reinterpret_cast<const float4*>(weights + (ty * 4 + i) * kScoreStride + t);
            w[i][0] = four.x;
            w[i][1] = four.y;
            w[i][2] = four.z;
            w[i][3] = four.w;
        }
#pragma unroll
        for (int step = 0; step < 4; ++step) {
#pragma unroll
            for (int g = 0; g < kGroups; ++g) {
                const float4 bv =
                    *reinterpret_cast<const float4*>(b + (t + step) * T::kStride + 64 * g + tx * 4);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    scale_add(sums[i][g], w[i][step], bv);
                }
            }
        }
    }
}

// The same with the score tile transposed: sums[i][g] += sum over t of
// weights[t][ty * 4 + i] * b[t][tx * 4 + 64 * g ..].
template <int kGroups>
__device__ void tile_mix_transposed(const float* weights, const float* b,
                                    float4 (&sums)[4][kGroups]) {
    using T = Tile<kGroups>;
    const int ty = thread_row();
    const int tx = thread_column();
#pragma unroll 4
    for (int t = 0; t < kTile; ++t) {
        const float4 w = *reinterpret_cast<const float4*>(weights + t * kScoreStride + ty * 4);
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const float4 bv =
                *reinterpret_cast<const float4*>(b + t * T::kStride + 64 * g + tx * 4);
            scale_add(sums[0][g], w.x, bv);
            scale_add(sums[1][g], w.y, bv);
            scale_add(sums[2][g], w.z, bv);
            scale_add(sums[3][g], w.w, bv);
        }
    }
}

template <int kGroups>
__device__ void clear(float4 (&sums)[4][kGroups]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            sums[i][g] = make_float4(0.F, 0.F, 0.F, 0.F);
        }
    }
}

// Calls body(i, g, token, dim) for each of a thread's rows token = first + ty * 4 + i below
// limit and each of its dim groups dim = 64 * g + tx * 4.
template <int kGroups, typename Body>
__device__ void for_owned_rows(std::int64_t first, std::int64_t limit, Body body) {
    const int ty = thread_row();
    const int tx = thread_column();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const std::int64_t token = first + ty * 4 + i;
        if (token < limit) {
#pragma unroll
            for (int g = 0; g < kGroups; ++g) {
                body(i, g, token, 64 * g + tx * 4);
            }
        }
    }
}

// Stores a thread's sums (times factor) into rows first + ty * 4 + i (below limit) of a
// [tokens, head_dim] matrix.
template <int kGroups>
__device__ void store_rows(float* rows, std::int64_t token_stride, std::int64_t first,
                           std::int64_t limit, int head_dim, bool vectorized,
                           const float4 (&sums)[4][kGroups], const float (&factor)[4]) {
    for_owned_rows<kGroups>(first, limit, [&](int i, int g, std::int64_t token, int dim) {
        float* row = rows + token * token_stride;
        const float4 s = sums[i][g];
        const float4 value =
            make_float4(s.x * factor[i], s.y * factor[i], s.z * factor[i], s.w * factor[i]);
        if (vectorized && dim < head_dim) {
            *reinterpret_cast<float4*>(row + dim) = value;
        } else if (!vectorized) {
            const float parts[4] = {value.x, value.y, value.z, value.w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (dim + e < head_dim) {
                    row[dim + e] = parts[e];
                }
            }
        }
    });
}

// Whether the 16-byte path may be used for every operand of a call: head_dim and every stride
// a multiple of `elements` (4 f32, 8 bf16/f16 for whole 16-byte pieces), buffers 16-byte aligned.
inline bool aligned_for_vectors(const AttentionShape& shape, const void* const* buffers,
                                int buffer_count, int elements = 4) {
    if (shape.head_dim % elements != 0) {
        return false;
    }
    for (const std::int64_t* strides : {shape.q, shape.k, shape.v, shape.out}) {
        for (int i = 0; i < 3; ++i) {
            if (strides[i] % elements != 0) {
                return false;
            }
        }
    }
    for (int i = 0; i < buffer_count; ++i) {
        if (reinterpret_cast<std::uintptr_t>(buffers[i]) % 16 != 0) {
            return false;
        }
    }
    return true;
}

// The queries' own keys and values ([batch, heads, queries, dims] with these strides) that a
// decoding launch stores into the cache (k_cache, v_cache: k and v) at each batch's last filled
// slots and reads from where it is; keys null: none (cached_attention's append).
struct CacheAppend {
    const void* keys = nullptr;
    const void* values = nullptr;
    std::int64_t k[3] = {};
    std::int64_t v[3] = {};
    void* k_cache = nullptr;
    void* v_cache = nullptr;
};

// Attention of a few queries over many keys (attention_decode.cu): dtype f32, bf16 or f16 (out,
// q, k, v of it, lse f32), head_dim at most 128, key_lengths honoured.
void launch_decode(kael_dtype dtype, const AttentionShape& shape, void* out, float* lse,
                   const void* q, const void* k, const void* v,
                   const CacheAppend& append = CacheAppend{});

// The f32 backward for head_dim <= 128 (attention_backward.cu).
void attention_backward_f32(const AttentionShape& shape, float* grad_q, float* grad_k,
                            float* grad_v, const float* grad_out, const float* q, const float* k,
                            const float* v, const float* out, const float* lse);

}  // namespace kael::cuda::attention_tiles
