#pragma once
// Building blocks of the bf16/f16 flash-attention kernels on tensor cores (attention_mma.cu,
// attention_mma_backward.cu): mma.sync m16n8k16 with f32 accumulators, ldmatrix fragment loads,
// cp.async tile copies. Tiles are 64 tokens x kDims of 2-byte elements in shared memory, rows
// padded by 8 elements (16 bytes), so the 8 row addresses of an ldmatrix hit 8 different bank
// groups. Fragment layouts are PTX's for m16n8k16: lane = 4 * group + t; an accumulator holds
// (row group, columns 2t, 2t + 1) and (row group + 8, the same columns).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention_tiles.cuh"
#include "kael/kernels/tasks/attention.h"

namespace kael::cuda::attention_mma {

using kernels::tasks::AttentionShape;

inline constexpr int kTile = 64;      // tokens a tile
inline constexpr int kThreads = 128;  // four warps, 16 tile rows each
inline constexpr float kLog2e = 1.4426950408889634F;
inline constexpr float kLn2 = 0.6931471805599453F;

template <int kDims>
struct Tile {
    static constexpr int kStride = kDims + 8;  // elements a row in shared memory
    static constexpr int kElems = kTile * kStride;
};

// c += a * b for one 16x8x16 product; kHalf: f16 operands, else bf16.
template <bool kHalf>
__device__ inline void mma(float* c, const std::uint32_t* a, const std::uint32_t* b) {
    if constexpr (kHalf) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

__device__ inline std::uint32_t shared_address(const void* pointer) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// Four 8x8 matrices; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ inline void load_matrices(std::uint32_t* r, const void* row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row)));
}

__device__ inline void load_matrices_transposed(std::uint32_t* r, const void* row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row)));
}

// The A fragment (16x16, row-major) of rows row0.., columns col0.. of a [rows][cols] tile.
template <int kStride>
__device__ inline void load_a(std::uint32_t* a, const std::uint16_t* tile, int row0, int col0) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    load_matrices(a, tile + (row0 + lane % 16) * kStride + col0 + (lane / 16) * 8);
}

// The A fragment of the transpose: A[r][c] = tile[col0 + c][row0 + r] (a [cols][rows] tile).
template <int kStride>
__device__ inline void load_a_transposed(std::uint32_t* a, const std::uint16_t* tile, int row0,
                                         int col0) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    load_matrices_transposed(
        a, tile + (col0 + lane % 8 + (lane / 16) * 8) * kStride + row0 + ((lane / 8) % 2) * 8);
}

// B fragments of two 8-column tiles (b[0..1] columns n0..n0+7, b[2..3] the next 8) over k
// k0..k0+15, from a tile stored [n][k] (k contiguous: K rows for Q K^T).
template <int kStride>
__device__ inline void load_b_nk(std::uint32_t* b, const std::uint16_t* tile, int n0, int k0) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    load_matrices(b, tile + (n0 + lane % 8 + (lane / 16) * 8) * kStride + k0 + ((lane / 8) % 2) * 8);
}

// The same from a tile stored [k][n] (n contiguous: V rows for P V).
template <int kStride>
__device__ inline void load_b_kn(std::uint32_t* b, const std::uint16_t* tile, int n0, int k0) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    load_matrices_transposed(
        b, tile + (k0 + lane % 8 + ((lane / 8) % 2) * 8) * kStride + n0 + (lane / 16) * 8);
}

// Two floats rounded to the dtype, the first in the low half (the lower column of a fragment).
template <bool kHalf>
__device__ inline std::uint32_t pack(float low, float high) {
    std::uint32_t bits;
    if constexpr (kHalf) {
        const __half2 value = __floats2half2_rn(low, high);
        static_assert(sizeof(value) == sizeof(bits));
        __builtin_memcpy(&bits, &value, sizeof bits);
    } else {
        const __nv_bfloat162 value = __floats2bfloat162_rn(low, high);
        __builtin_memcpy(&bits, &value, sizeof bits);
    }
    return bits;
}

template <bool kHalf>
__device__ inline float to_float(std::uint16_t bits) {
    if constexpr (kHalf) {
        return __half2float(__ushort_as_half(bits));
    } else {
        return __bfloat162float(__ushort_as_bfloat16(bits));
    }
}

// The A fragment of a 16x16 block whose values a thread holds as two 16x8 accumulators
// (the left and right 8 columns): attention's probabilities, straight from the scores.
template <bool kHalf>
__device__ inline void accumulators_as_a(std::uint32_t* a, const float* left, const float* right) {
    a[0] = pack<kHalf>(left[0], left[1]);
    a[1] = pack<kHalf>(left[2], left[3]);
    a[2] = pack<kHalf>(right[0], right[1]);
    a[3] = pack<kHalf>(right[2], right[3]);
}

// 16 bytes global -> shared, asynchronously; zeros when !valid (source then unread).
__device__ inline void copy16(void* shared, const void* global, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)),
                 "l"(global), "r"(valid ? 16 : 0));
}

__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ inline void wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// Rows row0.. of a head (row stride `stride` elements) into a tile; rows from `rows` on are 0.
template <int kDims>
__device__ inline void load_tile(std::uint16_t* tile, const std::uint16_t* head,
                                 std::int64_t stride, std::int64_t row0, std::int64_t rows) {
    constexpr int kPieces = kDims / 8;
    for (int c = static_cast<int>(threadIdx.x); c < kTile * kPieces; c += kThreads) {
        const int r = c / kPieces;
        const int column = (c % kPieces) * 8;
        const bool valid = row0 + r < rows;
        copy16(tile + r * Tile<kDims>::kStride + column,
               valid ? head + (row0 + r) * stride + column : head, valid);
    }
}

// Whether the tensor-core kernels take a call: 2-byte q/k/v/out rows whose 16-byte pieces are
// aligned, every key filled.
inline bool takes(const AttentionShape& shape, const void* const* buffers, int count) {
    return shape.key_lengths == nullptr &&
           attention_tiles::aligned_for_vectors(shape, buffers, count, 8);
}

// The cuda plugin's attention and attention_backward of dtype bf16 or f16 (lse in f32): the
// forward for head_dim 64 or 128 with more than 8 queries (decoding is left to the f32 kernels),
// the backward for head_dim 64. Any other call is declined (plugin::unsupported): the core then
// runs it in f32.
void attention_low_precision(kael_dtype dtype, const AttentionShape& shape, void* out, void* lse,
                             const void* q, const void* k, const void* v);
void attention_backward_low_precision(kael_dtype dtype, const AttentionShape& shape, void* grad_q,
                                      void* grad_k, void* grad_v, const void* grad_out,
                                      const void* q, const void* k, const void* v,
                                      const void* out, const void* lse);

}  // namespace kael::cuda::attention_mma
