// Attention for a few queries (decoding with a KV cache), in f32, bf16 or f16 (computed in
// f32). A block of eight warps takes one query row over one split of up to kSplitKeys keys, in
// chunks of 128 keys: each warp loads its 16 keys' K and V rows at once (lanes across the head
// dims, so each load is one coalesced row), then folds them into an online softmax. A cache of
// up to kSplitKeys slots is one split, so a decoding step is one launch; longer ones are split
// and merged by a second kernel. A bf16 cache is read as it is: decoding reads all of it. With
// cached_attention's append, the queries' own keys and values are read from their projection
// and stored into the cache by the same launch (no scatter before it).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <typeinfo>

#include "attention_tiles.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "element_cast.cuh"

namespace kael::cuda::attention_tiles {

namespace {

namespace tasks = kernels::tasks;

constexpr int kDecodeWarps = 8;
constexpr int kWarpKeys = 16;                         // keys a warp holds per chunk
constexpr int kChunkKeys = kDecodeWarps * kWarpKeys;  // 128
static_assert(kSplitKeys % kChunkKeys == 0);

// A split's softmax state in the log2 domain: top score, sum of exp2(score - top), and the
// weighted sums of V's rows (lane's dims lane + 32 * s).
template <int kSlots>
struct Running {
    float top = -INFINITY;
    float total = 0.F;
    float sums[kSlots] = {};
};

// The exp2 factor that moves a state kept against `from` to `to` (0 for an empty state).
__device__ inline float rescale(float from, float to) {
    return from == -INFINITY ? 0.F : exp2f(from - to);
}

// One head's rows of the queries' own keys and values (null: none), which stand for the
// cache's tokens from `first` on.
template <typename E>
struct OwnRows {
    const E* keys = nullptr;
    const E* values = nullptr;
    std::int64_t first = 0;
    std::int64_t key_stride = 0;
    std::int64_t value_stride = 0;
};

// Folds keys [first, first + kWarpKeys) below end of one head's k and v rows into a warp's
// state; q holds the query's dims (times the log2 scale) in the lane's slots.
template <int kSlots, typename E>
__device__ void fold_keys(Running<kSlots>& state, const AttentionShape& shape, std::int64_t first,
                          std::int64_t end, const E* k, const E* v, const OwnRows<E>& own,
                          const float (&q)[kSlots], int lane) {
    const int dims = static_cast<int>(shape.head_dim);
    float keys[kWarpKeys][kSlots];
    float values[kWarpKeys][kSlots];
    // Every load first, so that the warp's 32 rows stream together.
#pragma unroll
    for (int j = 0; j < kWarpKeys; ++j) {
        const std::int64_t key = first + j;
        // The queries' own tokens from their rows: the cache's copy is stored by this launch.
        const bool mine = own.keys != nullptr && key >= own.first;
        const E* k_row =
            mine ? own.keys + (key - own.first) * own.key_stride : k + key * shape.k[2];
        const E* v_row =
            mine ? own.values + (key - own.first) * own.value_stride : v + key * shape.v[2];
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
            const int d = lane + 32 * s;
            const bool there = key < end && d < dims;
            keys[j][s] = there ? as<float>(k_row[d]) : 0.F;
            values[j][s] = there ? as<float>(v_row[d]) : 0.F;
        }
    }
    float scores[kWarpKeys];
    float top = state.top;
#pragma unroll
    for (int j = 0; j < kWarpKeys; ++j) {
        float dot = 0.F;
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
            dot = fmaf(q[s], keys[j][s], dot);
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            dot += __shfl_xor_sync(0xffffffffU, dot, offset);
        }
        scores[j] = first + j < end ? dot : -INFINITY;  // the same on every lane
        top = fmaxf(top, scores[j]);
    }
    if (top == -INFINITY) {
        return;  // none of these keys is visible
    }
    const float keep = rescale(state.top, top);
    state.total *= keep;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
        state.sums[s] *= keep;
    }
#pragma unroll
    for (int j = 0; j < kWarpKeys; ++j) {
        const float p = exp2f(scores[j] - top);  // 0 for a masked key
        state.total += p;
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
            state.sums[s] = fmaf(p, values[j][s], state.sums[s]);
        }
    }
    state.top = top;
}

// One query row over keys [split * kSplitKeys, +kSplitKeys): with one split, out and lse
// directly; otherwise the split's (top, total, sums[dims]) into partials for the merge.
template <int kSlots, typename E>
__global__ void __launch_bounds__(kDecodeWarps * 32)
    attention_decode_split(AttentionShape shape, E* out, float* lse, float* partials,
                           std::int64_t splits, const E* q, const E* k, const E* v,
                           float scale_log2, CacheAppend append) {
    __shared__ float tops[kDecodeWarps];
    __shared__ float totals[kDecodeWarps];
    __shared__ float sums[kDecodeWarps][kSlots * 32];
    wait_for_earlier_grids();  // everything it reads was just written: q, the new key, lengths
    let_dependents_launch();
    const std::int64_t row = blockIdx.x / splits;
    const std::int64_t split = blockIdx.x % splits;
    const std::int64_t bh = row / shape.queries;
    const std::int64_t query = row % shape.queries;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int dims = static_cast<int>(shape.head_dim);
    const E* q_row = q + AttentionShape::at(shape.q, bh, shape.heads, query);
    float q_lane[kSlots];
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
        const int d = lane + 32 * s;
        q_lane[s] = d < dims ? as<float>(q_row[d]) * scale_log2 : 0.F;
    }
    const std::int64_t visible = shape.visible_keys(query, shape.filled_keys(bh));
    const std::int64_t begin = split * kSplitKeys;
    const std::int64_t end = tasks::min_of(begin + kSplitKeys, visible);
    const E* k_head = k + AttentionShape::at(shape.k, bh, shape.heads, 0);
    const E* v_head = v + AttentionShape::at(shape.v, bh, shape.heads, 0);
    OwnRows<E> own;
    if (append.keys != nullptr) {
        own = {
            static_cast<const E*>(append.keys) + AttentionShape::at(append.k, bh, shape.heads, 0),
            static_cast<const E*>(append.values) + AttentionShape::at(append.v, bh, shape.heads, 0),
            shape.filled_keys(bh) - shape.queries, append.k[2], append.v[2]};
        if (query == 0) {  // the head's first query row stores its split's share of them
            for (std::int64_t i = warp; i < shape.queries; i += kDecodeWarps) {
                const std::int64_t token = own.first + i;
                if (token >= begin && token < begin + kSplitKeys && token >= 0 &&
                    token < shape.keys) {
                    E* k_slot = static_cast<E*>(append.k_cache) +
                                AttentionShape::at(shape.k, bh, shape.heads, token);
                    E* v_slot = static_cast<E*>(append.v_cache) +
                                AttentionShape::at(shape.v, bh, shape.heads, token);
                    for (int d = lane; d < dims; d += 32) {
                        k_slot[d] = own.keys[i * own.key_stride + d];
                        v_slot[d] = own.values[i * own.value_stride + d];
                    }
                }
            }
        }
    }
    Running<kSlots> state;
    for (std::int64_t chunk = begin; chunk < end; chunk += kChunkKeys) {
        fold_keys(state, shape, chunk + warp * kWarpKeys, end, k_head, v_head, own, q_lane, lane);
    }
    if (lane == 0) {
        tops[warp] = state.top;
        totals[warp] = state.total;
    }
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
        sums[warp][lane + 32 * s] = state.sums[s];
    }
    __syncthreads();
    float top = -INFINITY;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) {
        top = fmaxf(top, tops[w]);
    }
    // Each warp's state moved to the block's top, once; then a thread per dim (head_dim is at
    // most kMaxDims, below the block's threads) sums the warps' weighted values.
    float keep[kDecodeWarps];
    float total = 0.F;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) {
        keep[w] = rescale(tops[w], top);
        total += totals[w] * keep[w];
    }
    static_assert(kMaxDims <= kDecodeWarps * 32);
    const int t = static_cast<int>(threadIdx.x);
    float sum = 0.F;
    if (t < dims) {
#pragma unroll
        for (int w = 0; w < kDecodeWarps; ++w) {
            sum += sums[w][t] * keep[w];
        }
    }
    if (splits == 1) {
        const float inverse = total == 0.F ? NAN : 1.F / total;  // no key visible: NaN, as torch
        if (t < dims) {
            out[AttentionShape::at(shape.out, bh, shape.heads, query) + t] = as<E>(sum * inverse);
        }
        if (t == 0) {
            lse[row] = (top + log2f(total)) * kLn2;
        }
        return;
    }
    // An empty split still writes its zeros: the merge weighs every split.
    float* partial = partials + (row * splits + split) * (kMaxDims + 2);
    if (t < dims) {
        partial[2 + t] = sum;
    }
    if (t == 0) {
        partial[0] = top;
        partial[1] = total;
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

template <typename E, int kSlots>
void launch(const AttentionShape& shape, void* out_data, float* lse, const void* q_data,
            const void* k_data, const void* v_data, const CacheAppend& append) {
    auto* const out = static_cast<E*>(out_data);
    const auto* const q = static_cast<const E*>(q_data);
    const auto* const k = static_cast<const E*>(k_data);
    const auto* const v = static_cast<const E*>(v_data);
    const auto scale_log2 = static_cast<float>(shape.scale * 1.4426950408889634);
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    const std::int64_t splits = (shape.keys + kSplitKeys - 1) / kSplitKeys;
    float* const partials =
        splits == 1
            ? nullptr
            : static_cast<float*>(device_malloc(rows * splits * (kMaxDims + 2) * std::int64_t{4}));
    launch_early(&attention_decode_split<kSlots, E>, static_cast<unsigned>(rows * splits),
                 kDecodeWarps * 32, shape, out, lse, partials, splits, q, k, v, scale_log2, append);
    if (splits == 1) {
        return;
    }
    attention_decode_merge<E><<<static_cast<unsigned>(blocks_for(rows, kThreadsPerBlock / 32)),
                                kThreadsPerBlock, 0, launch_stream()>>>(shape, out, lse, partials,
                                                                        splits, rows);
    check_launch(typeid(&attention_decode_merge<E>), __FILE__, __LINE__);
    device_free(partials);  // stream-ordered: after the merge
}

template <typename E>
void launch_slots(const AttentionShape& shape, void* out, float* lse, const void* q, const void* k,
                  const void* v, const CacheAppend& append) {
    // Registers for 64 dims a lane's two slots, for 128 its four.
    if (shape.head_dim <= 64) {
        launch<E, 2>(shape, out, lse, q, k, v, append);
    } else {
        launch<E, 4>(shape, out, lse, q, k, v, append);
    }
}

}  // namespace

void launch_decode(kael_dtype dtype, const AttentionShape& shape, void* out, float* lse,
                   const void* q, const void* k, const void* v, const CacheAppend& append) {
    if (dtype == KAEL_DTYPE_BF16) {
        launch_slots<__nv_bfloat16>(shape, out, lse, q, k, v, append);
    } else if (dtype == KAEL_DTYPE_F16) {
        launch_slots<__half>(shape, out, lse, q, k, v, append);
    } else {
        launch_slots<float>(shape, out, lse, q, k, v, append);
    }
}

}  // namespace kael::cuda::attention_tiles
