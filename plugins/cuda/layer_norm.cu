// layer_norm forward: one warp per row held in registers (16-byte loads, two-pass mean and
// variance without a second read), else one block per row read from memory. bf16/f16 rows are
// read and written as they are and computed in f32 (mean and rstd f32), as PyTorch does.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/layer_norm.h"
#include "layer_norm_rows.cuh"

namespace kael::cuda {
namespace {

using namespace layer_norm_rows;

// S: how out, x, weight and bias are stored (T, or bf16/f16 computed in T = f32); mean and rstd
// are T.
template <typename S, typename T>
struct ForwardArgs {
    S* out;
    T* mean;
    T* rstd;
    const S* x;
    const S* weight;  // may be null
    const S* bias;    // may be null
    std::int64_t rows;
    std::int64_t columns;
    T eps;
};

// Up to this many rows (a decoding step's) launch early in recorded graphs (launch_early) and
// let the next kernel launch at once. Not more: a grid of many blocks would share its SMs with
// the next kernel's waiting blocks (16384 rows of 768 went 41-48 -> 62 us so on an H100).
constexpr std::int64_t kEarlyRows = 64;

template <typename S, typename T, int kChunks>
__global__ void __launch_bounds__(kRowThreads) layer_norm_in_registers(ForwardArgs<S, T> a) {
    constexpr int kWidth = kPackWidth<S>;
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
    const T count = static_cast<T>(a.columns);
    const auto* weight = reinterpret_cast<const Pack<S>*>(a.weight);
    const auto* bias = reinterpret_cast<const Pack<S>*>(a.bias);
    if (a.rows <= kEarlyRows) {        // uniform: launched early (run_layer_norm)
        if constexpr (kChunks <= 8) {  // weight and bias into L2 while the kernel before runs
            for (int chunk = 0; chunk < kChunks; ++chunk) {
                const std::int64_t pack = chunk * kWarp + lane;
                if (pack * kWidth < a.columns && weight != nullptr) {
                    prefetch_l2(weight + pack);
                }
                if (pack * kWidth < a.columns && bias != nullptr) {
                    prefetch_l2(bias + pack);
                }
            }
        }
        wait_for_earlier_grids();
        let_dependents_launch();
    }
    for (std::int64_t row = blockIdx.x * std::int64_t{kWarpsPerBlock} + threadIdx.x / kWarp;
         row < a.rows; row += warps) {
        const auto* x = reinterpret_cast<const Pack<S>*>(a.x + row * a.columns);
        Pack<S> values[kChunks] = {};
        // weight and bias are loaded with x, not after the two reductions: a row or two (a
        // decoding step) would otherwise wait for memory twice. Long rows keep the registers.
        constexpr bool kEarly = kChunks <= 8;
        constexpr int kHeld = kEarly ? kChunks : 1;
        Pack<S> scales[kHeld] = {};
        Pack<S> shifts[kHeld] = {};
        T sum = 0;
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            const std::int64_t pack = chunk * kWarp + lane;
            if (pack * kWidth < a.columns) {
                values[chunk] = x[pack];
                if constexpr (kEarly) {
                    if (weight != nullptr) {
                        scales[chunk] = weight[pack];
                    }
                    if (bias != nullptr) {
                        shifts[chunk] = bias[pack];
                    }
                }
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    sum += as<T>(values[chunk].v[i]);
                }
            }
        }
        const T mean = warp_sum(sum) / count;
        T squares = 0;
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            if ((chunk * kWarp + lane) * std::int64_t{kWidth} < a.columns) {
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    const T centered = as<T>(values[chunk].v[i]) - mean;
                    squares += centered * centered;
                }
            }
        }
        const T rstd = reciprocal_sqrt(warp_sum(squares) / count + a.eps);
        if (lane == 0) {
            a.mean[row] = mean;
            a.rstd[row] = rstd;
        }
        auto* out = reinterpret_cast<Pack<S>*>(a.out + row * a.columns);
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            const std::int64_t pack = chunk * kWarp + lane;
            if (pack * kWidth < a.columns) {
                Pack<S> result;
                Pack<S> scale{};
                Pack<S> shift{};
                if constexpr (kEarly) {
                    scale = scales[chunk];
                    shift = shifts[chunk];
                } else {
                    scale = weight != nullptr ? weight[pack] : Pack<S>{};
                    shift = bias != nullptr ? bias[pack] : Pack<S>{};
                }
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    T value = (as<T>(values[chunk].v[i]) - mean) * rstd;
                    value = weight != nullptr ? value * as<T>(scale.v[i]) : value;
                    result.v[i] = as<S>(bias != nullptr ? value + as<T>(shift.v[i]) : value);
                }
                out[pack] = result;
            }
        }
    }
}

template <typename S, typename T>
__global__ void __launch_bounds__(512) layer_norm_in_memory(ForwardArgs<S, T> a) {
    __shared__ T scratch[kWarp];
    const T count = static_cast<T>(a.columns);
    for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const S* x = a.x + row * a.columns;
        T sum = 0;
        for (std::int64_t i = threadIdx.x; i < a.columns; i += blockDim.x) {
            sum += as<T>(x[i]);
        }
        const T mean = block_sum(sum, scratch) / count;
        T squares = 0;
        for (std::int64_t i = threadIdx.x; i < a.columns; i += blockDim.x) {
            const T centered = as<T>(x[i]) - mean;
            squares += centered * centered;
        }
        const T rstd = reciprocal_sqrt(block_sum(squares, scratch) / count + a.eps);
        if (threadIdx.x == 0) {
            a.mean[row] = mean;
            a.rstd[row] = rstd;
        }
        S* out = a.out + row * a.columns;
        for (std::int64_t i = threadIdx.x; i < a.columns; i += blockDim.x) {
            T value = (as<T>(x[i]) - mean) * rstd;
            value = a.weight != nullptr ? value * as<T>(a.weight[i]) : value;
            out[i] = as<S>(a.bias != nullptr ? value + as<T>(a.bias[i]) : value);
        }
    }
}

template <typename S, typename T>
void run_layer_norm(const ForwardArgs<S, T>& args) {
    const int chunks =
        register_chunks<S, kMaxForwardChunks>(args.columns,
                                             {args.out, args.x, args.weight, args.bias});
    if (chunks > 0) {
        with_chunks<kMaxForwardChunks>(chunks, [&](auto constant) {
            const auto kernel = &layer_norm_in_registers<S, T, decltype(constant)::value>;
            const int blocks = warp_row_grid(reinterpret_cast<const void*>(kernel), args.rows);
            if (args.rows <= kEarlyRows) {
                launch_early(kernel, blocks, kRowThreads, args);
                return;
            }
            kernel<<<blocks, kRowThreads, 0, launch_stream()>>>(args);
            check_launch(typeid(ForwardArgs<S, T>), __FILE__, __LINE__);
        });
        return;
    }
    const int threads = threads_for_row(args.columns);
    layer_norm_in_memory<S, T>
        <<<block_row_grid(args.rows, threads), threads, 0, launch_stream()>>>(args);
    check_launch(typeid(ForwardArgs<S, T>), __FILE__, __LINE__);
}

}  // namespace

kael_status layer_norm(int32_t device, kael_dtype dtype, void* out, void* mean, void* rstd,
                       const void* x, const void* weight, const void* bias, int64_t rows,
                       int64_t columns, double eps) {
    return plugin::guarded("cuda.layer_norm", [&] {
        use_device(device);
        if (!kernels::tasks::check_layer_norm_call(dtype, out, mean, rstd, x, rows, columns,
                                                   true)) {
            return;
        }
        const auto run = [&](auto stored, auto zero) {
            using S = decltype(stored);
            using T = decltype(zero);
            run_layer_norm<S, T>({static_cast<S*>(out), static_cast<T*>(mean),
                                  static_cast<T*>(rstd), static_cast<const S*>(x),
                                  static_cast<const S*>(weight), static_cast<const S*>(bias),
                                  rows, columns, static_cast<T>(eps)});
        };
        switch (dtype) {
            case KAEL_DTYPE_BF16: return run(__nv_bfloat16{}, 0.0F);
            case KAEL_DTYPE_F16: return run(__half{}, 0.0F);
            case KAEL_DTYPE_F32: return run(0.0F, 0.0F);
            default: return run(0.0, 0.0);
        }
    });
}

}  // namespace kael::cuda
