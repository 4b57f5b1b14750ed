#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cuda_context.h"
#include "index_check.h"

namespace kael::cuda {
namespace {

struct ProbeResult {
    int count = 0;
    std::string reason;
};

std::string probe_failure(cudaError_t error) {
    const std::string detail = std::string(cudaGetErrorString(error)) +
                               " (cudaGetDeviceCount returned " + cudaGetErrorName(error) + ")";
    switch (error) {
        case cudaErrorNoDevice: return "no CUDA device present: " + detail;
        case cudaErrorInsufficientDriver:
            return "CUDA driver not found or too old: " + detail +
                   "; this plugin needs a driver for "
                   "CUDA " +
                   std::to_string(CUDART_VERSION / 1000) + "." +
                   std::to_string(CUDART_VERSION % 1000 / 10) + " or newer";
        default: return "CUDA is not usable: " + detail;
    }
}

const ProbeResult& probed() {
    static const ProbeResult result = [] {
        ProbeResult probe;
        // Eager module loading unless the user chose: a kernel first launched inside a device
        // graph's capture cannot load its module then ("operation not permitted when stream is
        // capturing"). Read once, at the process's first CUDA call.
        setenv("CUDA_MODULE_LOADING", "EAGER", 0);
        const cudaError_t error = cudaGetDeviceCount(&probe.count);
        if (error != cudaSuccess) {
            static_cast<void>(cudaGetLastError());  // not sticky: keep it from later checks
            probe.count = 0;
            probe.reason = probe_failure(error);
        } else if (probe.count == 0) {
            probe.reason = "no CUDA device present (cudaGetDeviceCount found 0)";
        }
        return probe;
    }();
    return result;
}

const char* base_name(const char* path) {
    const char* slash = std::strrchr(path, '/');
    return slash != nullptr ? slash + 1 : path;
}

bool env_is_one(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::strcmp(value, "1") == 0;
}

std::string demangle(const char* mangled) {
    int status = 0;
    const std::unique_ptr<char, decltype(&std::free)> readable(
        abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
    return status == 0 && readable ? std::string(readable.get()) : std::string(mangled);
}

// The device this thread made current through use_device, and its multiprocessor count.
struct ThreadDevice {
    std::int32_t device = -1;
    int multiprocessors = 0;
    bool memory_pools = false;
    bool dependent_launches = false;  // Hopper and later, unless KAEL_CUDA_PDL=0
};
thread_local ThreadDevice this_thread;

}  // namespace

void fail_call(cudaError_t error, const char* call, const char* file, int line) {
    static_cast<void>(cudaGetLastError());  // sticky errors stay; the others must not linger
    const kael_status status =
        error == cudaErrorMemoryAllocation ? KAEL_STATUS_OUT_OF_MEMORY : KAEL_STATUS_DEVICE_ERROR;
    throw plugin::StatusError(status, std::string("CUDA error at ") + base_name(file) + ":" +
                                          std::to_string(line) + ": " + call + " failed with " +
                                          cudaGetErrorString(error));
}

int device_count(const char** reason) {
    const ProbeResult& probe = probed();
    if (reason != nullptr) {
        *reason = probe.count == 0 ? probe.reason.c_str() : nullptr;
    }
    return probe.count;
}

void use_device(std::int32_t device) {
    launch_held_index_check();  // on the device it was made for, before any switch
    if (device == this_thread.device) {
        return;
    }
    const char* reason = nullptr;
    const int count = device_count(&reason);
    if (device < 0 || device >= count) {
        plugin::invalid("cuda device " + std::to_string(device) + " does not exist (" +
                        std::to_string(count) + " device(s)" +
                        (reason != nullptr ? std::string(": ") + reason : std::string()) + ")");
    }
    KAEL_CUDA_CHECK(cudaSetDevice(device));
    this_thread.device = device;
    KAEL_CUDA_CHECK(cudaDeviceGetAttribute(&this_thread.multiprocessors,
                                           cudaDevAttrMultiProcessorCount, device));
    int pools = 0;
    KAEL_CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device));
    this_thread.memory_pools = pools != 0;
    int major = 0;
    KAEL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    this_thread.dependent_launches = major >= 9 && !env_is_zero("KAEL_CUDA_PDL");
}

bool env_is_zero(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::strcmp(value, "0") == 0;
}

bool low_precision_reduce_declined() {
    static const bool declined = env_is_zero("KAEL_CUDA_LOW_PRECISION_REDUCE");
    return declined;
}

bool early_launches() {
    return this_thread.dependent_launches && recording_graph();
}

bool memory_pools() {
    return this_thread.memory_pools;
}

std::int32_t current_device() {
    return this_thread.device;
}

int multiprocessor_count() {
    return this_thread.multiprocessors > 0 ? this_thread.multiprocessors : 1;
}

bool sync_after_launch() {
    static const bool enabled =
        env_is_one("KAEL_CUDA_SYNC_CHECK") || env_is_one("CUDA_LAUNCH_BLOCKING");
    return enabled;
}

void check_launch(const std::type_info& task, const char* file, int line) {
    cudaError_t error = cudaGetLastError();
    // Not inside a device graph's capture, which forbids waiting: a recorded kernel's errors
    // surface when the graph is launched.
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (error == cudaSuccess && sync_after_launch() &&
        cudaStreamIsCapturing(launch_stream(), &capturing) == cudaSuccess &&
        capturing == cudaStreamCaptureStatusNone) {
        error = cudaDeviceSynchronize();
    }
    if (error != cudaSuccess) {
        fail_call(error, ("kernel " + demangle(task.name())).c_str(), file, line);
    }
}

void allow_shared_memory(const void* kernel, int bytes) {
    static std::mutex mutex;
    static std::map<std::pair<const void*, std::int32_t>, int> allowed;
    const std::lock_guard lock(mutex);
    int& done = allowed[{kernel, current_device()}];
    if (done < bytes) {
        KAEL_CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        done = bytes;
    }
}

int resident_blocks(const void* kernel, int threads) {
    // Keyed by device too: devices of one process may differ in multiprocessors.
    static std::mutex mutex;
    static std::map<std::pair<const void*, std::int32_t>, int> per_multiprocessor;
    const std::pair key{kernel, current_device()};
    int blocks = 0;
    {
        const std::lock_guard lock(mutex);
        const auto found = per_multiprocessor.find(key);
        if (found != per_multiprocessor.end()) {
            return found->second * multiprocessor_count();
        }
    }
    KAEL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
    blocks = blocks > 0 ? blocks : 1;
    const std::lock_guard lock(mutex);
    per_multiprocessor[key] = blocks;
    return blocks * multiprocessor_count();
}

}  // namespace kael::cuda
