// One-row products out = x W^T (+ bias): a warp per output element, its weight row read with
// 16-byte loads all issued before the first multiply, so that the row streams from memory. A
// decoding step of a small model is little else (GPT-2 small reads 500 MB of weights a token).
// f32, bf16 and f16 (computed in f32, rounded once with the epilogue applied). With a layer norm
// before the product (KAEL_EXTENSION_DECODING's layer_norm_linear), each warp normalises the row
// itself as layer_norm's kernel does, so its packs never go through memory.
#include <cstdint>
#include <type_traits>
#include <typeinfo>

#include "cuda_launch.cuh"
#include "element_cast.cuh"
#include "gemv.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/plugin_support.h"
#include "layer_norm_rows.cuh"

namespace kael::cuda {
namespace {

constexpr int kRowWarps = 4;   // warps per block
constexpr int kLanePacks = 8;  // 16-byte packs of a weight row a lane loads, at most
constexpr int kFewPacks = 4;   // ... and as many as a lane loads where more warps can share a row
// Packs a lane holds where a warp normalises its row first: 1024 elements (GPT-2 medium's
// width), in registers that leave a few blocks resident per multiprocessor.
template <typename E>
inline constexpr int kNormPacks = 1024 / (32 * (16 / static_cast<int>(sizeof(E))));

// A lane loads all of its packs before it multiplies any, so a warp has its whole slice in
// flight at once; x comes through the cache.
// sum + w . v over one 16-byte pack of E (4 f32 or 8 bf16/f16).
template <typename E>
__device__ inline float dot_pack(const float4& w_bits, const float4& v_bits, float sum) {
    if constexpr (std::is_same_v<E, float>) {
        sum = fmaf(w_bits.x, v_bits.x, sum);
        sum = fmaf(w_bits.y, v_bits.y, sum);
        sum = fmaf(w_bits.z, v_bits.z, sum);
        return fmaf(w_bits.w, v_bits.w, sum);
    } else {
        E w[8];
        E v[8];
        __builtin_memcpy(w, &w_bits, sizeof w);
        __builtin_memcpy(v, &v_bits, sizeof v);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            sum = fmaf(as<float>(w[i]), as<float>(v[i]), sum);
        }
        return sum;
    }
}

// The layer norm in front of a product (inner elements; weight and bias may be null).
struct RowNorm {
    const float4* weight;
    const float4* bias;
    float eps;
    int inner;
};

// The packs lane + 32 i of the row x normalised as layer_norm_in_registers does it for a row
// (the same sums in the same order, so the same bits), rounded to E; zero past packs.
template <int kPacks, typename E>
__device__ void normalize_packs(const float4* __restrict__ x, const RowNorm& norm, int packs,
                                int lane, float4 (&v)[kPacks]) {
    constexpr int kWidth = 16 / sizeof(E);
    float sum = 0.F;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
        const int pack = lane + 32 * i;
        v[i] = float4{};
        if (pack < packs) {
            v[i] = __ldg(x + pack);
            E e[kWidth];
            __builtin_memcpy(e, &v[i], sizeof e);
#pragma unroll
            for (int k = 0; k < kWidth; ++k) {
                sum += as<float>(e[k]);
            }
        }
    }
    const auto count = static_cast<float>(norm.inner);
    const float mean = layer_norm_rows::warp_sum(sum) / count;
    float squares = 0.F;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
        if (lane + 32 * i < packs) {
            E e[kWidth];
            __builtin_memcpy(e, &v[i], sizeof e);
#pragma unroll
            for (int k = 0; k < kWidth; ++k) {
                const float centered = as<float>(e[k]) - mean;
                squares += centered * centered;
            }
        }
    }
    const float rstd =
        layer_norm_rows::reciprocal_sqrt(layer_norm_rows::warp_sum(squares) / count + norm.eps);
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
        const int pack = lane + 32 * i;
        if (pack < packs) {
            // The norm's weight and bias after the sums (cached: every block reads them), so
            // that few registers are live across them.
            const float4 scales = norm.weight != nullptr ? __ldg(norm.weight + pack) : float4{};
            const float4 shifts = norm.bias != nullptr ? __ldg(norm.bias + pack) : float4{};
            E e[kWidth];
            E scale[kWidth];
            E shift[kWidth];
            __builtin_memcpy(e, &v[i], sizeof e);
            __builtin_memcpy(scale, &scales, sizeof scale);
            __builtin_memcpy(shift, &shifts, sizeof shift);
#pragma unroll
            for (int k = 0; k < kWidth; ++k) {
                float value = (as<float>(e[k]) - mean) * rstd;
                value = norm.weight != nullptr ? value * as<float>(scale[k]) : value;
                e[k] = as<E>(norm.bias != nullptr ? value + as<float>(shift[k]) : value);
            }
            __builtin_memcpy(&v[i], e, sizeof e);
        }
    }
}

// A block's four warps share its columns: parts warps (1, 2 or 4) to a column, each a
// contiguous slice of at most kPacks * 32 packs of its row, so a long row (a 3072-wide input)
// is read by more warps, each with few loads, instead of by one warp with many. kNormed: x
// goes through norm first (parts is then 1: each warp normalises the whole row).
// Blocks resident a multiprocessor: eight plain ones (64 registers, what they use anyway),
// six normalising ones, so that GPT-2's 2304- and 3072-column products run in one wave.
template <int kPacks, typename E, bool kNormed>
__global__ void __launch_bounds__(kRowWarps * 32, kNormed ? 6 : 8)
    gemv_rows(const float4* __restrict__ x, const float4* __restrict__ weight,
              const E* __restrict__ bias, const E* __restrict__ residual, E* __restrict__ out,
              int columns, int packs, int parts, int activation, RowNorm norm) {
    __shared__ float partial_sums[kRowWarps];
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int column = static_cast<int>(blockIdx.x) * (kRowWarps / parts) + warp / parts;
    const int part = warp % parts;
    const int per_part = (packs + parts - 1) / parts;
    const int first = part * per_part;
    const int last = min(packs, first + per_part);
    const float4* row = weight + static_cast<std::int64_t>(min(column, columns - 1)) * packs;
    // The weights stream into L2 while the kernel before (which writes x) still runs.
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
        prefetch_l2(row + min(first + lane + 32 * i, last - 1));
    }
    wait_for_earlier_grids();
    let_dependents_launch();
    float sum = 0.F;
    float4 w[kPacks];
    float4 v[kPacks];
    if (column < columns) {
        // Loads past the slice reread its last pack, so that every load is unconditional and
        // issued up front; their products are dropped.
#pragma unroll
        for (int i = 0; i < kPacks; ++i) {
            const int p = min(first + lane + 32 * i, last - 1);
            w[i] = __ldg(row + p);
            if constexpr (!kNormed) {
                v[i] = __ldg(x + p);
            }
        }
    }
    if constexpr (kNormed) {  // while the weights load; the column is the same for the warp
        normalize_packs<kPacks, E>(x, norm, packs, lane, v);
    }
    if (column < columns) {
#pragma unroll
        for (int i = 0; i < kPacks; ++i) {  // a select, not a branch: the loads stay hoisted
            const float term = dot_pack<E>(w[i], v[i], 0.F);
            sum += first + lane + 32 * i < last ? term : 0.F;
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            sum += __shfl_xor_sync(0xffffffffU, sum, offset);
        }
    }
    if (parts > 1) {
        if (lane == 0) {
            partial_sums[warp] = sum;
        }
        __syncthreads();
        if (part != 0 || lane != 0) {
            return;
        }
        for (int other = 1; other < parts; ++other) {
            sum += partial_sums[warp + other];
        }
    }
    if (lane == 0 && column < columns) {
        float value = bias != nullptr ? sum + as<float>(bias[column]) : sum;
        value = activation == KAEL_ACTIVATION_GELU_TANH ? kernels::GeluTanh<float>{}(value) : value;
        out[column] = as<E>(residual != nullptr ? value + as<float>(residual[column]) : value);
    }
}

template <typename T>
struct Epilogue {
    T* out;
    const T* residual;
    int activation;

    KAEL_HD void operator()(std::int64_t i) const {
        if constexpr (kernels::is_low_precision_v<T>) {  // in f32, rounded once
            float value = kernels::to_float(out[i]);
            value = activation == KAEL_ACTIVATION_GELU_TANH ? kernels::GeluTanh<float>{}(value)
                                                            : value;
            value += residual != nullptr ? kernels::to_float(residual[i]) : 0.0F;
            out[i] = kernels::from_float<T>(value);
        } else {
            T value = out[i];
            if constexpr (!std::is_same_v<T, std::int64_t>) {
                value = activation == KAEL_ACTIVATION_GELU_TANH ? kernels::GeluTanh<T>{}(value)
                                                                : value;
            }
            out[i] = residual != nullptr ? value + residual[i] : value;
        }
    }
};

bool aligned(const void* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

bool enabled() {
    static const bool on = !env_is_zero("KAEL_CUDA_GEMV");
    return on;
}

// gemv, with norm (norm.inner > 0) before the product when given.
bool gemv_normed(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
                 const kael_matmul_sizes& s, const void* residual, int activation,
                 const RowNorm& norm) {
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    const std::int64_t per_pack = low ? 8 : 4;  // elements a 16-byte pack
    const bool normed = norm.inner > 0;
    // A normalising warp holds its whole row, 1024 elements at most (kNormPacks a lane).
    const std::int64_t widest = normed ? 1024 : per_pack * 32 * kLanePacks * kRowWarps;
    if ((dtype != KAEL_DTYPE_F32 && !low) || s.batches != 1 || s.rows != 1 || s.b_transposed == 0 ||
        s.inner % per_pack != 0 || s.inner > widest || s.columns > INT32_MAX || !aligned(a) ||
        !aligned(b) || !aligned(norm.weight) || !aligned(norm.bias) || !enabled()) {
        return false;
    }
    const auto packs = static_cast<int>(s.inner / per_pack);
    const auto columns = static_cast<int>(s.columns);
    // The fewest warps per column that leave each lane kFewPacks packs (GPT-2's 768-wide
    // rows one warp, its 3072-wide rows four), or kLanePacks where four warps need more.
    const int parts = normed ? 1 : packs <= 32 * kFewPacks ? 1 : packs <= 64 * kFewPacks ? 2 : 4;
    const int per_block = kRowWarps / parts;
    const auto blocks = static_cast<unsigned>((columns + per_block - 1) / per_block);
    const auto run = [&](auto element, auto with_norm) {
        using E = decltype(element);
        constexpr bool kNormed = decltype(with_norm)::value;
        constexpr int kPacks = kNormed ? kNormPacks<E> : kLanePacks;
        launch_early(&gemv_rows<kPacks, E, kNormed>, blocks, kRowWarps * 32,
                     static_cast<const float4*>(a), static_cast<const float4*>(b),
                     static_cast<const E*>(bias), static_cast<const E*>(residual),
                     static_cast<E*>(out), columns, packs, parts, activation, norm);
    };
    const auto typed = [&](auto with_norm) {
        if (dtype == KAEL_DTYPE_BF16) {
            run(__nv_bfloat16{}, with_norm);
        } else if (dtype == KAEL_DTYPE_F16) {
            run(__half{}, with_norm);
        } else {
            run(0.0F, with_norm);
        }
    };
    if (normed) {
        typed(std::true_type{});
    } else {
        typed(std::false_type{});
    }
    return true;
}

}  // namespace

// KAEL_EXTENSION_DECODING's layer_norm_linear: one row, as gemv takes it; others declined.
kael_status layer_norm_linear(int32_t device, kael_dtype dtype, const void* a,
                              const void* norm_weight, const void* norm_bias, double eps,
                              const void* b, const void* bias, const void* residual, void* out,
                              const kael_matmul_sizes* sizes, int32_t activation) {
    return plugin::guarded("cuda.layer_norm_linear", [&] {
        use_device(device);
        if (sizes == nullptr || sizes->struct_size < KAEL_MATMUL_SIZES_SIZE_1_0 || a == nullptr ||
            b == nullptr || out == nullptr || sizes->inner <= 0 || sizes->inner > INT32_MAX ||
            !(eps >= 0) ||
            (activation != KAEL_ACTIVATION_NONE && activation != KAEL_ACTIVATION_GELU_TANH)) {
            plugin::invalid("layer_norm_linear: invalid arguments");
        }
        const RowNorm norm{static_cast<const float4*>(norm_weight),
                           static_cast<const float4*>(norm_bias), static_cast<float>(eps),
                           static_cast<int>(sizes->inner)};
        // KAEL_CUDA_FUSED_NORM=0 declines every call (to compare with the composed ops).
        static const bool fused = !env_is_zero("KAEL_CUDA_FUSED_NORM");
        if (!fused || sizes->a_transposed != 0 ||
            !gemv_normed(dtype, a, b, bias, out, *sizes, residual, activation, norm)) {
            plugin::unsupported("layer_norm_linear takes one row of f32, bf16 or f16 here");
        }
    });
}

bool gemv(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
          const kael_matmul_sizes& s, const void* residual, int activation) {
    return gemv_normed(dtype, a, b, bias, out, s, residual, activation, RowNorm{});
}

void apply_epilogue(kael_dtype dtype, void* out, const void* residual, std::int64_t count,
                    int activation) {
    if (residual == nullptr && activation == KAEL_ACTIVATION_NONE) {
        return;
    }
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        Launcher::for_each(
            count, Epilogue<T>{static_cast<T*>(out), static_cast<const T*>(residual), activation});
    };
    if (dtype == KAEL_DTYPE_F32) {
        run(0.0F);
    } else if (dtype == KAEL_DTYPE_BF16) {
        run(kernels::BFloat16{});
    } else if (dtype == KAEL_DTYPE_F16) {
        run(kernels::Half{});
    } else if (dtype == KAEL_DTYPE_F64) {
        run(0.0);
    } else {
        run(std::int64_t{0});
    }
}

}  // namespace kael::cuda
