#pragma once
// Vectorized element kernels: every operand is read and written in packs of neighbouring
// elements (16-byte loads for f32), or is one value splat over the pack (stride 0).
//   flat_elements: a contiguous 1-d layout, 16 bytes of the widest operand per thread;
//   vector_rows:   rows whose inner stride is one element or 0 (a + row, where / masked_fill on
//                  attention masks), 4 elements per thread and row, f32 outputs, int32 offsets.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuda_launch.cuh"
#include "element_walk.cuh"
#include "kael/kernels/element_functions.h"

namespace kael::cuda {

template <typename S, int kWidth>
struct alignas(sizeof(S) * kWidth < 16 ? sizeof(S) * kWidth : 16) Pack {
    S values[kWidth];
};

// The loaded packs of every input, one base class each (std::tuple is host-only).
template <std::size_t kInput, typename P>
struct PackSlot {
    P pack;
};
template <typename Inputs, typename... Packs>
struct PackSet;
template <std::size_t... Input, typename... Packs>
struct PackSet<std::index_sequence<Input...>, Packs...> : PackSlot<Input, Packs>... {};
template <std::size_t kInput, typename P>
__device__ const P& slot(const PackSlot<kInput, P>& held) {
    return held.pack;
}

// Bytes each base pointer (and row stride) of a kWidth-pack operand must be a multiple of.
template <typename T, int kWidth>
constexpr std::int64_t kPackAlignment = alignof(Pack<kernels::Storage<T>, kWidth>);

// Where one operand's pack starts and whether its value is splat over the pack.
struct PackSource {
    const std::byte* address;
    bool splat;
};

template <typename In, int kWidth>
__device__ Pack<kernels::Storage<In>, kWidth> load_pack(PackSource source) {
    using S = kernels::Storage<In>;
    if (source.splat) {
        Pack<S, kWidth> splat;
        const S value = *reinterpret_cast<const S*>(source.address);
#pragma unroll
        for (int i = 0; i < kWidth; ++i) {
            splat.values[i] = value;
        }
        return splat;
    }
    return *reinterpret_cast<const Pack<S, kWidth>*>(source.address);
}

// Loads every input's pack before the first function call, so their reads are in flight
// together, then stores the output pack at `out`.
template <int kWidth, typename Out, typename... Ins, typename F, std::size_t... Input>
__device__ void apply_pack(std::byte* out, const PackSource (&inputs)[sizeof...(Ins)],
                           const F& function, std::index_sequence<Input...> /*inputs*/) {
    using kernels::load_element;
    using kernels::store_element;
    const PackSet<std::index_sequence<Input...>, Pack<kernels::Storage<Ins>, kWidth>...> packs{
        {load_pack<Ins, kWidth>(inputs[Input])}...};
    Pack<kernels::Storage<Out>, kWidth> result;
#pragma unroll
    for (int i = 0; i < kWidth; ++i) {
        store_element<Out>(&result.values[i],
                           function(load_element<Ins>(&slot<Input>(packs).values[i])...));
    }
    *reinterpret_cast<Pack<kernels::Storage<Out>, kWidth>*>(out) = result;
}

// Operand 0 is the output; an input is contiguous or one value for every element.
template <int kInputs>
struct FlatOperands {
    std::byte* out;
    const std::byte* inputs[kInputs];
    bool broadcast[kInputs];
};

// Elements per thread: one 16-byte access for the widest operand (4 for f32). Two per thread
// (8 f32s) left each warp-wide access half-used and ran relu at 0.92 of PyTorch on H200.
template <typename Out, typename... Ins>
constexpr int kFlatWidth = static_cast<int>(
    16 / std::max({sizeof(kernels::Storage<Out>), sizeof(kernels::Storage<Ins>)...}));

template <int kWidth, typename Out, typename... Ins, typename F>
__device__ void apply_flat(const FlatOperands<sizeof...(Ins)>& operands, const F& function,
                           std::int64_t pack) {
    PackSource sources[sizeof...(Ins)];
    constexpr std::int64_t kInputBytes[] = {sizeof(kernels::Storage<Ins>)...};
#pragma unroll
    for (std::size_t input = 0; input < sizeof...(Ins); ++input) {
        const bool splat = operands.broadcast[input];
        sources[input] = {operands.inputs[input] + (splat ? 0 : pack * kWidth * kInputBytes[input]),
                          splat};
    }
    apply_pack<kWidth, Out, Ins...>(
        operands.out + pack * kWidth * std::int64_t{sizeof(kernels::Storage<Out>)}, sources,
        function, std::index_sequence_for<Ins...>{});
}

// One pack of kWidth elements per thread, neighbouring threads on neighbouring packs, a full
// grid (for streaming it beat one resident wave by 6% on H200); the last count % kWidth
// elements one by one by the first threads.
template <int kWidth, typename Out, typename F, typename... Ins>
__global__ void __launch_bounds__(kThreadsPerBlock)
    flat_elements(std::int64_t count, FlatOperands<sizeof...(Ins)> operands, F function) {
    begin_small_grid();
    const std::int64_t packs = count / kWidth;
    const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t pack = first; pack < packs; pack += stride) {
        apply_flat<kWidth, Out, Ins...>(operands, function, pack);
    }
    if (packs * kWidth + first < count) {
        apply_flat<1, Out, Ins...>(operands, function, packs * kWidth + first);
    }
}

// Launches flat_elements when the layout is one contiguous dimension (inputs contiguous or
// broadcast values) and every pointer is pack-aligned; false otherwise.
template <typename Out, typename... Ins, typename F>
bool launch_flat(const kael_element_layout& layout, const F& function) {
    constexpr std::int64_t kItemSizes[] = {sizeof(kernels::Storage<Out>),
                                           sizeof(kernels::Storage<Ins>)...};
    constexpr int kWidth = kFlatWidth<Out, Ins...>;
    constexpr std::int64_t kAlignments[] = {kPackAlignment<Out, kWidth>,
                                            kPackAlignment<Ins, kWidth>...};
    if (layout.dims != 1 || layout.count <= 0) {
        return false;
    }
    FlatOperands<sizeof...(Ins)> operands{};
    for (int operand = 0; operand < layout.operands; ++operand) {
        const std::int64_t stride = layout.strides[operand][0];
        const bool broadcast = operand > 0 && stride == 0;
        const auto address = reinterpret_cast<std::uintptr_t>(layout.base[operand]);
        if (!broadcast && (stride != kItemSizes[operand] ||
                           address % static_cast<std::uintptr_t>(kAlignments[operand]) != 0)) {
            return false;
        }
        if (operand > 0) {
            operands.inputs[operand - 1] = static_cast<const std::byte*>(layout.base[operand]);
            operands.broadcast[operand - 1] = broadcast;
        }
    }
    operands.out = static_cast<std::byte*>(layout.base[0]);
    const std::int64_t blocks = std::min<std::int64_t>(
        blocks_for((layout.count + kWidth - 1) / kWidth), std::numeric_limits<int>::max());
    launch_small_early(&flat_elements<kWidth, Out, F, Ins...>, static_cast<unsigned>(blocks),
                       kThreadsPerBlock, layout.count, operands, function);
    return true;
}

constexpr int kRowWidth = 4;  // elements per pack in vector_rows: rows need only be 4-aligned

// Thread (x, y) of the grid: pack x of row y, both grid-strided; an operand's row starts once.
template <typename Out, typename F, typename... Ins>
__global__ void __launch_bounds__(kThreadsPerBlock)
    vector_rows(RowWalk<std::int32_t> walk, F function) {
    constexpr int kOperands = sizeof...(Ins) + 1;
    constexpr std::int32_t kItemSizes[] = {sizeof(kernels::Storage<Out>),
                                           sizeof(kernels::Storage<Ins>)...};
    const std::int32_t packs = walk.columns / kRowWidth;
    for (std::int64_t row = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
         row < walk.rows; row += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        std::byte* pointers[kOperands];
        walk.row_pointers<kOperands>(row, pointers);
        for (std::int32_t pack = blockIdx.x * blockDim.x + threadIdx.x; pack < packs;
             pack += gridDim.x * blockDim.x) {
            PackSource sources[sizeof...(Ins)];
#pragma unroll
            for (int input = 0; input < kOperands - 1; ++input) {
                const bool splat = walk.inner_strides[input + 1] == 0;
                sources[input] = {
                    pointers[input + 1] + (splat ? 0 : pack * kRowWidth * kItemSizes[input + 1]),
                    splat};
            }
            apply_pack<kRowWidth, Out, Ins...>(pointers[0] + pack * kRowWidth * kItemSizes[0],
                                               sources, function,
                                               std::index_sequence_for<Ins...>{});
        }
    }
}

template <typename Out, typename F, typename... Ins>
struct VectorRows {};

// Launches vector_rows when the output's rows are contiguous, every input's inner stride is one
// element or 0, rows hold whole packs and every row start is pack-aligned; false otherwise.
template <typename Out, typename... Ins, typename F>
bool launch_vector_rows(const kael_element_layout& layout, const F& function) {
    constexpr std::int64_t kItemSizes[] = {sizeof(kernels::Storage<Out>),
                                           sizeof(kernels::Storage<Ins>)...};
    constexpr std::int64_t kAlignments[] = {kPackAlignment<Out, kRowWidth>,
                                            kPackAlignment<Ins, kRowWidth>...};
    const int last = layout.dims - 1;
    if (layout.dims < 2 || layout.count <= 0 || layout.shape[last] % kRowWidth != 0 ||
        !fits_index32(layout)) {
        return false;
    }
    for (int operand = 0; operand < layout.operands; ++operand) {
        const std::int64_t inner = layout.strides[operand][last];
        if (inner != kItemSizes[operand] && (operand == 0 || inner != 0)) {
            return false;
        }
        // A splat operand reads one element per row: any address will do.
        bool aligned =
            inner == 0 ||
            reinterpret_cast<std::uintptr_t>(layout.base[operand]) % kAlignments[operand] == 0;
        for (int dim = 0; dim < last && inner != 0; ++dim) {
            aligned = aligned && layout.strides[operand][dim] % kAlignments[operand] == 0;
        }
        if (!aligned) {
            return false;
        }
    }
    const RowWalk<std::int32_t> walk(layout);
    const std::int64_t packs = layout.shape[last] / kRowWidth;
    const int lanes =
        static_cast<int>(std::min<std::int64_t>(kThreadsPerBlock, (packs + 31) / 32 * 32));
    const dim3 threads(lanes, kThreadsPerBlock / lanes);
    const dim3 blocks(
        static_cast<unsigned>(std::min<std::int64_t>(blocks_for(packs, lanes), 65535)),
        static_cast<unsigned>(
            std::min<std::int64_t>(blocks_for(walk.rows, static_cast<int>(threads.y)), 65535)));
    vector_rows<Out, F, Ins...><<<blocks, threads, 0, launch_stream()>>>(walk, function);
    check_launch(typeid(VectorRows<Out, F, Ins...>), __FILE__, __LINE__);
    return true;
}

}  // namespace kael::cuda
