#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "cuda_context.h"
#include "cuda_kernels.h"
#include "graphs.h"
#include "index_check.h"

namespace kael::cuda {
namespace {

void check_copy(std::int32_t device, void* target, const void* source, int64_t bytes) {
    plugin::check_copy_arguments(target, source, bytes);
    use_device(device);
}

// Host copies and waits cannot be part of a recording: the host buffer may be gone when the
// graph is replayed, and a wait would wait for work that was recorded, not run.
void refuse_while_recording(const char* what) {
    if (recording_graph()) {
        plugin::unsupported(std::string(what) +
                            " is not allowed while this thread records a "
                            "device graph; do it before recording or after");
    }
}

// Stream-ordered allocation on the legacy stream while a recording is open on another stream
// is safe, but CUDA counts it as a possibly unsafe call: relax the thread's mode around it.
class RelaxedCaptureMode {
public:
    RelaxedCaptureMode() {
        if (recording_graph()) {
            mode_ = cudaStreamCaptureModeRelaxed;
            static_cast<void>(cudaThreadExchangeStreamCaptureMode(&mode_));
            relaxed_ = true;
        }
    }
    ~RelaxedCaptureMode() {
        if (relaxed_) {
            static_cast<void>(cudaThreadExchangeStreamCaptureMode(&mode_));
        }
    }
    RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
    RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

private:
    cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
    bool relaxed_ = false;
};

// The device's default memory pool keeps what it is given back (as PyTorch's allocator does):
// cudaFree would synchronize the device, and unmapping a large block costs milliseconds.
void keep_freed_memory(std::int32_t device) {
    static std::mutex mutex;
    static std::set<std::int32_t> configured;
    const std::lock_guard lock(mutex);
    if (configured.insert(device).second) {
        cudaMemPool_t pool = nullptr;
        KAEL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
        std::uint64_t keep_everything = UINT64_MAX;
        KAEL_CUDA_CHECK(
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
    }
}

}  // namespace

void* device_malloc(std::int64_t bytes) {
    if (bytes <= 0) {
        plugin::invalid("allocation size must be positive, got " + std::to_string(bytes));
    }
    void* block = nullptr;
    const auto size = static_cast<size_t>(bytes);
    const RelaxedCaptureMode relaxed;
    if (!memory_pools()) {
        KAEL_CUDA_CHECK(cudaMalloc(&block, size));
        return block;
    }
    keep_freed_memory(current_device());
    if (cudaMallocAsync(&block, size, nullptr) == cudaSuccess) {
        return block;
    }
    // Out of memory with blocks parked in the pool: wait for pending frees, return them, retry.
    static_cast<void>(cudaGetLastError());
    KAEL_CUDA_CHECK(cudaDeviceSynchronize());
    cudaMemPool_t pool = nullptr;
    KAEL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, current_device()));
    KAEL_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    KAEL_CUDA_CHECK(cudaMallocAsync(&block, size, nullptr));
    return block;
}

void device_free(void* block) noexcept {
    if (block == nullptr || keep_for_graph(block)) {
        return;
    }
    // Ordered after the work already queued on the legacy stream, which every launch uses.
    static_cast<void>(memory_pools() ? cudaFreeAsync(block, nullptr) : cudaFree(block));
    static_cast<void>(cudaGetLastError());
}

namespace {

// allocate's and host_memory's arguments.
void check_allocation(int64_t bytes, void* const* block) {
    if (block == nullptr) {
        plugin::invalid("block is null");
    }
    if (bytes <= 0) {
        plugin::invalid("allocation size must be positive, got " + std::to_string(bytes));
    }
}

}  // namespace

kael_status allocate(int32_t device, int64_t bytes, void** block) {
    return plugin::guarded("cuda.allocate", [&] {
        check_allocation(bytes, block);
        // An allocation queues no work, so a held index check stays held for the row gather
        // that may follow (an index_select allocates its output between check and gather).
        if (device != current_device()) {
            use_device(device);
        }
        try {
            *block = device_malloc(bytes);
        } catch (const plugin::StatusError& error) {
            size_t free_bytes = 0;
            size_t total_bytes = 0;
            const bool known = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
            static_cast<void>(cudaGetLastError());
            throw plugin::StatusError(
                error.status(),
                "cannot allocate " + std::to_string(bytes) +
                    " bytes on cuda:" + std::to_string(device) +
                    (known ? " (" + std::to_string(free_bytes) + " bytes free)" : std::string()) +
                    ": " + error.what());
        }
    });
}

void release(int32_t device, void* block) {
    if (block == nullptr) {
        return;
    }
    try {
        use_device(device);
    } catch (...) {
        return;  // release must not fail; an unknown device has no block of ours
    }
    device_free(block);
}

kael_status copy_to_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("cuda.copy_to_device", [&] {
        check_copy(device, target, source, bytes);
        refuse_while_recording("a copy from host memory");
        if (bytes > 0) {
            KAEL_CUDA_CHECK(
                cudaMemcpy(target, source, static_cast<size_t>(bytes), cudaMemcpyHostToDevice));
        }
    });
}

kael_status copy_to_host(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("cuda.copy_to_host", [&] {
        check_copy(device, target, source, bytes);
        refuse_while_recording("a copy to host memory");
        IndexErrorReport index_errors;
        if (bytes > 0) {
            KAEL_CUDA_CHECK(
                cudaMemcpy(target, source, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost));
        } else {
            KAEL_CUDA_CHECK(cudaDeviceSynchronize());  // "waits for earlier work", copy or not
        }
        index_errors.report();
    });
}

kael_status copy_within_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("cuda.copy_within_device", [&] {
        check_copy(device, target, source, bytes);
        if (bytes > 0 && target != source) {
            KAEL_CUDA_CHECK(cudaMemcpyAsync(target, source, static_cast<size_t>(bytes),
                                            cudaMemcpyDeviceToDevice, launch_stream()));
        }
    });
}

namespace {

kael_status host_allocate(int32_t device, int64_t bytes, void** block) {
    return plugin::guarded("cuda.host_memory.allocate", [&] {
        check_allocation(bytes, block);
        use_device(device);
        // Portable: pinned for every device's copies, whichever device asked.
        const cudaError_t status =
            cudaHostAlloc(block, static_cast<size_t>(bytes), cudaHostAllocPortable);
        if (status != cudaSuccess) {
            static_cast<void>(cudaGetLastError());
            throw plugin::StatusError(
                KAEL_STATUS_OUT_OF_MEMORY,
                "cannot allocate " + std::to_string(bytes) +
                    " bytes of page-locked host memory: " + cudaGetErrorString(status));
        }
    });
}

void host_release(int32_t /*device*/, void* block) {
    if (block != nullptr) {
        static_cast<void>(cudaFreeHost(block));
        static_cast<void>(cudaGetLastError());
    }
}

}  // namespace

const kael_host_memory* host_memory() {
    static const kael_host_memory made = {sizeof(kael_host_memory), host_allocate, host_release};
    return &made;
}

kael_status synchronize(int32_t device) {
    return plugin::guarded("cuda.synchronize", [&] {
        use_device(device);
        refuse_while_recording("waiting for the device (synchronize)");
        IndexErrorReport index_errors;
        KAEL_CUDA_CHECK(cudaDeviceSynchronize());
        index_errors.report();
    });
}

}  // namespace kael::cuda
