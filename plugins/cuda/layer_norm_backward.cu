// layer_norm backward. grad_x: one warp per row held in registers, else one block per row read
// from memory. grad_weight and grad_bias: partial column sums in scratch, one partial row per
// block, then sum_partials adds them in a fixed order: deterministic, no atomics, no host sync.
// Rows in registers give their partials in the same pass (each warp keeps running sums of its
// columns in shared memory, and the block adds its warps' sums in warp order); other rows take a
// column pass.
#include <algorithm>
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/layer_norm.h"
#include "layer_norm_rows.cuh"

namespace kael::cuda {
namespace {

using namespace layer_norm_rows;
namespace tasks = kernels::tasks;

template <typename T>
struct BackwardArgs {
    T* grad_x;  // may be null
    const T* grad_out;
    const T* x;
    const T* mean;
    const T* rstd;
    const T* weight;  // may be null: ones
    std::int64_t rows;
    std::int64_t columns;
};

// kParameters: also the parameters' partial sums, gridDim.x rows of 2 * columns in partials
// (weight sums, then bias sums). Each warp keeps running sums of its rows' columns in its own
// shared row (kWarpsPerBlock * 2 * columns T of dynamic shared memory: registers would spill),
// and the block adds its warps' rows in warp order after one barrier.
template <typename T, int kChunks, bool kParameters>
__global__ void __launch_bounds__(kRowThreads, kChunks < kMaxChunks ? 3 : 2)
    layer_norm_backward_in_registers(BackwardArgs<T> a, T* partials) {
    constexpr int kWidth = kPackWidth<T>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const int warp = static_cast<int>(threadIdx.x) / kWarp;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
    const T count = static_cast<T>(a.columns);
    const auto* weight = reinterpret_cast<const Pack<T>*>(a.weight);
    const std::int64_t width = 2 * a.columns;
    T* const block_sums = reinterpret_cast<T*>(shared_bytes);
    T* const weight_sums = block_sums + warp * width;  // this warp's row; bias sums follow
    if constexpr (kParameters) {
        for (std::int64_t i = lane; i < width; i += kWarp) {
            weight_sums[i] = 0;
        }
        __syncwarp();
    }
    for (std::int64_t row = blockIdx.x * std::int64_t{kWarpsPerBlock} + warp; row < a.rows;
         row += warps) {
        const auto* x = reinterpret_cast<const Pack<T>*>(a.x + row * a.columns);
        const auto* grad = reinterpret_cast<const Pack<T>*>(a.grad_out + row * a.columns);
        const T mean = a.mean[row];
        const T rstd = a.rstd[row];
        Pack<T> xhat[kChunks] = {};
        Pack<T> g[kChunks] = {};
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            const std::int64_t pack = chunk * kWarp + lane;
            if (pack * kWidth < a.columns) {
                xhat[chunk] = x[pack];
                g[chunk] = grad[pack];
            }
        }
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            const std::int64_t pack = chunk * kWarp + lane;
            if (pack * kWidth < a.columns) {
                auto* const sums = reinterpret_cast<Pack<T>*>(weight_sums) + pack;
                Pack<T> weight_sum = {};
                Pack<T> bias_sum = {};
                if constexpr (kParameters) {
                    weight_sum = sums[0];
                    bias_sum = sums[a.columns / kWidth];
                }
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    xhat[chunk].v[i] = (xhat[chunk].v[i] - mean) * rstd;
                    weight_sum.v[i] += g[chunk].v[i] * xhat[chunk].v[i];
                    bias_sum.v[i] += g[chunk].v[i];
                }
                if constexpr (kParameters) {
                    sums[0] = weight_sum;
                    sums[a.columns / kWidth] = bias_sum;
                }
            }
        }
        if (a.grad_x == nullptr) {
            continue;
        }
        T sum_g = 0;
        T sum_g_xhat = 0;
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            const std::int64_t pack = chunk * kWarp + lane;
            if (pack * kWidth < a.columns && weight != nullptr) {
                const Pack<T> scale = weight[pack];
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    g[chunk].v[i] *= scale.v[i];
                }
            }
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {  // zeros past the row's end add nothing
                sum_g += g[chunk].v[i];
                sum_g_xhat += g[chunk].v[i] * xhat[chunk].v[i];
            }
        }
        const T mean_g = warp_sum(sum_g) / count;
        const T mean_g_xhat = warp_sum(sum_g_xhat) / count;
        auto* out = reinterpret_cast<Pack<T>*>(a.grad_x + row * a.columns);
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
            const std::int64_t pack = chunk * kWarp + lane;
            if (pack * kWidth < a.columns) {
                Pack<T> result;
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    result.v[i] =
                        rstd * (g[chunk].v[i] - mean_g - xhat[chunk].v[i] * mean_g_xhat);
                }
                out[pack] = result;
            }
        }
    }
    if constexpr (kParameters) {
        __syncthreads();
        T* const target = partials + blockIdx.x * width;
        for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
            T total = 0;
            for (int w = 0; w < kWarpsPerBlock; ++w) {
                total += block_sums[w * width + i];
            }
            target[i] = total;
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(512) layer_norm_backward_in_memory(BackwardArgs<T> a) {
    __shared__ T scratch[kWarp];
    const T count = static_cast<T>(a.columns);
    for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const std::int64_t offset = row * a.columns;
        const T mean = a.mean[row];
        const T rstd = a.rstd[row];
        T sum_g = 0;
        T sum_g_xhat = 0;
        for (std::int64_t i = threadIdx.x; i < a.columns; i += blockDim.x) {
            const T g = a.weight != nullptr ? a.grad_out[offset + i] * a.weight[i]
                                            : a.grad_out[offset + i];
            sum_g += g;
            sum_g_xhat += g * ((a.x[offset + i] - mean) * rstd);
        }
        const T mean_g = block_sum(sum_g, scratch) / count;
        const T mean_g_xhat = block_sum(sum_g_xhat, scratch) / count;
        for (std::int64_t i = threadIdx.x; i < a.columns; i += blockDim.x) {
            const T g = a.weight != nullptr ? a.grad_out[offset + i] * a.weight[i]
                                            : a.grad_out[offset + i];
            const T xhat = (a.x[offset + i] - mean) * rstd;
            a.grad_x[offset + i] = rstd * (g - mean_g - xhat * mean_g_xhat);
        }
    }
}

constexpr int kTileColumns = 32;
constexpr int kTileRows = 8;

// Block (32 columns x 8 lanes of rows) over rows [blockIdx.y * rows_per_group, ...) of 32
// columns: one partial row (2 * columns wide) per row group.
template <typename T>
__global__ void __launch_bounds__(kTileColumns* kTileRows)
    layer_norm_column_partials(BackwardArgs<T> a, T* partials, std::int64_t rows_per_group) {
    __shared__ T sums[2][kTileRows][kTileColumns + 1];
    const std::int64_t column = blockIdx.x * std::int64_t{kTileColumns} + threadIdx.x;
    const std::int64_t begin = blockIdx.y * rows_per_group;
    const std::int64_t end = tasks::min_of(a.rows, begin + rows_per_group);
    T weight_sum = 0;
    T bias_sum = 0;
    if (column < a.columns) {
        for (std::int64_t row = begin + threadIdx.y; row < end; row += kTileRows) {
            const std::int64_t at = row * a.columns + column;
            const T g = a.grad_out[at];
            weight_sum += g * ((a.x[at] - a.mean[row]) * a.rstd[row]);
            bias_sum += g;
        }
    }
    sums[0][threadIdx.y][threadIdx.x] = weight_sum;
    sums[1][threadIdx.y][threadIdx.x] = bias_sum;
    __syncthreads();
    if (threadIdx.y < 2 && column < a.columns) {
        T total = 0;
        for (int lane = 0; lane < kTileRows; ++lane) {
            total += sums[threadIdx.y][lane][threadIdx.x];
        }
        partials[blockIdx.y * 2 * a.columns + threadIdx.y * a.columns + column] = total;
    }
}

// grad_weight[c] / grad_bias[c] = the sum over count partial rows, 32 entries per block, each
// column's partials split over 32 lanes and the lanes added in order. count 0 gives zeros.
template <typename T>
__global__ void __launch_bounds__(kWarp* kWarp)
    sum_partials(const T* partials, std::int64_t count, std::int64_t columns, T* grad_weight,
                 T* grad_bias) {
    __shared__ T sums[kWarp][kWarp + 1];
    const std::int64_t entry = blockIdx.x * std::int64_t{kWarp} + threadIdx.x;
    const std::int64_t width = 2 * columns;
    T total = 0;
    if (entry < width) {
        for (std::int64_t p = threadIdx.y; p < count; p += kWarp) {
            total += partials[p * width + entry];
        }
    }
    sums[threadIdx.y][threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.y != 0 || entry >= width) {
        return;
    }
    total = 0;
    for (int lane = 0; lane < kWarp; ++lane) {
        total += sums[lane][threadIdx.x];
    }
    T* const target = entry < columns ? grad_weight : grad_bias;
    if (target != nullptr) {
        target[entry < columns ? entry : entry - columns] = total;
    }
}

template <typename T>
void launch_sum_partials(const T* partials, std::int64_t count, std::int64_t columns,
                         T* grad_weight, T* grad_bias) {
    const auto blocks = static_cast<unsigned>(tasks::ceil_div(2 * columns, kWarp));
    sum_partials<T><<<blocks, dim3(kWarp, kWarp), 0, launch_stream()>>>(partials, count, columns,
                                                                        grad_weight, grad_bias);
    check_launch(typeid(BackwardArgs<T>), __FILE__, __LINE__);
}

// Rows in memory: grad_x by blocks of rows, then the parameters' partials by column tiles.
template <typename T>
void run_in_memory(const BackwardArgs<T>& args, T* grad_weight, T* grad_bias) {
    if (args.grad_x != nullptr) {
        const int threads = threads_for_row(args.columns);
        layer_norm_backward_in_memory<T>
            <<<block_row_grid(args.rows, threads), threads, 0, launch_stream()>>>(args);
        check_launch(typeid(BackwardArgs<T>), __FILE__, __LINE__);
    }
    if (grad_weight == nullptr && grad_bias == nullptr) {
        return;
    }
    const std::int64_t tiles = tasks::ceil_div(args.columns, kTileColumns);
    const std::int64_t groups =
        std::clamp<std::int64_t>(tasks::ceil_div(args.rows, 256), 1, 1024);  // grid.y <= 65535
    const std::int64_t rows_per_group = tasks::ceil_div(args.rows, groups);
    const tasks::Scratch<Launcher, T> partials(groups * 2 * args.columns);
    layer_norm_column_partials<T>
        <<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(groups)),
           dim3(kTileColumns, kTileRows), 0, launch_stream()>>>(args, partials.get(),
                                                                rows_per_group);
    check_launch(typeid(BackwardArgs<T>), __FILE__, __LINE__);
    launch_sum_partials<T>(partials.get(), groups, args.columns, grad_weight, grad_bias);
}

template <typename T>
void run_backward(const BackwardArgs<T>& args, T* grad_weight, T* grad_bias) {
    const bool parameters = grad_weight != nullptr || grad_bias != nullptr;
    if (args.rows == 0) {
        launch_sum_partials<T>(nullptr, 0, args.columns, grad_weight, grad_bias);
        return;
    }
    const int chunks = register_chunks<T, kMaxChunks>(
        args.columns, {args.grad_x, args.grad_out, args.x, args.weight});
    if (chunks == 0) {
        run_in_memory(args, grad_weight, grad_bias);
        return;
    }
    with_chunks<kMaxChunks>(chunks, [&](auto constant) {
        constexpr int kChunks = decltype(constant)::value;
        if (!parameters) {
            const auto kernel = &layer_norm_backward_in_registers<T, kChunks, false>;
            kernel<<<warp_row_grid(reinterpret_cast<const void*>(kernel), args.rows), kRowThreads,
                     0, launch_stream()>>>(args, nullptr);
            check_launch(typeid(BackwardArgs<T>), __FILE__, __LINE__);
            return;
        }
        const auto kernel = &layer_norm_backward_in_registers<T, kChunks, true>;
        const int blocks = warp_row_grid(reinterpret_cast<const void*>(kernel), args.rows);
        const std::int64_t width = 2 * args.columns;
        const tasks::Scratch<Launcher, T> partials(blocks * width);
        const auto shared = static_cast<std::size_t>(kWarpsPerBlock * width) * sizeof(T);
        allow_shared_memory(reinterpret_cast<const void*>(kernel), static_cast<int>(shared));
        kernel<<<blocks, kRowThreads, shared, launch_stream()>>>(args, partials.get());
        check_launch(typeid(BackwardArgs<T>), __FILE__, __LINE__);
        launch_sum_partials<T>(partials.get(), blocks, args.columns, grad_weight, grad_bias);
    });
}

}  // namespace

kael_status layer_norm_backward(int32_t device, kael_dtype dtype, void* grad_x, void* grad_weight,
                                void* grad_bias, const void* grad_out, const void* x,
                                const void* mean, const void* rstd, const void* weight,
                                int64_t rows, int64_t columns) {
    return plugin::guarded("cuda.layer_norm_backward", [&] {
        use_device(device);
        if (!kernels::tasks::check_layer_norm_backward_call(dtype, grad_x, grad_weight, grad_bias,
                                                            grad_out, x, mean, rstd, rows,
                                                            columns)) {
            return;
        }
        const auto run = [&](auto zero) {
            using T = decltype(zero);
            run_backward<T>({static_cast<T*>(grad_x), static_cast<const T*>(grad_out),
                             static_cast<const T*>(x), static_cast<const T*>(mean),
                             static_cast<const T*>(rstd), static_cast<const T*>(weight), rows,
                             columns},
                            static_cast<T*>(grad_weight), static_cast<T*>(grad_bias));
        };
        dtype == KAEL_DTYPE_F32 ? run(0.0F) : run(0.0);
    });
}

}  // namespace kael::cuda
