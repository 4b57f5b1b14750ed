#pragma once
// Host-side state of the CUDA plugin shared by every file: checked runtime calls, the device
// current on this thread, launch checks and device memory. Compiles with g++ and with nvcc.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <typeinfo>

#include "kael/kernels/plugin_support.h"

namespace kael::cuda {

// Throws StatusError with the seed's message: OUT_OF_MEMORY for cudaErrorMemoryAllocation,
// DEVICE_ERROR otherwise. Clears the runtime's last error so it does not resurface later.
[[noreturn]] void fail_call(cudaError_t error, const char* call, const char* file, int line);

#define KAEL_CUDA_CHECK(call)                                                     \
    do {                                                                          \
        const cudaError_t kael_cuda_status = (call);                              \
        if (kael_cuda_status != cudaSuccess) {                                    \
            ::kael::cuda::fail_call(kael_cuda_status, #call, __FILE__, __LINE__); \
        }                                                                         \
    } while (false)

// cudaGetDeviceCount, once per process: the count, or 0 and *reason filled.
int device_count(const char** reason);

// Makes `device` current on this thread (INVALID_ARGUMENT when out of range); a no-op when it
// already is. Our cudart is linked statically, so only the plugin's own calls move it.
void use_device(std::int32_t device);
std::int32_t current_device();

// Whether the environment variable `name` is "0": the cuda plugin's settings that turn
// something off (KAEL_CUDA_GEMV, KAEL_CUDA_PDL, KAEL_CUDNN, ...; plugins/cuda/README.md).
bool env_is_zero(const char* name);
// KAEL_CUDA_LOW_PRECISION_REDUCE=0: the bf16/f16 reductions and scans are declined (the core then
// runs them over f32 twins), read once.
bool low_precision_reduce_declined();

// Multiprocessors of the current device, read once per device.
int multiprocessor_count();

// Blocks of `threads` threads of `kernel` that fit on the current device at once (cached).
int resident_blocks(const void* kernel, int threads);

// Lets kernel use `bytes` of dynamic shared memory on the current device (once per device).
void allow_shared_memory(const void* kernel, int bytes);

// True when KAEL_CUDA_SYNC_CHECK=1 or CUDA_LAUNCH_BLOCKING=1: every launch is waited for.
bool sync_after_launch();

// cudaGetLastError after a launch (and cudaDeviceSynchronize when sync_after_launch()), naming
// the kernel, from `task`'s type, in the message.
void check_launch(const std::type_info& task, const char* file, int line);

// The stream every launch, copy and library call of this thread goes to: the legacy default
// stream (nullptr), or while the thread records a device graph (graphs.cpp), its capture stream.
cudaStream_t launch_stream();
// Whether this thread is recording a device graph now.
bool recording_graph();

// Whether kernels that wait for the grids before them in-kernel (cuda_launch.cuh's
// launch_early) may start while those still run: on Hopper and later, in a recorded graph (a
// decoding step's chain of small kernels), unless KAEL_CUDA_PDL=0.
bool early_launches();

// Whether the current device has stream-ordered memory pools (cudaMallocAsync).
bool memory_pools();

// Device memory for tensors and kernel scratch alike: cudaMallocAsync/cudaFreeAsync on the
// legacy default stream where pools exist (a freed block is reused in stream order, without a
// device synchronization), else cudaMalloc/cudaFree. device_malloc throws OUT_OF_MEMORY.
void* device_malloc(std::int64_t bytes);
void device_free(void* block) noexcept;

}  // namespace kael::cuda
