#pragma once
// Tiled transposition for layouts whose operands disagree on the innermost dimension
// (contiguous() of a transpose, a + a.T, a copy into a transposed view): a block takes a
// 32 x 32 tile of dims (k, inner) and moves operands that are unit-stride along k through
// padded shared memory, so every global read and write of the tile is coalesced.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <typeinfo>
#include <utility>

#include "cuda_launch.cuh"
#include "element_walk.cuh"
#include "kael/kernels/element_functions.h"

namespace kael::cuda {

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads along k: each thread takes kTile / kTileRows elements
constexpr int kTilePitch = kTile + 1;  // one padding column: tile columns fall in distinct banks

// Dims inner (the layout's innermost) and k (where the disagreeing operands are unit-stride),
// the rest batch dims walked by blockIdx.z. int32 offsets: only index32 layouts are tiled.
struct TileWalk {
    int batch_dims = 0;
    std::int32_t inner_size = 0;
    std::int32_t k_size = 0;
    std::int32_t batches = 1;
    IntDivider<std::uint32_t> batch_sizes[KAEL_MAX_DIMS];
    std::int32_t batch_strides[KAEL_MAX_OPERANDS][KAEL_MAX_DIMS] = {};
    std::int32_t inner_strides[KAEL_MAX_OPERANDS] = {};
    std::int32_t k_strides[KAEL_MAX_OPERANDS] = {};
    bool through_shared[KAEL_MAX_OPERANDS] = {};
    std::byte* base[KAEL_MAX_OPERANDS] = {};

    // Address of element (k, inner) = (0, 0) of the tile for every operand.
    template <int kOperands>
    __device__ void corners(std::int32_t batch, std::int32_t k_first, std::int32_t inner_first,
                            std::byte** corner) const {
        std::int32_t offsets[kOperands];
#pragma unroll
        for (int operand = 0; operand < kOperands; ++operand) {
            offsets[operand] = k_first * k_strides[operand] + inner_first * inner_strides[operand];
        }
        auto remaining = static_cast<std::uint32_t>(batch);
        for (int dim = batch_dims - 1; dim >= 0; --dim) {
            const std::uint32_t quotient = batch_sizes[dim].divide(remaining);
            const auto position =
                static_cast<std::int32_t>(remaining - quotient * batch_sizes[dim].divisor);
            remaining = quotient;
#pragma unroll
            for (int operand = 0; operand < kOperands; ++operand) {
                offsets[operand] += position * batch_strides[operand][dim];
            }
        }
#pragma unroll
        for (int operand = 0; operand < kOperands; ++operand) {
            corner[operand] = base[operand] + offsets[operand];
        }
    }
};

template <typename... Ts>
struct LargestStorage {
    static constexpr std::size_t value = 1;
};
template <typename T, typename... Ts>
struct LargestStorage<T, Ts...> {
    static constexpr std::size_t first = sizeof(kernels::Storage<T>);
    static constexpr std::size_t rest = LargestStorage<Ts...>::value;
    static constexpr std::size_t value = first > rest ? first : rest;
};

// Shared memory of the staged tiles: one region per operand of slots of the largest dtype.
struct Tiles {
    unsigned char* memory;
    int slot;  // bytes per element slot

    // Element (k, inner) of operand `operand`'s tile, stored [inner][k].
    template <typename T>
    __device__ kernels::Storage<T>* at(int operand, int k, int inner) const {
        return reinterpret_cast<kernels::Storage<T>*>(memory +
                                                      operand * kTile * kTilePitch * slot) +
               inner * kTilePitch + k;
    }
};

// Threads read operand `operand` along k (coalesced where it is unit-stride there) into its tile.
template <typename T>
__device__ void stage_input(const TileWalk& walk, const Tiles& tiles, int operand,
                            const std::byte* corner, int k_left, int inner_left) {
    if (!walk.through_shared[operand]) {
        return;
    }
    const int k = static_cast<int>(threadIdx.x);
    for (int inner = static_cast<int>(threadIdx.y); inner < kTile; inner += kTileRows) {
        if (k < k_left && inner < inner_left) {
            *tiles.template at<T>(operand, k, inner) =
                *reinterpret_cast<const kernels::Storage<T>*>(corner + k * walk.k_strides[operand] +
                                                              inner * walk.inner_strides[operand]);
        }
    }
}

// Element (k, inner) of input `operand`: from its tile when staged, else from global memory.
template <typename T>
__device__ T read_input(const TileWalk& walk, const Tiles& tiles, int operand,
                        const std::byte* corner, int k, int inner) {
    if (walk.through_shared[operand]) {
        return kernels::load_element<T>(tiles.template at<T>(operand, k, inner));
    }
    return kernels::load_element<T>(corner + k * walk.k_strides[operand] +
                                    inner * walk.inner_strides[operand]);
}

template <typename Out, typename F, typename... Ins, std::size_t... Input>
__device__ void tile_elements(const TileWalk& walk, const Tiles& tiles, std::byte** corner,
                              int k_left, int inner_left, const F& function,
                              std::index_sequence<Input...> /*inputs*/) {
    (stage_input<Ins>(walk, tiles, Input + 1, corner[Input + 1], k_left, inner_left), ...);
    __syncthreads();
    const int inner = static_cast<int>(threadIdx.x);
    for (int k = static_cast<int>(threadIdx.y); k < kTile; k += kTileRows) {
        if (k < k_left && inner < inner_left) {
            const Out value =
                function(read_input<Ins>(walk, tiles, Input + 1, corner[Input + 1], k, inner)...);
            if (walk.through_shared[0]) {
                kernels::store_element<Out>(tiles.template at<Out>(0, k, inner), value);
            } else {
                kernels::store_element<Out>(
                    corner[0] + k * walk.k_strides[0] + inner * walk.inner_strides[0], value);
            }
        }
    }
    if (walk.through_shared[0]) {  // uniform over the grid
        __syncthreads();
        const int k = static_cast<int>(threadIdx.x);
        for (int row = static_cast<int>(threadIdx.y); row < kTile; row += kTileRows) {
            if (k < k_left && row < inner_left) {
                *reinterpret_cast<kernels::Storage<Out>*>(corner[0] + k * walk.k_strides[0] +
                                                          row * walk.inner_strides[0]) =
                    *tiles.template at<Out>(0, k, row);
            }
        }
    }
    __syncthreads();  // the next tile reuses the shared memory
}

// blockIdx.x: tile along inner; y: tile along k; z: batch (y and z grid-strided past 65535).
template <typename Out, typename F, typename... Ins>
__global__ void __launch_bounds__(kTile* kTileRows) tiled_elements(TileWalk walk, F function) {
    constexpr int kOperands = sizeof...(Ins) + 1;
    constexpr std::size_t kSlot = LargestStorage<Out, Ins...>::value;
    __shared__ alignas(8) unsigned char memory[kOperands * kTile * kTilePitch * kSlot];
    const Tiles tiles{memory, static_cast<int>(kSlot)};
    const auto inner_first = static_cast<std::int32_t>(blockIdx.x * kTile);
    const int inner_left =
        walk.inner_size - inner_first < kTile ? walk.inner_size - inner_first : kTile;
    for (auto batch = static_cast<std::int32_t>(blockIdx.z); batch < walk.batches;
         batch += static_cast<std::int32_t>(gridDim.z)) {
        for (auto k_first = static_cast<std::int32_t>(blockIdx.y * kTile); k_first < walk.k_size;
             k_first += static_cast<std::int32_t>(gridDim.y * kTile)) {
            std::byte* corner[kOperands];
            walk.corners<kOperands>(batch, k_first, inner_first, corner);
            const int k_left = walk.k_size - k_first < kTile ? walk.k_size - k_first : kTile;
            tile_elements<Out, F, Ins...>(walk, tiles, corner, k_left, inner_left, function,
                                          std::index_sequence_for<Ins...>{});
        }
    }
}

template <typename Out, typename F, typename... Ins>
struct TiledElements {};

// Launches tiled_elements when some operand is unit-stride along a dim k other than the
// innermost while another is unit-stride along the innermost, both at least kMinimum long
// (shorter tiles would idle most threads); false otherwise.
template <typename Out, typename... Ins, typename F>
bool launch_tiled(const kael_element_layout& layout, const F& function) {
    constexpr std::int64_t kItemSizes[] = {sizeof(kernels::Storage<Out>),
                                           sizeof(kernels::Storage<Ins>)...};
    constexpr std::int64_t kMinimum = 8;
    const int last = layout.dims - 1;
    if (layout.dims < 2 || layout.count <= 0 || layout.shape[last] < kMinimum ||
        !fits_index32(layout)) {
        return false;
    }
    int k = -1;
    for (int operand = 0; operand < layout.operands && k < 0; ++operand) {
        for (int dim = 0; dim < last && layout.strides[operand][last] != kItemSizes[operand];
             ++dim) {
            if (layout.strides[operand][dim] == kItemSizes[operand]) {
                k = dim;
                break;
            }
        }
    }
    if (k < 0 || layout.shape[k] < kMinimum) {
        return false;
    }
    TileWalk walk;
    bool staged = false;
    bool direct = false;
    for (int operand = 0; operand < layout.operands; ++operand) {
        const bool unit_inner = layout.strides[operand][last] == kItemSizes[operand];
        walk.through_shared[operand] =
            !unit_inner && layout.strides[operand][k] == kItemSizes[operand];
        staged = staged || walk.through_shared[operand];
        direct = direct || unit_inner;
        walk.inner_strides[operand] = static_cast<std::int32_t>(layout.strides[operand][last]);
        walk.k_strides[operand] = static_cast<std::int32_t>(layout.strides[operand][k]);
        walk.base[operand] = static_cast<std::byte*>(layout.base[operand]);
    }
    if (!staged || !direct) {
        return false;
    }
    walk.inner_size = static_cast<std::int32_t>(layout.shape[last]);
    walk.k_size = static_cast<std::int32_t>(layout.shape[k]);
    for (int dim = 0; dim < last; ++dim) {
        if (dim != k) {
            walk.batch_sizes[walk.batch_dims] =
                IntDivider<std::uint32_t>(static_cast<std::uint32_t>(layout.shape[dim]));
            for (int operand = 0; operand < layout.operands; ++operand) {
                walk.batch_strides[operand][walk.batch_dims] =
                    static_cast<std::int32_t>(layout.strides[operand][dim]);
            }
            walk.batches *= static_cast<std::int32_t>(layout.shape[dim]);
            ++walk.batch_dims;
        }
    }
    const dim3 blocks(
        static_cast<unsigned>(blocks_for(walk.inner_size, kTile)),
        static_cast<unsigned>(std::min<std::int64_t>(blocks_for(walk.k_size, kTile), 65535)),
        static_cast<unsigned>(std::min<std::int64_t>(walk.batches, 65535)));
    tiled_elements<Out, F, Ins...>
        <<<blocks, dim3(kTile, kTileRows), 0, launch_stream()>>>(walk, function);
    check_launch(typeid(TiledElements<Out, F, Ins...>), __FILE__, __LINE__);
    return true;
}

}  // namespace kael::cuda
