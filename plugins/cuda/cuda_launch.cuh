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

template <typename Task>
__global__ void __launch_bounds__(kThreadsPerBlock) run_task(std::int64_t count, Task task) {
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

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        if (count <= 0) {
            return;  // a launch of zero blocks is an error
        }
        const int blocks =
            grid_blocks(reinterpret_cast<const void*>(&run_task<Task>), blocks_for(count));
        run_task<Task><<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(count, task);
        check_launch(typeid(Task), __FILE__, __LINE__);
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
