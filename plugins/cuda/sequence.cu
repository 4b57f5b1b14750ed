// sort and topk with CUB radix sorts over order-preserving unsigned keys (sequence_keys.cuh),
// whose positions are int32 values, widened to int64 only when the results are written. Rows up
// to kLargeTile elements sort in one block (cub::BlockRadixSort); longer rows build keys and
// positions, sort them with cub::DeviceSegmentedRadixSort (or cub::DeviceRadixSort row by row
// when rows are few and long), then gather values from data. Radix sorts are stable, so ties
// keep position order in either direction. The only file that instantiates CUB: one key type
// per width (32 bits for f32 and bool, 64 for f64 and i64), one value type.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/sequence.h"
#include "sequence_keys.cuh"
#include "topk_select.h"

namespace kael::cuda {
namespace {

using kernels::tasks::ceil_div;
using kernels::tasks::min_of;

using kernels::tasks::Scratch;

constexpr int kSortItems = 8;
constexpr int kSmallThreads = 128;
constexpr int kLargeThreads = 512;
constexpr std::int64_t kSmallTile = kSmallThreads * kSortItems;
constexpr std::int64_t kLargeTile = kLargeThreads * kSortItems;
// Elements sorted per CUB call on long rows: bounds the scratch (24 bytes an element with
// 64-bit keys) and keeps CUB's int sizes in range.
constexpr std::int64_t kBatchElements = std::int64_t{1} << 26;

// One sort or top-k call: rows of chunk_size elements of data into rows of output_count
// values and int64 positions (the first output_count in sort order).
struct SortCall {
    const void* data;
    void* values;
    std::int64_t* indices;
    kael_dtype dtype;
    int element_size;
    std::int64_t chunk_size;
    std::int64_t row_count;
    std::int64_t output_count;
    bool descending;

    // Writes position (within row) as entry `rank` of row's output.
    __device__ void write(std::int64_t row, std::int64_t rank, int position) const {
        const std::int64_t out = row * output_count + rank;
        copy_element(values, out, data, row * chunk_size + position, element_size);
        indices[out] = position;
    }
};

// f(row, column) for every cell of rows x columns, a row's columns spread over whole blocks.
template <typename F>
__device__ void for_each_cell(std::int64_t rows, std::int64_t columns, const F& f) {
    const std::int64_t blocks_per_row = ceil_div(columns, blockDim.x);
    for (std::int64_t b = blockIdx.x; b < rows * blocks_per_row; b += gridDim.x) {
        const std::int64_t row = b / blocks_per_row;
        const std::int64_t column = (b - row * blocks_per_row) * blockDim.x + threadIdx.x;
        if (column < columns) {
            f(row, column);
        }
    }
}

std::int64_t cell_blocks(std::int64_t rows, std::int64_t columns) {
    return rows * blocks_for(columns);
}

// One row per block: keys in a blocked arrangement (thread t holds positions t * kItems ...),
// so that the stable block sort keeps position order; padding sorts last.
template <typename Key, int kThreads>
__global__ void __launch_bounds__(kThreads)
    sort_in_block(SortCall call, Key inversion, int end_bit) {
    using BlockSort = cub::BlockRadixSort<Key, kThreads, kSortItems, int>;
    __shared__ typename BlockSort::TempStorage storage;
    for (std::int64_t row = blockIdx.x; row < call.row_count; row += gridDim.x) {
        Key keys[kSortItems];
        int positions[kSortItems];
#pragma unroll
        for (int j = 0; j < kSortItems; ++j) {
            const int position = static_cast<int>(threadIdx.x) * kSortItems + j;
            positions[j] = position;
            keys[j] = position < call.chunk_size
                          ? sort_key<Key>(call.data, call.dtype, row * call.chunk_size + position) ^
                                inversion
                          : ~Key{0};
        }
        BlockSort(storage).SortBlockedToStriped(keys, positions, 0, end_bit);
#pragma unroll
        for (int j = 0; j < kSortItems; ++j) {
            const std::int64_t rank = std::int64_t{j} * kThreads + threadIdx.x;
            if (rank < call.output_count) {
                call.write(row, rank, positions[j]);
            }
        }
        __syncthreads();  // storage is reused by the next row
    }
}

// keys and positions of rows [first_row, first_row + rows), and the rows' offsets in them.
template <typename Key>
__global__ void make_keys(SortCall call, Key inversion, std::int64_t first_row, std::int64_t rows,
                          Key* keys, int* positions, int* offsets) {
    for_each_cell(rows, call.chunk_size, [&](std::int64_t row, std::int64_t column) {
        const std::int64_t at = row * call.chunk_size + column;
        keys[at] =
            sort_key<Key>(call.data, call.dtype, first_row * call.chunk_size + at) ^ inversion;
        positions[at] = static_cast<int>(column);
        if (column == 0) {
            offsets[row] = static_cast<int>(at);
            if (row == rows - 1) {
                offsets[rows] = static_cast<int>(at + call.chunk_size);
            }
        }
    });
}

// The first output_count sorted positions of each row, as values and int64 indices.
__global__ void gather_sorted(SortCall call, const int* positions, std::int64_t first_row,
                              std::int64_t rows) {
    for_each_cell(rows, call.output_count, [&](std::int64_t row, std::int64_t rank) {
        call.write(first_row + row, rank, positions[row * call.chunk_size + rank]);
    });
}

template <typename Kernel, typename... Args>
void launch_cells(Kernel kernel, std::int64_t blocks_wanted, const Args&... args) {
    const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel), blocks_wanted);
    kernel<<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(args...);
    check_launch(typeid(Kernel), __FILE__, __LINE__);
}

// Temporary storage for one CUB call, grown when a call needs more.
class CubStorage {
public:
    CubStorage() = default;
    CubStorage(const CubStorage&) = delete;
    CubStorage& operator=(const CubStorage&) = delete;
    ~CubStorage() { device_free(block_); }
    void* reserve(std::size_t bytes) {
        // Never NULL, which CUB would take for a size query.
        if (block_ == nullptr || bytes > bytes_) {
            device_free(block_);  // ordered after the calls that used it
            block_ = nullptr;
            bytes_ = std::max<std::size_t>(bytes, 1);
            block_ = device_malloc(static_cast<std::int64_t>(bytes_));
        }
        return block_;
    }

private:
    void* block_ = nullptr;
    std::size_t bytes_ = 0;
};

// Few long rows sort faster one CUB device sort each than one block each.
bool row_by_row(std::int64_t chunk_size, std::int64_t row_count) {
    return row_count * 16384 <= chunk_size;
}

// Rows longer than one block's tile (chunk_size < 2^31), in batches of whole rows.
template <typename Key>
void sort_long_rows(const SortCall& call, Key inversion, int end_bit) {
    const std::int64_t batch_rows =
        std::max<std::int64_t>(1, std::min(call.row_count, kBatchElements / call.chunk_size));
    const std::int64_t batch_elements = batch_rows * call.chunk_size;
    const Scratch<Launcher, Key> keys(2 * batch_elements);
    const Scratch<Launcher, int> positions(2 * batch_elements);
    const Scratch<Launcher, int> offsets(batch_rows + 1);
    CubStorage storage;
    const bool each_row = row_by_row(call.chunk_size, call.row_count);
    for (std::int64_t first = 0; first < call.row_count; first += batch_rows) {
        const std::int64_t rows = std::min(batch_rows, call.row_count - first);
        launch_cells(&make_keys<Key>, cell_blocks(rows, call.chunk_size), call, inversion, first,
                     rows, keys.get(), positions.get(), offsets.get());
        const int* sorted = nullptr;
        for (std::int64_t row = 0; row < (each_row ? rows : 1); ++row) {
            const std::int64_t at = row * call.chunk_size;
            cub::DoubleBuffer<Key> key_buffers(keys.get() + at, keys.get() + batch_elements + at);
            cub::DoubleBuffer<int> position_buffers(positions.get() + at,
                                                    positions.get() + batch_elements + at);
            const auto sort = [&](void* temporary, std::size_t& bytes) {
                if (each_row) {
                    return cub::DeviceRadixSort::SortPairs(
                        temporary, bytes, key_buffers, position_buffers,
                        static_cast<int>(call.chunk_size), 0, end_bit, launch_stream());
                }
                return cub::DeviceSegmentedRadixSort::SortPairs(
                    temporary, bytes, key_buffers, position_buffers,
                    static_cast<int>(rows * call.chunk_size), static_cast<int>(rows), offsets.get(),
                    offsets.get() + 1, 0, end_bit, launch_stream());
            };
            std::size_t bytes = 0;
            KAEL_CUDA_CHECK(sort(nullptr, bytes));
            KAEL_CUDA_CHECK(sort(storage.reserve(bytes), bytes));
            // Every row of a batch takes the same passes, so ends in the same buffer.
            sorted = position_buffers.Current() - at;
        }
        launch_cells(&gather_sorted, cell_blocks(rows, call.output_count), call, sorted, first,
                     rows);
    }
}

template <typename Key>
void launch_sort_in_block(const SortCall& call, Key inversion, int end_bit) {
    const auto launch = [&](auto kernel, int threads) {
        const int blocks =
            grid_blocks(reinterpret_cast<const void*>(kernel), call.row_count, threads);
        kernel<<<blocks, threads, 0, launch_stream()>>>(call, inversion, end_bit);
        check_launch(typeid(kernel), __FILE__, __LINE__);
    };
    if (call.chunk_size <= kSmallTile) {
        launch(&sort_in_block<Key, kSmallThreads>, kSmallThreads);
    } else {
        launch(&sort_in_block<Key, kLargeThreads>, kLargeThreads);
    }
}

// Sorts with CUB when every row's positions fit int32, else with the shared one-thread-per-row
// task (rows of 2^31 elements and more).
void run_sort(const SortCall& call) {
    if (call.chunk_size > INT_MAX) {
        kernels::tasks::launch_sort_rows<Launcher>(call.dtype, call.values, call.indices, call.data,
                                                   call.chunk_size, call.row_count,
                                                   call.output_count, call.descending);
        return;
    }
    const auto sort = [&](auto key) {
        using Key = decltype(key);
        const Key inversion = call.descending ? key_inversion<Key>(call.dtype) : Key{0};
        const int end_bit = key_bits(call.dtype);
        if (call.chunk_size <= kLargeTile) {
            launch_sort_in_block<Key>(call, inversion, end_bit);
        } else {
            sort_long_rows<Key>(call, inversion, end_bit);
        }
    };
    if (wide_keys(call.dtype)) {
        sort(std::uint64_t{0});
    } else {
        sort(std::uint32_t{0});
    }
}

// Radix select reads each long row a few times in one block: the better choice unless rows
// are few and very long, where a device-wide sort of each row wins.
bool select_fits(std::int64_t chunk_size, std::int64_t row_count, std::int64_t k) {
    return k <= kMaxSelect && chunk_size > kLargeTile && chunk_size <= INT_MAX &&
           (chunk_size <= (std::int64_t{1} << 18) || row_count >= multiprocessor_count());
}

}  // namespace

kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int32_t descending) {
    return plugin::guarded("cuda.sort", [&] {
        use_device(device);
        if (kernels::tasks::check_sort_call("sort", dtype, values, indices, data, chunk_size,
                                            row_count, chunk_size)) {
            run_sort({data, values, indices, dtype, static_cast<int>(kernels::dtype_size(dtype)),
                      chunk_size, row_count, chunk_size, descending != 0});
        }
    });
}

kael_status topk(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int64_t k, int32_t largest) {
    return plugin::guarded("cuda.topk", [&] {
        use_device(device);
        if (!kernels::tasks::check_sort_call("topk", dtype, values, indices, data, chunk_size,
                                             row_count, k)) {
            return;
        }
        if (select_fits(chunk_size, row_count, k)) {
            launch_topk_select(dtype, values, indices, data, chunk_size, row_count, k,
                               largest != 0);
        } else {
            run_sort({data, values, indices, dtype, static_cast<int>(kernels::dtype_size(dtype)),
                      chunk_size, row_count, k, largest != 0});
        }
    });
}

}  // namespace kael::cuda
