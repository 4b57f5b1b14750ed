// fill, convert and elementwise. A 1-d layout whose inputs are contiguous or broadcast values
// takes a vectorized kernel (16-byte f32 loads); any other layout runs the shared Element task.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <typeinfo>
#include <utility>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/element.h"

namespace kael::cuda {
namespace {

using kernels::load_element;
using kernels::Storage;
using kernels::store_element;

constexpr int kVector = 4;  // elements per thread and step

template <typename S, int kWidth>
struct alignas(sizeof(S) * kWidth) Pack {
    S values[kWidth];
};

// Operand 0 is the contiguous output; an input is contiguous or one value for every element.
template <int kInputs>
struct FlatOperands {
    void* out;
    const void* inputs[kInputs];
    bool broadcast[kInputs];
};

template <typename In, int kWidth>
__device__ Pack<Storage<In>, kWidth> load_pack(const void* base, bool broadcast,
                                               std::int64_t pack) {
    using S = Storage<In>;
    if (broadcast) {
        Pack<S, kWidth> splat;
        const S value = *static_cast<const S*>(base);
#pragma unroll
        for (int i = 0; i < kWidth; ++i) {
            splat.values[i] = value;
        }
        return splat;
    }
    return static_cast<const Pack<S, kWidth>*>(base)[pack];
}

template <typename Out, int kWidth>
using OutPack = Pack<Storage<Out>, kWidth>;

template <int kWidth, typename Out, typename F, typename A>
__device__ void apply(const FlatOperands<1>& operands, const F& function, std::int64_t pack) {
    const auto a = load_pack<A, kWidth>(operands.inputs[0], operands.broadcast[0], pack);
    OutPack<Out, kWidth> result;
#pragma unroll
    for (int i = 0; i < kWidth; ++i) {
        store_element<Out>(&result.values[i], function(load_element<A>(&a.values[i])));
    }
    static_cast<OutPack<Out, kWidth>*>(operands.out)[pack] = result;
}

template <int kWidth, typename Out, typename F, typename A, typename B>
__device__ void apply(const FlatOperands<2>& operands, const F& function, std::int64_t pack) {
    const auto a = load_pack<A, kWidth>(operands.inputs[0], operands.broadcast[0], pack);
    const auto b = load_pack<B, kWidth>(operands.inputs[1], operands.broadcast[1], pack);
    OutPack<Out, kWidth> result;
#pragma unroll
    for (int i = 0; i < kWidth; ++i) {
        store_element<Out>(&result.values[i],
                           function(load_element<A>(&a.values[i]), load_element<B>(&b.values[i])));
    }
    static_cast<OutPack<Out, kWidth>*>(operands.out)[pack] = result;
}

template <int kWidth, typename Out, typename F, typename A, typename B, typename C>
__device__ void apply(const FlatOperands<3>& operands, const F& function, std::int64_t pack) {
    const auto a = load_pack<A, kWidth>(operands.inputs[0], operands.broadcast[0], pack);
    const auto b = load_pack<B, kWidth>(operands.inputs[1], operands.broadcast[1], pack);
    const auto c = load_pack<C, kWidth>(operands.inputs[2], operands.broadcast[2], pack);
    OutPack<Out, kWidth> result;
#pragma unroll
    for (int i = 0; i < kWidth; ++i) {
        store_element<Out>(&result.values[i],
                           function(load_element<A>(&a.values[i]), load_element<B>(&b.values[i]),
                                    load_element<C>(&c.values[i])));
    }
    static_cast<OutPack<Out, kWidth>*>(operands.out)[pack] = result;
}

// Packs of kVector elements (grid-stride, though the grid usually covers them all); the last
// count % kVector elements one by one.
template <typename Out, typename F, typename... Ins>
__global__ void __launch_bounds__(kThreadsPerBlock)
    flat_elements(std::int64_t count, FlatOperands<sizeof...(Ins)> operands, F function) {
    const std::int64_t packs = count / kVector;
    const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t pack = first; pack < packs; pack += stride) {
        apply<kVector, Out, F, Ins...>(operands, function, pack);
    }
    if (packs * kVector + first < count) {
        apply<1, Out, F, Ins...>(operands, function, packs * kVector + first);
    }
}

// The kernel's name in launch errors.
template <typename Out, typename F, typename... Ins>
struct FlatElements {};

// Fills operands when the layout qualifies for flat_elements: one dimension, the output and
// every non-broadcast input contiguous and aligned to a whole pack.
template <typename Out, typename... Ins>
bool flat_layout(const kael_element_layout& layout, FlatOperands<sizeof...(Ins)>& operands) {
    constexpr std::int64_t kItemSizes[] = {sizeof(Storage<Out>), sizeof(Storage<Ins>)...};
    if (layout.dims != 1 || layout.count <= 0) {
        return false;
    }
    for (int operand = 0; operand < layout.operands; ++operand) {
        const std::int64_t stride = layout.strides[operand][0];
        const bool broadcast = operand > 0 && stride == 0;
        const auto address = reinterpret_cast<std::uintptr_t>(layout.base[operand]);
        if (!broadcast &&
            (stride != kItemSizes[operand] ||
             address % static_cast<std::uintptr_t>(kItemSizes[operand] * kVector) != 0)) {
            return false;
        }
        if (operand > 0) {
            operands.inputs[operand - 1] = layout.base[operand];
            operands.broadcast[operand - 1] = broadcast;
        }
    }
    operands.out = layout.base[0];
    return true;
}

// Any strided layout, row by row: a row is the innermost dimension, whose operand offsets are
// found once (the divisions over the outer dims) and then stepped through kColumnsPerThread
// columns, warp lanes on neighbouring columns so unit-stride operands are read coalesced.
constexpr int kColumnsPerThread = 8;

template <typename Out, typename F, typename... Ins>
struct RowElement {
    template <std::size_t... Input>
    __device__ static void apply(const kael_element_layout& layout, std::byte* const* row,
                                 std::int64_t column, const F& function,
                                 std::index_sequence<Input...> /*inputs*/) {
        const int last = layout.dims - 1;
        store_element<Out>(row[0] + column * layout.strides[0][last],
                           function(load_element<Ins>(
                               row[Input + 1] + column * layout.strides[Input + 1][last])...));
    }
};

template <typename Out, typename F, typename... Ins>
__global__ void __launch_bounds__(kThreadsPerBlock)
    strided_rows(kael_element_layout layout, F function) {
    const int last = layout.dims - 1;
    const std::int64_t columns = layout.shape[last];
    const std::int64_t rows = layout.count / columns;
    const std::int64_t span = static_cast<std::int64_t>(blockDim.x) * kColumnsPerThread;
    for (std::int64_t row = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
         row < rows; row += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        std::byte* pointers[KAEL_MAX_OPERANDS];
        kernels::tasks::locate(layout, row * columns, pointers);
        for (std::int64_t start = blockIdx.x * span; start < columns;
             start += static_cast<std::int64_t>(gridDim.x) * span) {
#pragma unroll
            for (int step = 0; step < kColumnsPerThread; ++step) {
                const std::int64_t column = start + step * blockDim.x + threadIdx.x;
                if (column < columns) {
                    RowElement<Out, F, Ins...>::apply(layout, pointers, column, function,
                                                      std::index_sequence_for<Ins...>{});
                }
            }
        }
    }
}

template <typename Out, typename F, typename... Ins>
struct StridedRows {};

// Threads of a block: as many lanes along a row as it has (rounded to a warp), the rest on
// further rows, so short rows do not leave most of a block idle.
template <typename Out, typename F, typename... Ins>
void launch_strided_rows(const kael_element_layout& layout, const F& function) {
    const std::int64_t columns = layout.shape[layout.dims - 1];
    const std::int64_t rows = layout.count / columns;
    const int lanes = static_cast<int>(std::min<std::int64_t>(
        kThreadsPerBlock, (columns + kColumnsPerThread * 32 - 1) / (kColumnsPerThread * 32) * 32));
    const dim3 threads(lanes, kThreadsPerBlock / lanes);
    const std::int64_t across = (columns + lanes * kColumnsPerThread - 1) / (lanes * kColumnsPerThread);
    const std::int64_t down = (rows + threads.y - 1) / threads.y;
    const dim3 blocks(static_cast<unsigned>(std::min<std::int64_t>(across, 1 << 16)),
                      static_cast<unsigned>(std::min<std::int64_t>(down, 65535)));
    strided_rows<Out, F, Ins...><<<blocks, threads>>>(layout, function);
    check_launch(typeid(StridedRows<Out, F, Ins...>), __FILE__, __LINE__);
}

// The runner element_dispatch.h expects.
struct CudaElementRunner {
    const kael_element_layout& layout;

    template <typename Out, typename... Ins, typename F>
    void run(const F& function) const {
        FlatOperands<sizeof...(Ins)> operands{};
        if (!flat_layout<Out, Ins...>(layout, operands)) {
            if (layout.count > 0) {
                launch_strided_rows<Out, F, Ins...>(layout, function);
            }
            return;
        }
        // One pack per thread: for streaming, a full grid beat one resident wave by 6% on H200.
        const std::int64_t blocks = std::min<std::int64_t>(
            blocks_for((layout.count + kVector - 1) / kVector), std::numeric_limits<int>::max());
        flat_elements<Out, F, Ins...>
            <<<static_cast<int>(blocks), kThreadsPerBlock>>>(layout.count, operands, function);
        check_launch(typeid(FlatElements<Out, F, Ins...>), __FILE__, __LINE__);
    }
};

// Whether every byte of the fill value is zero (memset serves it).
bool zero_bits(kael_dtype dtype, const kael_element_params& value) {
    if (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64) {
        const double real =
            dtype == KAEL_DTYPE_F32 ? static_cast<float>(value.reals[0]) : value.reals[0];
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
                           value != nullptr && value->struct_size >= sizeof(kael_element_params);
        if (valid && zero_bits(dtype, *value)) {
            KAEL_CUDA_CHECK(cudaMemsetAsync(
                target, 0, static_cast<size_t>(count * kernels::dtype_size(dtype)), nullptr));
            return;
        }
        kernels::tasks::launch_fill<Launcher>(dtype, target, count, value);  // validates too
    });
}

kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout) {
    return plugin::guarded("cuda.convert", [&] {
        use_device(device);
        kernels::tasks::check_element_layout(layout);
        CudaElementRunner runner{*layout};
        kernels::dispatch_convert(out_dtype, in_dtype, layout->operands, runner);
    });
}

kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params) {
    return plugin::guarded("cuda.elementwise", [&] {
        use_device(device);
        kernels::tasks::check_element_layout(layout);
        CudaElementRunner runner{*layout};
        kernels::dispatch_elementwise(op, out_dtype, in_dtype, layout->operands, params, runner);
    });
}

}  // namespace kael::cuda
