// cumsum: rows are cut into tiles of kScanThreads x kScanItems elements, scanned in shared
// memory (each thread sums its run of kScanItems, then one block-wide sum of the runs). Many rows:
// one block per row walks its tiles with a running prefix (one read, one write). Few long rows:
// about 8 units of consecutive tiles per multiprocessor; the units' sums, a scan of those sums,
// then every unit at once from its prefix (the second read mostly hits L2); up to kCubRows long
// f32 or f64 rows take cub::DeviceScan instead.
#include <climits>
#include <cstdint>
#include <type_traits>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/sequence.h"
#include "scan_long_rows.cuh"
#include "sequence_keys.cuh"

namespace kael::cuda {
namespace {

using kernels::tasks::ceil_div;
using kernels::tasks::min_of;

constexpr int kScanThreads = 128;
// Odd, so that thread t's run at t * kScanItems reaches every bank once (8-byte sums).
constexpr int kScanItems = 9;
constexpr int kScanTile = kScanThreads * kScanItems;
// At most this many long f32/f64 rows take one cub::DeviceScan each.
constexpr std::int64_t kCubRows = 8;

// Floats sum in double; i64 and bool in uint64, which wraps as the ABI asks. Tile totals are
// kept as double or int64 (TileSum), so that a scan of them is the same kernel again.
template <typename In>
using Accum = std::conditional_t<kernels::is_floating_v<In>, double, unsigned long long>;
template <typename In>
using ScanOut = std::conditional_t<kernels::is_floating_v<In>, In, std::int64_t>;
template <typename In>
using TileSum = std::conditional_t<kernels::is_floating_v<In>, double, std::int64_t>;

// Units of work spread over the grid: unit u covers tile_count tiles of row u / units_per_row,
// from tile (u % units_per_row) * tile_count. A scan unit starts from unit_sums[u - 1], the
// inclusive sum of the row's units before it, or from 0 at the row's start.
template <typename In>
struct ScanUnits {
    const kernels::Storage<In>* data;
    ScanOut<In>* out;
    const TileSum<In>* unit_sums;  // NULL when every unit is a whole row
    std::int64_t chunk_size;
    std::int64_t tiles_per_row;
    std::int64_t units_per_row;
    std::int64_t tile_count;
    std::int64_t unit_count;

    __device__ std::int64_t row_of(std::int64_t unit) const { return unit / units_per_row; }
    __device__ std::int64_t first_tile_of(std::int64_t unit, std::int64_t row) const {
        return (unit - row * units_per_row) * tile_count;
    }
    __device__ std::int64_t end_tile_of(std::int64_t first_tile) const {
        return min_of(first_tile + tile_count, tiles_per_row);
    }
    // Loads tile t of row into shared memory as sums (zeros past the row's end); its length.
    __device__ std::int64_t load_tile(Accum<In>* tile, std::int64_t row, std::int64_t t) const {
        const std::int64_t begin = row * chunk_size + t * kScanTile;
        const std::int64_t length = min_of(kScanTile, chunk_size - t * kScanTile);
        for (int i = threadIdx.x; i < kScanTile; i += kScanThreads) {
            tile[i] = i < length
                          ? static_cast<Accum<In>>(kernels::load_element<In>(data + begin + i))
                          : Accum<In>{0};
        }
        __syncthreads();
        return length;
    }
};

// Replaces a thread's run of kScanItems sums by its partial sums; returns the run's total.
template <typename A>
__device__ __forceinline__ A scan_run(A* run) {
    A total{0};
#pragma unroll
    for (int j = 0; j < kScanItems; ++j) {
        total += run[j];
        run[j] = total;
    }
    return total;
}

// Scans each unit from its prefix into out, or (kSumsOnly) writes only its total to sums[u].
template <typename In, bool kSumsOnly>
__global__ void __launch_bounds__(kScanThreads) scan_units(ScanUnits<In> units, TileSum<In>* sums) {
    using A = Accum<In>;
    __shared__ A tile[kScanTile];
    __shared__ A partial[33];
    for (std::int64_t unit = blockIdx.x; unit < units.unit_count; unit += gridDim.x) {
        const std::int64_t row = units.row_of(unit);
        const std::int64_t first_tile = units.first_tile_of(unit, row);
        A carry = kSumsOnly || first_tile == 0 ? A{0} : static_cast<A>(units.unit_sums[unit - 1]);
        for (std::int64_t t = first_tile; t < units.end_tile_of(first_tile); ++t) {
            const std::int64_t length = units.load_tile(tile, row, t);
            A* const run = tile + threadIdx.x * kScanItems;
            const A run_sum = scan_run(run);
            A tile_total;
            const A prefix = carry + block_exclusive_sum(run_sum, partial, &tile_total);
            if constexpr (!kSumsOnly) {
#pragma unroll
                for (int j = 0; j < kScanItems; ++j) {
                    run[j] = prefix + run[j];
                }
                __syncthreads();
                ScanOut<In>* const row_out = units.out + row * units.chunk_size + t * kScanTile;
                for (int i = threadIdx.x; i < length; i += kScanThreads) {
                    row_out[i] = static_cast<ScanOut<In>>(tile[i]);
                }
            }
            carry += tile_total;
            __syncthreads();
        }
        if (kSumsOnly && threadIdx.x == 0) {
            sums[unit] = static_cast<TileSum<In>>(carry);
        }
    }
}

template <typename Kernel, typename... Args>
void launch_units(Kernel kernel, std::int64_t units, Args... args) {
    const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel), units, kScanThreads);
    kernel<<<blocks, kScanThreads, 0, launch_stream()>>>(args...);
    check_launch(typeid(Kernel), __FILE__, __LINE__);
}

// Scans rows of chunk_size elements of data into out (see the file's comment).
template <typename In>
void scan_rows(const kernels::Storage<In>* data, ScanOut<In>* out, std::int64_t chunk_size,
               std::int64_t row_count) {
    const std::int64_t tiles_per_row = ceil_div(chunk_size, kScanTile);
    const std::int64_t wanted_units = 8 * std::int64_t{multiprocessor_count()};
    if (tiles_per_row == 1 || row_count * 4 >= wanted_units) {
        const ScanUnits<In> rows{data,          out, nullptr,       chunk_size,
                                 tiles_per_row, 1,   tiles_per_row, row_count};
        launch_units(&scan_units<In, false>, row_count, rows, nullptr);
        return;
    }
    if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
        if (row_count <= kCubRows && chunk_size <= INT32_MAX) {
            scan_long_rows<AddInDouble, In>(data, out, chunk_size, row_count);
            return;
        }
    }
    // About wanted_units units in all, so that the units' sums are a short scan.
    const std::int64_t tile_count = ceil_div(row_count * tiles_per_row, wanted_units);
    const std::int64_t units_per_row = ceil_div(tiles_per_row, tile_count);
    const std::int64_t unit_count = row_count * units_per_row;
    ScanUnits<In> units{data,          out,           nullptr,    chunk_size,
                        tiles_per_row, units_per_row, tile_count, unit_count};
    using Sum = TileSum<In>;
    const kernels::tasks::Scratch<Launcher, Sum> sums(unit_count);
    launch_units(&scan_units<In, true>, unit_count, units, sums.get());
    scan_rows<Sum>(sums.get(), sums.get(), units_per_row, row_count);  // in place, tile by tile
    units.unit_sums = sums.get();
    launch_units(&scan_units<In, false>, unit_count, units, nullptr);
}

}  // namespace

kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count) {
    return plugin::guarded("cuda.cumsum", [&] {
        use_device(device);
        if (!kernels::tasks::check_cumsum_call(out_dtype, in_dtype, out, data, chunk_size,
                                               row_count)) {
            return;
        }
        kernels::with_dtype(in_dtype, [&](auto tag) {
            using In = kernels::TagType<decltype(tag)>;
            scan_rows<In>(static_cast<const kernels::Storage<In>*>(data),
                          static_cast<ScanOut<In>*>(out), chunk_size, row_count);
        });
    });
}

}  // namespace kael::cuda
