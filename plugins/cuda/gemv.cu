// One-row products out = x W^T (+ bias): a warp per output element, its weight row read with
// 16-byte loads all issued before the first multiply, so that the row streams from memory. A
// decoding step of a small model is little else (GPT-2 small reads 500 MB of weights a token).
// f32, bf16 and f16 (computed in f32, rounded once with the epilogue applied).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <typeinfo>

#include "cuda_launch.cuh"
#include "element_cast.cuh"
#include "gemv.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/low_precision.h"

namespace kael::cuda {
namespace {

constexpr int kRowWarps = 4;  // output elements per block

// kPacks: 16-byte packs of a weight row per lane, at most. A lane loads all of its packs before
// it multiplies any, so a warp has its whole row in flight at once; x comes through the cache.
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

template <int kPacks, typename E>
__global__ void __launch_bounds__(kRowWarps * 32)
    gemv_rows(const float4* __restrict__ x, const float4* __restrict__ weight,
              const E* __restrict__ bias, const E* __restrict__ residual, E* __restrict__ out,
              int columns, int packs, int activation) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int column =
        static_cast<int>(blockIdx.x) * kRowWarps + static_cast<int>(threadIdx.x) / 32;
    if (column >= columns) {
        return;
    }
    const float4* row = weight + static_cast<std::int64_t>(column) * packs;
    float4 w[kPacks];
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
        const int p = lane + 32 * i;
        w[i] = p < packs ? __ldg(row + p) : make_float4(0.F, 0.F, 0.F, 0.F);
    }
    float sum = 0.F;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
        const int p = lane + 32 * i;
        if (p < packs) {
            sum = dot_pack<E>(w[i], __ldg(x + p), sum);
        }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffU, sum, offset);
    }
    if (lane == 0) {
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
    static const bool on = [] {
        const char* setting = std::getenv("KAEL_CUDA_GEMV");
        return setting == nullptr || std::strcmp(setting, "0") != 0;
    }();
    return on;
}

}  // namespace

bool gemv(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
          const kael_matmul_sizes& s, const void* residual, int activation) {
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    const std::int64_t per_pack = low ? 8 : 4;  // elements a 16-byte pack
    if ((dtype != KAEL_DTYPE_F32 && !low) || s.batches != 1 || s.rows != 1 ||
        s.b_transposed == 0 || s.inner % per_pack != 0 || s.inner > per_pack * 32 * 24 ||
        s.columns > INT32_MAX || !aligned(a) || !aligned(b) || !enabled()) {
        return false;
    }
    const auto packs = static_cast<int>(s.inner / per_pack);
    const auto columns = static_cast<int>(s.columns);
    const auto blocks = static_cast<unsigned>((columns + kRowWarps - 1) / kRowWarps);
    const auto run = [&](auto element) {
        using E = decltype(element);
        const auto launch = [&](auto kernel) {
            kernel<<<blocks, kRowWarps * 32, 0, launch_stream()>>>(
                static_cast<const float4*>(a), static_cast<const float4*>(b),
                static_cast<const E*>(bias), static_cast<const E*>(residual),
                static_cast<E*>(out), columns, packs, activation);
            check_launch(typeid(kernel), __FILE__, __LINE__);
        };
        // Rows of at most 256 packs (GPT-2's 768) and of at most 768 (its 4 x 768): two
        // register budgets.
        packs <= 32 * 8 ? launch(&gemv_rows<8, E>) : launch(&gemv_rows<24, E>);
    };
    if (dtype == KAEL_DTYPE_BF16) {
        run(__nv_bfloat16{});
    } else if (dtype == KAEL_DTYPE_F16) {
        run(__half{});
    } else {
        run(0.0F);
    }
    return true;
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
