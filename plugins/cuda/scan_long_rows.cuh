#pragma once
// A few long f32 or f64 rows scanned by one cub::DeviceScan each (single pass, decoupled
// look-back), accumulating in double as the cumsum and scan slots ask: 0.48 of PyTorch's speed
// through a three-pass path for one row of 2^22. Its look-back may group a tile's predecessors
// differently run to run (last bits of a double sum), as PyTorch's CUB scan does.
#include <cstdint>
#include <cub/device/device_scan.cuh>

#include "cuda_launch.cuh"
#include "workspace.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::cuda {
namespace {

struct AddInDouble {
    __device__ double operator()(double a, double b) const { return a + b; }
};
struct MultiplyInDouble {
    __device__ double operator()(double a, double b) const { return a * b; }
};

template <typename Op, typename In>
void scan_long_rows(const In* data, In* out, std::int64_t chunk_size, std::int64_t row_count) {
    const auto items = static_cast<std::int64_t>(chunk_size);
    std::size_t bytes = 0;
    KAEL_CUDA_CHECK(
        cub::DeviceScan::InclusiveScan(nullptr, bytes, data, out, Op{}, items, launch_stream()));
    // CUB's temporary storage from the kept workspace: no allocation per call.
    const Workspace scratch(static_cast<std::int64_t>(bytes > 0 ? bytes : 1), 0);
    for (std::int64_t row = 0; row < row_count; ++row) {
        KAEL_CUDA_CHECK(cub::DeviceScan::InclusiveScan(scratch.partials(), bytes,
                                                       data + row * chunk_size,
                                                       out + row * chunk_size, Op{}, items,
                                                       launch_stream()));
    }
}

}  // namespace
}  // namespace kael::cuda
