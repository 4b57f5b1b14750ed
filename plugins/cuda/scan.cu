// The scan slot: cumsum and cumprod along i of outer x size x inner, where the tensor
// lies. Columns (inner > 1) take a thread each, walking i with kUnroll loads in flight; a warp's
// threads hold adjacent columns, so its loads and stores are coalesced. Rows take a warp each, in
// tiles of 32 x kItems: each lane scans its run, a shuffle scan adds the runs' totals and the
// carry of the tiles before. A few long rows go where one warp per row would leave the GPU idle:
// cub::DeviceScan for f32/f64 (scan_long_rows.cuh), the cumsum slot's units for other sums.
// Floats accumulate in double; integers and bool in uint64, which wraps as the ABI asks. bf16/f16
// (E) are read as float and written in their dtype, and their few long rows go through CUB as
// cuda_bf16.h's and cuda_fp16.h's types (converted to double on load, rounded once on store).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/sequence.h"
#include "scan_long_rows.cuh"

namespace kael::cuda {
namespace {

using kernels::load_element;
using kernels::Storage;

constexpr int kUnroll = 8;
constexpr int kItems = 4;
constexpr int kWarpSize = 32;
// Rows at most this many and this long take the long-row paths.
constexpr std::int64_t kLongRowsMax = 8;
constexpr std::int64_t kLongRow = 1 << 14;

template <typename In>
using Accum = std::conditional_t<kernels::is_floating_v<In>, double, unsigned long long>;
template <typename In>
using Written = std::conditional_t<kernels::is_floating_v<In>, In, std::int64_t>;

template <bool kMultiply, typename A>
__device__ __forceinline__ A apply(A a, A b) {
    return kMultiply ? a * b : a + b;
}

template <bool kMultiply, typename A>
__device__ __forceinline__ A identity() {
    return kMultiply ? A{1} : A{0};
}

// Where results go: bf16/f16 in their own dtype.
template <typename In, typename E>
using Target = std::conditional_t<kernels::is_low_precision_v<E>, E, Written<In>>;

template <typename In, typename E>
__device__ __forceinline__ Accum<In> load_accum(const E* at) {
    if constexpr (kernels::is_low_precision_v<E>) {
        return static_cast<Accum<In>>(kernels::to_float(*at));
    } else {
        return static_cast<Accum<In>>(load_element<In>(at));
    }
}

template <typename In, typename E>
__device__ __forceinline__ Target<In, E> written(Accum<In> value) {
    if constexpr (kernels::is_low_precision_v<E>) {
        return kernels::from_float<E>(static_cast<float>(value));
    } else {
        return static_cast<Written<In>>(value);
    }
}

template <bool kMultiply, typename In, typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scan_columns(const E* data, Target<In, E>* out, std::int64_t size, std::int64_t inner,
                 std::int64_t columns) {
    using A = Accum<In>;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         c < columns; c += stride) {
        const std::int64_t start = c / inner * size * inner + c % inner;
        const E* in = data + start;
        Target<In, E>* target = out + start;
        A acc = identity<kMultiply, A>();
        std::int64_t i = 0;
        for (; i + kUnroll <= size; i += kUnroll) {
            A values[kUnroll];
#pragma unroll
            for (int k = 0; k < kUnroll; ++k) {
                values[k] = load_accum<In, E>(in + (i + k) * inner);
            }
#pragma unroll
            for (int k = 0; k < kUnroll; ++k) {
                acc = apply<kMultiply>(acc, values[k]);
                target[(i + k) * inner] = written<In, E>(acc);
            }
        }
        for (; i < size; ++i) {
            acc = apply<kMultiply>(acc, load_accum<In, E>(in + i * inner));
            target[i * inner] = written<In, E>(acc);
        }
    }
}

template <bool kMultiply, typename In, typename E>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scan_warp_rows(const E* data, Target<In, E>* out, std::int64_t size, std::int64_t rows) {
    using A = Accum<In>;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarpSize;
    std::int64_t row =
        (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarpSize;
    for (; row < rows; row += warps) {
        const E* in = data + row * size;
        Target<In, E>* target = out + row * size;
        A carry = identity<kMultiply, A>();
        for (std::int64_t base = 0; base < size; base += kWarpSize * kItems) {
            const std::int64_t first = base + std::int64_t{lane} * kItems;
            A run[kItems];
            A total = identity<kMultiply, A>();
#pragma unroll
            for (int k = 0; k < kItems; ++k) {
                if (first + k < size) {
                    total = apply<kMultiply>(total, load_accum<In, E>(in + first + k));
                }
                run[k] = total;
            }
            // Inclusive scan of the lanes' totals, then each run from the lanes before it.
            A scanned = total;
#pragma unroll
            for (int offset = 1; offset < kWarpSize; offset *= 2) {
                const A other = __shfl_up_sync(0xffffffffu, scanned, offset);
                if (lane >= offset) {
                    scanned = apply<kMultiply>(other, scanned);
                }
            }
            A before = __shfl_up_sync(0xffffffffu, scanned, 1);
            before = apply<kMultiply>(carry, lane == 0 ? identity<kMultiply, A>() : before);
#pragma unroll
            for (int k = 0; k < kItems; ++k) {
                if (first + k < size) {
                    target[first + k] = written<In, E>(apply<kMultiply>(before, run[k]));
                }
            }
            carry = apply<kMultiply>(carry, __shfl_sync(0xffffffffu, scanned, kWarpSize - 1));
        }
    }
}

template <typename Kernel, typename... Args>
void launch(Kernel kernel, std::int64_t blocks_wanted, Args... args) {
    const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel), blocks_wanted);
    kernel<<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(args...);
    check_launch(typeid(Kernel), __FILE__, __LINE__);
}

// What CUB scans an element as: CUDA's bf16/f16 types for kael's (they convert to and from
// double), any other as it is.
template <typename E>
struct CubElement {
    using Type = E;
};
template <>
struct CubElement<kernels::BFloat16> {
    using Type = __nv_bfloat16;
};
template <>
struct CubElement<kernels::Half> {
    using Type = __half;
};

template <bool kMultiply, typename In, typename E = Storage<In>>
void scan(const void* data, void* out, std::int64_t outer, std::int64_t size, std::int64_t inner) {
    const auto* input = static_cast<const E*>(data);
    auto* target = static_cast<Target<In, E>*>(out);
    if (inner > 1) {
        launch(&scan_columns<kMultiply, In, E>, blocks_for(outer * inner), input, target, size,
               inner, outer * inner);
        return;
    }
    if constexpr (std::is_floating_point_v<E> || kernels::is_low_precision_v<E>) {
        if (outer <= kLongRowsMax && size >= kLongRow && size <= INT_MAX) {
            using Op = std::conditional_t<kMultiply, MultiplyInDouble, AddInDouble>;
            using C = typename CubElement<E>::Type;
            scan_long_rows<Op, C>(reinterpret_cast<const C*>(input), reinterpret_cast<C*>(target),
                                  size, outer);
            return;
        }
    }
    launch(&scan_warp_rows<kMultiply, In, E>, blocks_for(outer, kThreadsPerBlock / kWarpSize),
           input, target, size, outer);
}

}  // namespace

kael_status scan(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                 void* out, const void* data, int64_t outer, int64_t size, int64_t inner) {
    const bool low = kernels::is_low_precision(in_dtype);
    // Few long sums of other dtypes: the cumsum slot's units spread each row over the GPU.
    if (!low && op == KAEL_REDUCE_SUM && inner == 1 && outer <= kLongRowsMax && size >= kLongRow) {
        return cumsum(device, out_dtype, in_dtype, out, data, size, outer);
    }
    return plugin::guarded("cuda.scan", [&] {
        use_device(device);
        if (low && (low_precision_reduce_declined() || out_dtype != in_dtype)) {
            plugin::unsupported("this scan of bf16/f16 here (the core scans it in f32)");
        }
        // bf16/f16 (KAEL_DTYPE_FLAG_LOW_PRECISION_SCAN) are checked as the f32 call, then read
        // from and written to their own storage.
        const kael_dtype checked_out = low ? KAEL_DTYPE_F32 : out_dtype;
        const kael_dtype checked_in = low ? KAEL_DTYPE_F32 : in_dtype;
        kernels::tasks::visit_scan_call(
            op, checked_out, checked_in, out, data, outer, size, inner,
            [&]<bool kMultiply, typename In>() {
                if constexpr (std::is_same_v<In, float>) {
                    if (in_dtype == KAEL_DTYPE_BF16) {
                        return scan<kMultiply, float, kernels::BFloat16>(data, out, outer, size,
                                                                         inner);
                    }
                    if (in_dtype == KAEL_DTYPE_F16) {
                        return scan<kMultiply, float, kernels::Half>(data, out, outer, size, inner);
                    }
                }
                scan<kMultiply, In>(data, out, outer, size, inner);
            });
    });
}

}  // namespace kael::cuda
