#pragma once
// A few long f32, f64, bf16 or f16 rows scanned by CUB's single-pass scan each (DispatchScan,
// decoupled look-back), accumulating in double as the cumsum and scan slots ask: 0.48 of
// PyTorch's speed through a three-pass path for one row of 2^22. Its look-back may group a tile's
// predecessors differently run to run (last bits of a double sum), as PyTorch's CUB scan does.
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include "cuda_launch.cuh"
#include "workspace.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::cuda {
namespace {

using AddInDouble = ::cuda::std::plus<double>;
using MultiplyInDouble = ::cuda::std::multiplies<double>;

// CUB's own sm90 policy for a double accumulator halves the items a thread loads (224 x 12 a
// tile): 0.62-0.80 of PyTorch's f32 scan on the H200. Tiles of 128 threads x 32 items with a
// short fixed look-back delay read at its speed (2^23 elements: 40 -> 30 us; torch 31 us).
struct TileItems {
    static constexpr int ITEMS_PER_THREAD = 32;
    static constexpr int BLOCK_THREADS = 128;
};
struct LongRowPolicies {
    struct Policy900 : cub::ChainedPolicy<900, Policy900, Policy900> {
        using ScanPolicyT =
            cub::AgentScanPolicy<TileItems::BLOCK_THREADS, TileItems::ITEMS_PER_THREAD, double,
                                 cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::LOAD_DEFAULT,
                                 cub::BLOCK_STORE_WARP_TRANSPOSE, cub::BLOCK_SCAN_WARP_SCANS,
                                 TileItems, cub::detail::fixed_delay_constructor_t<350, 450>>;
    };
    using MaxPolicy = Policy900;
};

template <typename Op, typename In>
cudaError_t scan_row(void* scratch, std::size_t& bytes, const In* data, In* out,
                     std::uint32_t items) {
    using Dispatch = cub::DispatchScan<const In*, In*, Op, cub::NullType, std::uint32_t, double,
                                       cub::ForceInclusive::No, LongRowPolicies>;
    return Dispatch::Dispatch(scratch, bytes, data, out, Op{}, cub::NullType{}, items,
                              launch_stream());
}

template <typename Op, typename In>
void scan_long_rows(const In* data, In* out, std::int64_t chunk_size, std::int64_t row_count) {
    const auto items = static_cast<std::uint32_t>(chunk_size);
    std::size_t bytes = 0;
    KAEL_CUDA_CHECK(scan_row<Op>(nullptr, bytes, data, out, items));
    // CUB's temporary storage from the kept workspace: no allocation per call.
    const Workspace scratch(static_cast<std::int64_t>(bytes > 0 ? bytes : 1), 0);
    for (std::int64_t row = 0; row < row_count; ++row) {
        KAEL_CUDA_CHECK(scan_row<Op>(scratch.partials(), bytes, data + row * chunk_size,
                                     out + row * chunk_size, items));
    }
}

}  // namespace
}  // namespace kael::cuda
