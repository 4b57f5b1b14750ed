// The scan slot: cumsum and cumprod along i of outer x size x inner, where the tensor
// lies. Columns (inner > 1) take a thread each, walking i with kUnroll loads in flight; a warp's
// threads hold adjacent columns, so its loads and stores are coalesced. Rows take a warp each, in
// tiles of 32 x kItems: each lane scans its run, a shuffle scan adds the runs' totals and the
// carry of the tiles before. A few long rows go where one warp per row would leave the GPU idle:
// cub::DeviceScan for f32/f64 (scan_long_rows.cuh), the cumsum slot's units for other sums.
// Floats accumulate in double; integers and bool in uint64, which wraps as the ABI asks.
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

template <typename In>
__device__ __forceinline__ Accum<In> load_accum(const Storage<In>* at) {
    return static_cast<Accum<In>>(load_element<In>(at));
}

template <bool kMultiply, typename In>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scan_columns(const Storage<In>* data, Written<In>* out, std::int64_t size, std::int64_t inner,
                 std::int64_t columns) {
    using A = Accum<In>;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         c < columns; c += stride) {
        const std::int64_t start = c / inner * size * inner + c % inner;
        const Storage<In>* in = data + start;
        Written<In>* target = out + start;
        A acc = identity<kMultiply, A>();
        std::int64_t i = 0;
        for (; i + kUnroll <= size; i += kUnroll) {
            A values[kUnroll];
#pragma unroll
            for (int k = 0; k < kUnroll; ++k) {
                values[k] = load_accum<In>(in + (i + k) * inner);
            }
#pragma unroll
            for (int k = 0; k < kUnroll; ++k) {
                acc = apply<kMultiply>(acc, values[k]);
                target[(i + k) * inner] = static_cast<Written<In>>(acc);
            }
        }
        for (; i < size; ++i) {
            acc = apply<kMultiply>(acc, load_accum<In>(in + i * inner));
            target[i * inner] = static_cast<Written<In>>(acc);
        }
    }
}

template <bool kMultiply, typename In>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scan_warp_rows(const Storage<In>* data, Written<In>* out, std::int64_t size,
                   std::int64_t rows) {
    using A = Accum<In>;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarpSize;
    std::int64_t row =
        (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarpSize;
    for (; row < rows; row += warps) {
        const Storage<In>* in = data + row * size;
        Written<In>* target = out + row * size;
        A carry = identity<kMultiply, A>();
        for (std::int64_t base = 0; base < size; base += kWarpSize * kItems) {
            const std::int64_t first = base + std::int64_t{lane} * kItems;
            A run[kItems];
            A total = identity<kMultiply, A>();
#pragma unroll
            for (int k = 0; k < kItems; ++k) {
                if (first + k < size) {
                    total = apply<kMultiply>(total, load_accum<In>(in + first + k));
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
                    target[first + k] = static_cast<Written<In>>(apply<kMultiply>(before, run[k]));
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

template <bool kMultiply, typename In>
void scan(const void* data, void* out, std::int64_t outer, std::int64_t size, std::int64_t inner) {
    const auto* input = static_cast<const Storage<In>*>(data);
    auto* target = static_cast<Written<In>*>(out);
    if (inner > 1) {
        launch(&scan_columns<kMultiply, In>, blocks_for(outer * inner), input, target, size,
               inner, outer * inner);
        return;
    }
    if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
        if (outer <= kLongRowsMax && size >= kLongRow && size <= INT_MAX) {
            using Op = std::conditional_t<kMultiply, MultiplyInDouble, AddInDouble>;
            scan_long_rows<Op, In>(input, target, size, outer);
            return;
        }
    }
    launch(&scan_warp_rows<kMultiply, In>, blocks_for(outer, kThreadsPerBlock / kWarpSize),
           input, target, size, outer);
}

}  // namespace

kael_status scan(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                 void* out, const void* data, int64_t outer, int64_t size, int64_t inner) {
    // Few long sums of other dtypes: the cumsum slot's units spread each row over the GPU.
    if (op == KAEL_REDUCE_SUM && inner == 1 && outer <= kLongRowsMax && size >= kLongRow) {
        return cumsum(device, out_dtype, in_dtype, out, data, size, outer);
    }
    return plugin::guarded("cuda.scan", [&] {
        use_device(device);
        kernels::tasks::visit_scan_call(op, out_dtype, in_dtype, out, data, outer, size, inner,
                                        [&]<bool kMultiply, typename In>() {
                                            scan<kMultiply, In>(data, out, outer, size, inner);
                                        });
    });
}

}  // namespace kael::cuda
