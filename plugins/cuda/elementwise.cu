// fill, convert and elementwise on the GPU. Each layout takes the first kernel that fits it:
// flat (contiguous, vectorized), tiled (operands disagree on the innermost dim: shared-memory
// transpose), vector rows (f32 rows of unit or 0 inner stride), else strided rows; the last
// two walk rows with 32-bit offsets and magic-number division wherever every offset fits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "element_tiles.cuh"
#include "element_vector.cuh"
#include "element_walk.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/element.h"
#include "staging.h"

namespace kael::cuda {
namespace {

using kernels::load_element;
using kernels::store_element;

// Any strided layout, row by row: a row's operand offsets are found once, then stepped through
// kColumnsPerThread columns, warp lanes on neighbouring columns so unit-stride operands are read
// coalesced.
constexpr int kColumnsPerThread = 8;

template <typename Out, typename F, typename... Ins>
struct RowElement {
    template <typename Index, std::size_t... Input>
    __device__ static void apply(const RowWalk<Index>& walk, std::byte* const* row, Index column,
                                 const F& function, std::index_sequence<Input...> /*inputs*/) {
        store_element<Out>(row[0] + column * walk.inner_strides[0],
                           function(load_element<Ins>(row[Input + 1] +
                                                      column * walk.inner_strides[Input + 1])...));
    }
};

template <typename Out, typename F, typename Index, typename... Ins>
__global__ void __launch_bounds__(kThreadsPerBlock) strided_rows(RowWalk<Index> walk, F function) {
    begin_small_grid();
    constexpr int kOperands = sizeof...(Ins) + 1;
    const std::int64_t span = static_cast<std::int64_t>(blockDim.x) * kColumnsPerThread;
    for (std::int64_t row = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
         row < walk.rows; row += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        std::byte* pointers[kOperands];
        walk.template row_pointers<kOperands>(row, pointers);
        for (std::int64_t start = blockIdx.x * span; start < walk.columns;
             start += static_cast<std::int64_t>(gridDim.x) * span) {
#pragma unroll
            for (int step = 0; step < kColumnsPerThread; ++step) {
                const auto column = static_cast<Index>(start + step * blockDim.x + threadIdx.x);
                if (column < walk.columns) {
                    RowElement<Out, F, Ins...>::apply(walk, pointers, column, function,
                                                      std::index_sequence_for<Ins...>{});
                }
            }
        }
    }
}

// Threads of a block: as many lanes along a row as it has (rounded to a warp), the rest on
// further rows, so short rows do not leave most of a block idle.
template <typename Out, typename Index, typename... Ins, typename F>
void launch_strided_rows(const kael_element_layout& layout, const F& function) {
    const RowWalk<Index> walk(layout);
    const std::int64_t columns = walk.columns;
    const int lanes = static_cast<int>(std::min<std::int64_t>(
        kThreadsPerBlock, (columns + kColumnsPerThread * 32 - 1) / (kColumnsPerThread * 32) * 32));
    const dim3 threads(lanes, kThreadsPerBlock / lanes);
    const dim3 blocks(static_cast<unsigned>(std::min<std::int64_t>(
                          blocks_for(columns, lanes * kColumnsPerThread), 65535)),
                      static_cast<unsigned>(std::min<std::int64_t>(
                          blocks_for(walk.rows, static_cast<int>(threads.y)), 65535)));
    launch_small_early(&strided_rows<Out, F, Index, Ins...>, blocks, threads, walk, function);
}

// Which functions get a tiled kernel (kept few: each is a kernel per arch): copies of every dtype,
// converts between the wide and low-precision dtypes, and f32 binary arithmetic.
template <typename F>
struct IsCopy : std::false_type {};
template <typename T>
struct IsCopy<kernels::Identity<T>> : std::true_type {};
// Converts to or from the narrow integers (int32..uint8) stay untiled: 32 kernels fewer.
template <typename T>
constexpr bool kNarrowInt = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int16_t> ||
                            std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t>;
template <typename Out, typename In>
struct IsCopy<kernels::Convert<Out, In>>
    : std::bool_constant<!kNarrowInt<Out> && !kNarrowInt<In>> {};

template <typename Out, typename F, typename... Ins>
constexpr bool kTiled = (sizeof...(Ins) == 1 && IsCopy<F>::value) ||
                        (sizeof...(Ins) == 2 && std::is_same_v<Out, float> &&
                         (std::is_same_v<Ins, float> && ...));

// The runner element_dispatch.h expects.
struct CudaElementRunner {
    const kael_element_layout& layout;

    template <typename Out, typename... Ins, typename F>
    void run(const F& function) const {
        if (layout.count <= 0 || launch_flat<Out, Ins...>(layout, function)) {
            return;
        }
        if constexpr (kTiled<Out, F, Ins...>) {
            if (launch_tiled<Out, Ins...>(layout, function)) {
                return;
            }
        }
        if constexpr (std::is_same_v<Out, float>) {
            if (launch_vector_rows<Out, Ins...>(layout, function)) {
                return;
            }
        }
        if (fits_index32(layout)) {
            launch_strided_rows<Out, std::int32_t, Ins...>(layout, function);
        } else {
            launch_strided_rows<Out, std::int64_t, Ins...>(layout, function);
        }
    }
};

// Whether every byte of the fill value is zero (memset serves it). Floating dtypes, bfloat16
// and float16 included, take their value from reals, integers from integers.
bool zero_bits(kael_dtype dtype, const kael_element_params& value) {
    if (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64 || kernels::is_low_precision(dtype)) {
        const double real =
            dtype == KAEL_DTYPE_F64 ? value.reals[0] : static_cast<float>(value.reals[0]);
        return real == 0.0 && !std::signbit(real);
    }
    return value.integers[0] == 0;
}

}  // namespace

kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value) {
    return plugin::guarded("cuda.fill", [&] {
        use_device(device);
        const bool valid = count > 0 && target != nullptr && kernels::valid_dtype(dtype) &&
                           value != nullptr && value->struct_size >= KAEL_ELEMENT_PARAMS_SIZE_1_0;
        if (valid && zero_bits(dtype, *value)) {
            KAEL_CUDA_CHECK(cudaMemsetAsync(target, 0,
                                            static_cast<size_t>(count * kernels::dtype_size(dtype)),
                                            launch_stream()));
            return;
        }
        kernels::tasks::launch_fill<Launcher, true, true>(dtype, target, count, value);  // validates too
    });
}

kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout) {
    return plugin::guarded("cuda.convert", [&] {
        use_device(device);
        kernels::tasks::check_element_layout(layout);
        CudaElementRunner runner{*layout};
        kernels::dispatch_convert<true, true>(out_dtype, in_dtype, layout->operands, runner);
    });
}

kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params) {
    return plugin::guarded("cuda.elementwise", [&] {
        use_device(device);
        kernels::tasks::check_element_layout(layout);
        CudaElementRunner runner{*layout};
        kernels::dispatch_elementwise<true>(op, out_dtype, in_dtype, layout->operands, params, runner);
    });
}

void copy_matrix(kael_dtype dtype, void* target, std::int64_t target_leading, const void* source,
                 std::int64_t source_leading, std::int64_t rows, std::int64_t columns) {
    const std::int64_t size = kernels::dtype_size(dtype);
    kael_element_layout layout{};
    layout.struct_size = sizeof layout;
    layout.dims = 2;
    layout.operands = 2;
    layout.count = rows * columns;
    layout.shape[0] = rows;
    layout.shape[1] = columns;
    layout.strides[0][0] = target_leading * size;
    layout.strides[0][1] = size;
    layout.strides[1][0] = source_leading * size;
    layout.strides[1][1] = size;
    layout.base[0] = target;
    layout.base[1] = const_cast<void*>(source);
    CudaElementRunner runner{layout};
    kernels::dispatch_convert<true, true>(dtype, dtype, layout.operands, runner);
}

}  // namespace kael::cuda
