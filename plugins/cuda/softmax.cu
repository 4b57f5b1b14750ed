// Softmax / log_softmax forward and backward. Along the last dim (inner == 1) a warp (rows of at
// most 1024) or a block of 256 threads owns a row: f32 rows of at most 8192 stay in registers
// (one read, one write, 16-byte packs when aligned); longer rows and f64 take one online
// max/sum read pass and a write pass. Along another dim, 32 lines per block are read coalesced,
// each line split over the block's slices. f32 accumulates in f32, as PyTorch does.
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/softmax.h"
#include "row_reduce.cuh"

namespace kael::cuda {
namespace {

using namespace rows;
namespace tasks = kernels::tasks;
namespace math = kernels::math;

constexpr int kBlock = 256;

template <typename T>
struct SoftmaxRowsKernel {};
template <typename T>
struct SoftmaxLinesKernel {};

template <typename T>
struct Pair {
    T grad;
    T out;
};

template <typename T>
__device__ T softmax_gradient(Pair<T> v, T total, bool log) {
    return log ? v.grad - math::exp(v.out) * total : v.out * (v.grad - total);
}

template <typename T>
__device__ T softmax_of(T x, T maximum, T total, T log_total, bool log) {
    return log ? (x - maximum) - log_total : math::exp(x - maximum) / total;
}

// The row in registers: element (p * kRowThreads + t) * kWidth + i of the row is values[p][i].
template <typename T, int kRowThreads, int kElems, int kWidth>
__global__ void __launch_bounds__(kBlock)
    softmax_rows_cached(const T* data, T* out, std::int64_t rows, std::int64_t size, bool log) {
    constexpr int kRowsPerBlock = kBlock / kRowThreads;
    constexpr int kPacks = kElems / kWidth;
    struct alignas(sizeof(T) * kWidth) Piece {
        T values[kWidth];
    };
    __shared__ T shared[kRowThreads / kWarp];
    const int t = static_cast<int>(threadIdx.x) % kRowThreads;
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock;
    for (std::int64_t row =
             static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
         row < rows; row += step) {  // uniform over the block when a block owns the row
        const auto* in = reinterpret_cast<const Piece*>(data + row * size);
        Piece values[kPacks];
        T maximum = -INFINITY;
#pragma unroll
        for (int p = 0; p < kPacks; ++p) {
            const std::int64_t at = (static_cast<std::int64_t>(p) * kRowThreads + t) * kWidth;
            if (at < size) {
                values[p] = in[at / kWidth];
            } else {
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    values[p].values[i] = -INFINITY;
                }
            }
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                maximum = kernels::nan_aware_max(maximum, values[p].values[i]);
            }
        }
        maximum = group_reduce<kRowThreads>(maximum, Max{}, shared);
        // softmax keeps the exponentials in place of the inputs: one exp per element.
        T total = 0;
#pragma unroll
        for (int p = 0; p < kPacks; ++p) {
#pragma unroll
            for (int i = 0; i < kWidth; ++i) {
                const T exponential = math::exp(values[p].values[i] - maximum);
                total += exponential;  // padding adds 0
                if (!log) {
                    values[p].values[i] = exponential;
                }
            }
        }
        total = group_reduce<kRowThreads>(total, Add{}, shared);
        const T log_total = math::log(total);
        const T inverse = T(1) / total;
        auto* target = reinterpret_cast<Piece*>(out + row * size);
#pragma unroll
        for (int p = 0; p < kPacks; ++p) {
            const std::int64_t at = (static_cast<std::int64_t>(p) * kRowThreads + t) * kWidth;
            if (at < size) {
                Piece result;
#pragma unroll
                for (int i = 0; i < kWidth; ++i) {
                    const T value = values[p].values[i];
                    result.values[i] = log ? (value - maximum) - log_total : value * inverse;
                }
                target[at / kWidth] = result;
            }
        }
    }
}

// Any length: one online read pass, then the write pass reads the row again.
template <typename T, int kRowThreads>
__global__ void __launch_bounds__(kBlock)
    softmax_rows_online(const T* data, T* out, std::int64_t rows, std::int64_t size, bool log) {
    constexpr int kRowsPerBlock = kBlock / kRowThreads;
    __shared__ LogSumExp<T> shared[kRowThreads / kWarp];
    const int t = static_cast<int>(threadIdx.x) % kRowThreads;
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock;
    for (std::int64_t row =
             static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
         row < rows; row += step) {
        const T* in = data + row * size;
        auto state = LogSumExp<T>::none();
        for_each_in_row<kRowThreads>(in, size, t, [&](T x) { state.add(x); });
        state = group_reduce<kRowThreads>(state, Merge{}, shared);
        const T total = state.normalizer();
        const T log_total = math::log(total);
        map_row<kRowThreads>(in, out + row * size, size, t, [&](std::int64_t, T x) {
            return softmax_of(x, state.maximum, total, log_total, log);
        });
    }
}

template <typename T, int kRowThreads>
__global__ void __launch_bounds__(kBlock)
    softmax_backward_rows(const T* grad_out, const T* out, T* grad_in, std::int64_t rows,
                          std::int64_t size, bool log) {
    constexpr int kRowsPerBlock = kBlock / kRowThreads;
    __shared__ T shared[kRowThreads / kWarp];
    const int t = static_cast<int>(threadIdx.x) % kRowThreads;
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock;
    for (std::int64_t row =
             static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
         row < rows; row += step) {
        const T* g = grad_out + row * size;
        const T* y = out + row * size;
        const auto load = [&](std::int64_t i) { return Pair<T>{g[i], y[i]}; };
        T total = 0;
        batched<kBatch>(t, size, kRowThreads, load,
                        [&](std::int64_t, Pair<T> v) { total += log ? v.grad : v.grad * v.out; });
        total = group_reduce<kRowThreads>(total, Add{}, shared);
        T* target = grad_in + row * size;
        batched<kBatch>(t, size, kRowThreads, load, [&](std::int64_t i, Pair<T> v) {
            target[i] = softmax_gradient(v, total, log);
        });
    }
}

// 32 consecutive lines per block (lane = line, coalesced when inner >= 32), each line's size
// elements split over kSlices threads, whose partials meet in shared memory.
template <typename T, int kSlices, bool kBackward>
__global__ void __launch_bounds__(kWarp* kSlices)
    softmax_lines(const T* first, const T* second, T* target, std::int64_t lines, std::int64_t size,
                  std::int64_t inner, bool log) {
    using State = std::conditional_t<kBackward, T, LogSumExp<T>>;
    __shared__ State partial[kSlices][kWarp];
    const int lane = static_cast<int>(threadIdx.x);
    const int slice = static_cast<int>(threadIdx.y);
    for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kWarp; base < lines;
         base += static_cast<std::int64_t>(gridDim.x) * kWarp) {  // uniform over the block
        const std::int64_t line = base + lane;
        const bool valid = line < lines;
        const std::int64_t start = valid ? (line / inner) * size * inner + line % inner : 0;
        State state{};
        if constexpr (!kBackward) {
            state = LogSumExp<T>::none();
        }
        const std::int64_t end = valid ? size : 0;
        const auto load = [&](std::int64_t i) {
            const std::int64_t at = start + i * inner;
            return Pair<T>{first[at], kBackward ? second[at] : T(0)};
        };
        batched<kBatch>(slice, end, kSlices, load, [&](std::int64_t, Pair<T> v) {
            if constexpr (kBackward) {
                state += log ? v.grad : v.grad * v.out;
            } else {
                state.add(v.grad);
            }
        });
        __syncthreads();  // the previous lines' readers are done with partial
        partial[slice][lane] = state;
        __syncthreads();
        state = partial[0][lane];
        for (int other = 1; other < kSlices; ++other) {
            if constexpr (kBackward) {
                state += partial[other][lane];
            } else {
                state.merge(partial[other][lane]);
            }
        }
        T total = 0;
        T log_total = 0;
        if constexpr (!kBackward) {
            total = state.normalizer();
            log_total = math::log(total);
        }
        batched<kBatch>(slice, end, kSlices, load, [&](std::int64_t i, Pair<T> v) {
            T& result = target[start + i * inner];
            if constexpr (kBackward) {
                result = softmax_gradient(v, state, log);
            } else {
                result = softmax_of(v.grad, state.maximum, total, log_total, log);
            }
        });
    }
}

template <typename Kernel, typename... Args>
void launch_rows(Kernel kernel, std::int64_t blocks, const std::type_info& name, Args... args) {
    kernel<<<grid_blocks(reinterpret_cast<const void*>(kernel), blocks, kBlock), kBlock, 0,
             launch_stream()>>>(args...);
    check_launch(name, __FILE__, __LINE__);
}

template <typename T, bool kBackward>
void launch_lines(const T* first, const T* second, T* target, std::int64_t outer, std::int64_t size,
                  std::int64_t inner, bool log) {
    const std::int64_t lines = outer * inner;
    const auto launch = [&](auto kernel, int slices) {
        const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel),
                                       tasks::ceil_div(lines, kWarp), kWarp * slices);
        kernel<<<blocks, dim3(kWarp, slices), 0, launch_stream()>>>(first, second, target, lines,
                                                                    size, inner, log);
        check_launch(typeid(SoftmaxLinesKernel<T>), __FILE__, __LINE__);
    };
    if (size >= 1024) {
        launch(&softmax_lines<T, 32, kBackward>, 32);
    } else if (size >= 256) {
        launch(&softmax_lines<T, 16, kBackward>, 16);
    } else if (size >= 32) {
        launch(&softmax_lines<T, 4, kBackward>, 4);
    } else {
        launch(&softmax_lines<T, 1, kBackward>, 1);
    }
}

// Launches the register tile of kRowThreads x kElems when the row fits in it.
template <int kRowThreads, int kElems>
bool cached_if_fits(const float* data, float* out, std::int64_t rows, std::int64_t size, bool log) {
    if (size > std::int64_t{kRowThreads} * kElems) {
        return false;
    }
    const bool vectorized = reinterpret_cast<std::uintptr_t>(data) % 16 == 0 &&
                            reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && size % 4 == 0;
    const std::int64_t blocks = tasks::ceil_div(rows, kBlock / kRowThreads);
    if (vectorized && kElems >= 4) {
        constexpr int kWidth = kElems >= 4 ? 4 : 1;
        launch_rows(&softmax_rows_cached<float, kRowThreads, kElems, kWidth>, blocks,
                    typeid(SoftmaxRowsKernel<float>), data, out, rows, size, log);
    } else {
        launch_rows(&softmax_rows_cached<float, kRowThreads, kElems, 1>, blocks,
                    typeid(SoftmaxRowsKernel<float>), data, out, rows, size, log);
    }
    return true;
}

// f32 rows of at most 8192 elements: the smallest register tile that holds the row.
bool softmax_cached(const float* data, float* out, std::int64_t rows, std::int64_t size, bool log) {
    return cached_if_fits<kWarp, 1>(data, out, rows, size, log) ||
           cached_if_fits<kWarp, 2>(data, out, rows, size, log) ||
           cached_if_fits<kWarp, 4>(data, out, rows, size, log) ||
           cached_if_fits<kWarp, 8>(data, out, rows, size, log) ||
           cached_if_fits<kWarp, 16>(data, out, rows, size, log) ||
           cached_if_fits<kWarp, 32>(data, out, rows, size, log) ||
           cached_if_fits<kBlock, 8>(data, out, rows, size, log) ||
           cached_if_fits<kBlock, 16>(data, out, rows, size, log) ||
           cached_if_fits<kBlock, 32>(data, out, rows, size, log);
}

template <typename T>
void softmax_forward(const T* data, T* out, std::int64_t outer, std::int64_t size,
                     std::int64_t inner, bool log) {
    if (inner > 1) {
        launch_lines<T, false>(data, nullptr, out, outer, size, inner, log);
        return;
    }
    if constexpr (std::is_same_v<T, float>) {
        if (softmax_cached(data, out, outer, size, log)) {
            return;
        }
    }
    if (size <= 1024) {
        launch_rows(&softmax_rows_online<T, kWarp>, tasks::ceil_div(outer, kBlock / kWarp),
                    typeid(SoftmaxRowsKernel<T>), data, out, outer, size, log);
    } else {
        launch_rows(&softmax_rows_online<T, kBlock>, outer, typeid(SoftmaxRowsKernel<T>), data, out,
                    outer, size, log);
    }
}

template <typename T>
void softmax_backward_of(const T* grad_out, const T* out, T* grad_in, std::int64_t outer,
                         std::int64_t size, std::int64_t inner, bool log) {
    if (inner > 1) {
        launch_lines<T, true>(grad_out, out, grad_in, outer, size, inner, log);
    } else if (size <= 1024) {
        launch_rows(&softmax_backward_rows<T, kWarp>, tasks::ceil_div(outer, kBlock / kWarp),
                    typeid(SoftmaxRowsKernel<T>), grad_out, out, grad_in, outer, size, log);
    } else {
        launch_rows(&softmax_backward_rows<T, kBlock>, outer, typeid(SoftmaxRowsKernel<T>),
                    grad_out, out, grad_in, outer, size, log);
    }
}

}  // namespace

kael_status softmax(int32_t device, kael_dtype dtype, void* out, const void* data, int64_t outer,
                    int64_t size, int64_t inner, int32_t log) {
    return plugin::guarded("cuda.softmax", [&] {
        use_device(device);
        if (!tasks::check_softmax_call("softmax", dtype, {out, data}, outer, size, inner)) {
            return;
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            if constexpr (kernels::is_floating_v<T>) {
                softmax_forward(static_cast<const T*>(data), static_cast<T*>(out), outer, size,
                                inner, log != 0);
            }
        });
    });
}

kael_status softmax_backward(int32_t device, kael_dtype dtype, void* grad_in, const void* grad_out,
                             const void* out, int64_t outer, int64_t size, int64_t inner,
                             int32_t log) {
    return plugin::guarded("cuda.softmax_backward", [&] {
        use_device(device);
        if (!tasks::check_softmax_call("softmax_backward", dtype, {grad_in, grad_out, out}, outer,
                                       size, inner)) {
            return;
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            if constexpr (kernels::is_floating_v<T>) {
                softmax_backward_of(static_cast<const T*>(grad_out), static_cast<const T*>(out),
                                    static_cast<T*>(grad_in), outer, size, inner, log != 0);
            }
        });
    });
}

}  // namespace kael::cuda
