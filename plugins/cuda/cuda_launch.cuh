#pragma once
// How the CUDA plugin runs the shared device tasks (kael/kernels/tasks/launch.h): a grid-stride
// kernel with 64-bit indices, one wave of resident blocks, every launch checked.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <typeinfo>

#include "cuda_context.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/low_precision.h"

namespace kael::cuda {

inline constexpr int kThreadsPerBlock = 256;

// Programmatic dependent launch (Hopper): a kernel launched by launch_early may start while the
// kernel before it still runs, so its launch and what it fetches before waiting (L2 prefetches
// of its weights, never loads) overlap that kernel. It must call wait_for_earlier_grids before
// it reads or writes anything else, then let_dependents_launch (after the wait, so that only
// the next kernel starts early, not a chain of them holding the SMs). Elsewhere both are no-ops.
__device__ inline void let_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ inline void wait_for_earlier_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Warms L2 with the line at address; a line that an earlier kernel rewrites is still read
// afresh after the wait (L2 is coherent), so prefetching before wait_for_earlier_grids is safe.
__device__ inline void prefetch_l2(const void* address) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
}

// Grids of up to kEarlyBlocks blocks (a decoding step's small kernels) are launched early and
// let the next kernel launch at once; a larger grid would share its SMs with the next kernel's
// waiting blocks, so it launches plainly and triggers nothing. Call before touching memory.
inline constexpr unsigned kEarlyBlocks = 64;
__device__ inline void begin_small_grid() {
    if (gridDim.x * gridDim.y * gridDim.z <= kEarlyBlocks) {  // uniform over the grid
        wait_for_earlier_grids();
        let_dependents_launch();
    }
}

template <typename Task>
__global__ void __launch_bounds__(kThreadsPerBlock) run_task(std::int64_t count, Task task) {
    wait_for_earlier_grids();
    let_dependents_launch();
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t item = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         item < count; item += stride) {
        task(item);
    }
}

// Blocks for a grid-stride kernel that needs `wanted` blocks: at most one resident wave, so
// every block loops and none waits for a second wave.
inline int grid_blocks(const void* kernel, std::int64_t wanted, int threads = kThreadsPerBlock) {
    return static_cast<int>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(wanted, resident_blocks(kernel, threads))));
}

inline std::int64_t blocks_for(std::int64_t items, int per_block = kThreadsPerBlock) {
    return (items + per_block - 1) / per_block;
}

// kernel<<<grid, block, 0, launch_stream()>>>(args...), and checked; early where
// early_launches() allows.
template <typename... Params, typename... Args>
void launch_early(void (*kernel)(Params...), dim3 grid, dim3 block, Args... args) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = 0;
    config.stream = launch_stream();
    config.attrs = &attribute;
    config.numAttrs = early_launches() ? 1 : 0;
    KAEL_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
    check_launch(typeid(kernel), __FILE__, __LINE__);
}

// launch_early for grids of up to kEarlyBlocks blocks (whose kernel calls begin_small_grid),
// a plain launch otherwise.
template <typename... Params, typename... Args>
void launch_small_early(void (*kernel)(Params...), dim3 grid, dim3 block, Args... args) {
    if (grid.x * grid.y * grid.z <= kEarlyBlocks) {
        launch_early(kernel, grid, block, args...);
        return;
    }
    kernel<<<grid, block, 0, launch_stream()>>>(static_cast<Params>(args)...);
    check_launch(typeid(kernel), __FILE__, __LINE__);
}

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        if (count <= 0) {
            return;  // a launch of zero blocks is an error
        }
        const int blocks =
            grid_blocks(reinterpret_cast<const void*>(&run_task<Task>), blocks_for(count));
        launch_early(&run_task<Task>, blocks, kThreadsPerBlock, count, task);
    }

    // int64 wraps through the unsigned atomic, as Plus<int64_t> does on the host; bf16/f16
    // (kael's two-byte structs) add with CUDA's own atomics for them, rounding each add.
    template <typename T>
    KAEL_HD static void atomic_add(T* target, T value) {
#if defined(__CUDA_ARCH__)
        if constexpr (std::is_same_v<T, std::int64_t>) {
            atomicAdd(reinterpret_cast<unsigned long long*>(target),
                      static_cast<unsigned long long>(value));
        } else if constexpr (kernels::is_low_precision_v<T>) {
            using Native =
                std::conditional_t<std::is_same_v<T, kernels::BFloat16>, __nv_bfloat16, __half>;
            Native addend;
            std::memcpy(&addend, &value, sizeof addend);
            atomicAdd(reinterpret_cast<Native*>(target), addend);
        } else {
            atomicAdd(target, value);
        }
#else  // host pass only; tasks run on the GPU
        if constexpr (kernels::is_low_precision_v<T>) {
            *target = kernels::from_float<T>(kernels::to_float(*target) + kernels::to_float(value));
        } else {
            *target = kernels::Plus<T>{}(*target, value);
        }
#endif
    }

    static void* allocate(std::int64_t bytes) {
        return device_malloc(bytes);
    }
    static void release(void* block) {
        device_free(block);
    }
};

}  // namespace kael::cuda
