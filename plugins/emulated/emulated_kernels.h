#pragma once
// Entry points of the emulated plugin's table, one file per family, and the Launcher through
// which the shared device tasks (kael/kernels/tasks/) run here.
#include <cstdint>

#include "emulated_launch.h"
#include "kael/plugin_api.h"

namespace kael::emulated {

// The emulated device is index 0 only.
void check_device(int32_t device);

// memory.cpp: device memory is separate host allocations, tracked so that misuse is caught.
std::uint64_t bytes_in_use();
std::uint64_t memory_total();         // host physical memory
void* allocate_block(int64_t bytes);  // throws StatusError(OUT_OF_MEMORY)
void release_block(void* block);
// Throws INVALID_ARGUMENT unless [address, address + bytes) lies inside one live device block.
void check_on_device(const void* address, int64_t bytes, const char* what);

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        emulated::for_each(count, task);
    }
    template <typename T>
    static void atomic_add(T* target, T value) {
        emulated::atomic_add(target, value);
    }
    static void* allocate(std::int64_t bytes) { return allocate_block(bytes); }
    static void release(void* block) { release_block(block); }
};

kael_status allocate(int32_t device, int64_t bytes, void** block);
void release(int32_t device, void* block);
kael_status copy_to_device(int32_t device, void* target, const void* source, int64_t bytes);
kael_status copy_to_host(int32_t device, void* target, const void* source, int64_t bytes);
kael_status copy_within_device(int32_t device, void* target, const void* source, int64_t bytes);
kael_status synchronize(int32_t device);

// elementwise.cpp
kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value);
kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout);
kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params);

// reduce.cpp
kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count);

// matmul.cpp
kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes);

// index.cpp
kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                   const int64_t* indices, const kael_index_layout* layout);
kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,
                        const void* source, const kael_index_layout* layout);

// sequence.cpp
kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int32_t descending);
kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count);

}  // namespace kael::emulated
