// gather and scatter_add. When the innermost dimension is a contiguous run that shares one
// index (index_select, embedding and their backward: index stride 0, data and out stride 1),
// a warp moves each such row, 16 bytes per lane when aligned; everything else runs the shared
// index tasks. An index outside [0, bound) (a check still pending) writes zeros or adds nothing.
// A row gather over the indices of a check_indices call held just before it runs that check
// too (embedding, index_select): one launch instead of two.
// Repeated scatter indices meet in atomicAdd, so float sums are not bit-reproducible on a GPU.
#include <climits>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "index_check.h"
#include "kael/kernels/tasks/index.h"

namespace kael::cuda {
namespace {

constexpr int kWarpsPerBlock = kThreadsPerBlock / 32;

// The rows (every coordinate but the innermost) of an index layout whose innermost dimension
// is a contiguous run sharing one index.
struct RowLayout {
    kael_index_layout layout;
    std::int64_t rows;
    std::int64_t length;  // units per row: shape[dims - 1] elements, or fewer 16-byte units
    std::int64_t bound;
};

// Calls visit(position, index, lane) for each row of the warp's share whose index is in
// range; skip(position, lane) for the others. A warp per row, rows grid-strided.
template <typename Visit, typename Skip>
__device__ void for_each_row(const RowLayout& rows, const std::int64_t* indices, Visit visit,
                             Skip skip) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
    for (std::int64_t row = blockIdx.x * static_cast<std::int64_t>(kWarpsPerBlock) +
                            threadIdx.x / 32;
         row < rows.rows; row += warps) {
        const kernels::tasks::IndexPosition position =
            kernels::tasks::locate_index(rows.layout, row, rows.layout.dims - 1);
        const std::int64_t index = indices[position.index];
        if (index < 0 || index >= rows.bound) {
            skip(position, lane);
        } else {
            visit(position, index * rows.layout.data_strides[rows.layout.axis], lane);
        }
    }
}

// Unit is T, or uint4 when every row starts 16-byte aligned: length is then in units.
// check: a held check of these indices, whose positions are the rows (record null: none).
template <typename Unit>
__global__ void __launch_bounds__(kThreadsPerBlock)
    gather_rows(Unit* __restrict__ out, const Unit* __restrict__ data,
                const std::int64_t* __restrict__ indices, RowLayout rows,
                std::int64_t elements_per_unit, KernelIndexCheck check) {
    begin_small_grid();
    __shared__ unsigned long long block_first;
    const bool checking = check_pending(check);  // the same for every thread
    if (checking) {
        if (threadIdx.x == 0) {
            block_first = ULLONG_MAX;
        }
        __syncthreads();
    }
    for_each_row(
        rows, indices,
        [&](const kernels::tasks::IndexPosition& position, std::int64_t offset, int lane) {
            Unit* const target = out + position.source / elements_per_unit;
            const Unit* const source = data + (position.data + offset) / elements_per_unit;
            // kInFlight loads per lane before the stores (a 768-float row in one round): a row
            // is latency-bound otherwise.
            constexpr int kInFlight = 8;
            for (std::int64_t first = lane; first < rows.length; first += kInFlight * 32) {
                Unit units[kInFlight];
#pragma unroll
                for (int k = 0; k < kInFlight; ++k) {
                    const std::int64_t i = first + k * 32;
                    units[k] = i < rows.length ? source[i] : Unit{};
                }
#pragma unroll
                for (int k = 0; k < kInFlight; ++k) {
                    if (first + k * 32 < rows.length) {
                        target[first + k * 32] = units[k];
                    }
                }
            }
        },
        [&](const kernels::tasks::IndexPosition& position, int lane) {
            Unit* const target = out + position.source / elements_per_unit;
            for (std::int64_t i = lane; i < rows.length; i += 32) {
                target[i] = Unit{};
            }
            if (checking && lane == 0) {
                atomicMin(&block_first, static_cast<unsigned long long>(position.index));
            }
        });
    if (checking) {
        __syncthreads();
        if (threadIdx.x == 0) {
            finish_block_check(check, block_first, indices);
        }
    }
}

template <typename T>
__device__ void add_element(kernels::Storage<T>* slot, kernels::Storage<T> value) {
    if constexpr (kernels::is_bool_v<T>) {
        if (value != 0) {
            *slot = 1;  // logical or: only ever stores 1, no atomic needed
        }
    } else {
        Launcher::atomic_add<T>(slot, value);
    }
}

// kVector: f32 rows of whole, aligned float4s (length in float4s), added with the sm_90
// vector atomic.
template <typename T, bool kVector>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scatter_add_rows(kernels::Storage<T>* data, const std::int64_t* indices,
                     const kernels::Storage<T>* source, RowLayout rows) {
    begin_small_grid();
    for_each_row(
        rows, indices,
        [&](const kernels::tasks::IndexPosition& position, std::int64_t offset, int lane) {
            kernels::Storage<T>* const target = data + position.data + offset;
            const kernels::Storage<T>* const addend = source + position.source;
            if constexpr (kVector) {  // T is float
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
                for (std::int64_t i = lane; i < rows.length; i += 32) {
                    atomicAdd(reinterpret_cast<float4*>(target) + i,
                              reinterpret_cast<const float4*>(addend)[i]);
                }
#else
                for (std::int64_t i = lane; i < rows.length * 4; i += 32) {
                    atomicAdd(target + i, addend[i]);
                }
#endif
            } else {
                // kInFlight loads a lane before its atomics, as gather_rows: a long row would
                // otherwise wait on one load per atomic.
                constexpr int kInFlight = 8;
                for (std::int64_t first = lane; first < rows.length; first += kInFlight * 32) {
                    kernels::Storage<T> addends[kInFlight];
#pragma unroll
                    for (int k = 0; k < kInFlight; ++k) {
                        const std::int64_t i = first + k * 32;
                        addends[k] = i < rows.length ? addend[i] : kernels::Storage<T>{};
                    }
#pragma unroll
                    for (int k = 0; k < kInFlight; ++k) {
                        if (first + k * 32 < rows.length) {
                            add_element<T>(target + first + k * 32, addends[k]);
                        }
                    }
                }
            }
        },
        [](const kernels::tasks::IndexPosition&, int) {});
}

// The row form of a layout, when its innermost dimension is a contiguous run with one index.
bool as_rows(const kael_index_layout& layout, RowLayout& rows) {
    const int last = layout.dims - 1;
    if (layout.axis == last || layout.index_strides[last] != 0 ||
        layout.data_strides[last] != 1 || layout.source_strides[last] != 1 ||
        layout.shape[last] < 2) {
        return false;
    }
    rows = RowLayout{layout, layout.count / layout.shape[last], layout.shape[last],
                     kernels::index_bound(layout)};
    return true;
}

// Whether every row of both operands starts 16-byte aligned and spans whole 16-byte units.
bool rows_aligned(const RowLayout& rows, std::int64_t element_bytes, const void* first,
                  const void* second) {
    const auto aligned = [](std::int64_t bytes) { return bytes % 16 == 0; };
    if (!aligned(rows.length * element_bytes) ||
        !aligned(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(first))) ||
        !aligned(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(second)))) {
        return false;
    }
    for (int dim = 0; dim + 1 < rows.layout.dims; ++dim) {
        // The axis stride is scaled by index values, whatever the index's extent there.
        const bool used = rows.layout.shape[dim] > 1 || dim == rows.layout.axis;
        if (used && (!aligned(rows.layout.data_strides[dim] * element_bytes) ||
                                           !aligned(rows.layout.source_strides[dim] * element_bytes))) {
            return false;
        }
    }
    return true;
}

template <typename Kernel, typename... Args>
void launch_rows(Kernel kernel, const RowLayout& rows, Args... args) {
    const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel),
                                   blocks_for(rows.rows, kWarpsPerBlock));
    launch_small_early(kernel, static_cast<unsigned>(blocks), kThreadsPerBlock, args...);
}

template <typename T>
void gather_by_rows(void* out, const void* data, const std::int64_t* indices, RowLayout rows,
                    const KernelIndexCheck& check) {
    using S = kernels::Storage<T>;
    constexpr std::int64_t kPerUnit = 16 / sizeof(S);
    if (rows_aligned(rows, sizeof(S), out, data)) {
        rows.length /= kPerUnit;
        launch_rows(&gather_rows<uint4>, rows, static_cast<uint4*>(out),
                    static_cast<const uint4*>(data), indices, rows, kPerUnit, check);
        return;
    }
    launch_rows(&gather_rows<S>, rows, static_cast<S*>(out), static_cast<const S*>(data), indices,
                rows, std::int64_t{1}, check);
}

// Whether the rows read the index tensor's elements once each, in order: row r's index is at
// offset r (a contiguous index under the row dims), so row positions are check positions.
bool rows_read_indices_in_order(const RowLayout& rows) {
    std::int64_t expected = 1;
    for (int dim = rows.layout.dims - 2; dim >= 0; --dim) {
        if (rows.layout.shape[dim] > 1 && rows.layout.index_strides[dim] != expected) {
            return false;
        }
        expected *= rows.layout.shape[dim];
    }
    return true;
}

template <typename T>
void scatter_by_rows(void* data, const std::int64_t* indices, const void* source, RowLayout rows) {
    using S = kernels::Storage<T>;
    if constexpr (std::is_same_v<T, float>) {
        if (rows_aligned(rows, sizeof(S), data, source)) {
            rows.length /= 4;
            launch_rows(&scatter_add_rows<T, true>, rows, static_cast<S*>(data), indices,
                        static_cast<const S*>(source), rows);
            return;
        }
    }
    launch_rows(&scatter_add_rows<T, false>, rows, static_cast<S*>(data), indices,
                static_cast<const S*>(source), rows);
}

// Validates as the shared drivers do; true when the call has work and fits the row kernels.
bool row_call(kael_dtype dtype, const void* first, const void* second, const std::int64_t* indices,
              const kael_index_layout* layout, const char* entry, RowLayout& rows) {
    kernels::check_index_layout(layout, entry);
    return kernels::valid_dtype(dtype) && layout->count > 0 && first != nullptr &&
           second != nullptr && indices != nullptr && as_rows(*layout, rows);
}

}  // namespace

kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                   const int64_t* indices, const kael_index_layout* layout) {
    return plugin::guarded("cuda.gather", [&] {
        RowLayout rows{};
        const bool by_rows = row_call(dtype, out, data, indices, layout, "gather", rows);
        std::unique_lock<std::mutex> check_lock;
        KernelIndexCheck check;
        // Before use_device, which would launch a held check of these indices on its own.
        if (by_rows && rows_read_indices_in_order(rows)) {
            check = take_held_index_check(device, indices, rows.rows, rows.bound, check_lock);
        }
        use_device(device);
        if (!by_rows) {  // declines bf16/f16: the core runs them in f32
            return kernels::tasks::launch_gather<Launcher>(dtype, out, data, indices, layout);
        }
        kernels::with_storage_dtype(dtype, [&](auto tag) {  // rows are copied as they are
            gather_by_rows<kernels::TagType<decltype(tag)>>(out, data, indices, rows, check);
        });
    });
}

kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,
                        const void* source, const kael_index_layout* layout) {
    return plugin::guarded("cuda.scatter_add", [&] {
        use_device(device);
        RowLayout rows{};
        // bf16/f16 (Launcher::atomic_add: CUDA's atomics for the dtype) take an element a
        // thread: a warp's row of their atomics is 15x slower (a GPT-2 cache row of 1536, 40
        // us against 2.7 on an H100).
        const bool two_bytes = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
        if (two_bytes || !row_call(dtype, data, source, indices, layout, "scatter_add", rows)) {
            return kernels::tasks::launch_scatter_add<Launcher, true>(dtype, data, indices,
                                                                      source, layout);
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            scatter_by_rows<kernels::TagType<decltype(tag)>>(data, indices, source, rows);
        });
    });
}

}  // namespace kael::cuda
