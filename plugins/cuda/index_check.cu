// check_indices without a host sync: one small kernel per check writes the first bad position
// into the device's error record (atomicMin, then the last block to finish stores its value);
// synchronize() and copy_to_host() read the record after the sync they do anyway.
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "index_check.h"
#include "kael/kernels/index_check.h"

namespace kael::cuda {

namespace {

// check < 0 until a check finds a bad index; then that check's id, position and value stay until
// the host reports them. The kernels of one stream run in order, so the first check wins.
struct ErrorRecord {
    unsigned long long position;  // ULLONG_MAX: none in the running check
    long long check;
    long long value;
    unsigned int finished_blocks;  // blocks of the running check done; reset by the last one
    unsigned int reserved;
};
constexpr size_t kClearedBytes = 3 * sizeof(long long);  // 0xFF: no position, check -1

struct CheckSite {
    std::string op;
    std::string what;
    std::int64_t axis;
    std::int64_t high;
    [[nodiscard]] bool is(const char* other_op, const char* other_what, std::int64_t other_axis,
                          std::int64_t other_high) const {
        return axis == other_axis && high == other_high && op == other_op && what == other_what;
    }
};

struct FindBadIndex {};  // names the kernel in launch errors

__global__ void find_bad_index(const std::int64_t* indices, std::int64_t count, std::int64_t low,
                               std::int64_t high, long long check, ErrorRecord* record) {
    if (record->check >= 0) {
        return;  // an earlier check's error stands; uniform over the grid
    }
    __shared__ unsigned long long block_first;
    if (threadIdx.x == 0) {
        block_first = ULLONG_MAX;
    }
    __syncthreads();
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         i < count; i += stride) {
        const std::int64_t value = indices[i];
        if (value < low || value >= high) {
            atomicMin(&block_first, static_cast<unsigned long long>(i));
            break;  // this thread's later positions are larger
        }
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    if (block_first != ULLONG_MAX) {
        atomicMin(&record->position, block_first);
    }
    __threadfence();
    if (atomicAdd(&record->finished_blocks, 1U) == gridDim.x - 1) {
        __threadfence();
        const unsigned long long first = atomicMin(&record->position, ULLONG_MAX);
        if (first != ULLONG_MAX) {
            record->value = indices[first];
            record->check = check;
        }
        record->finished_blocks = 0;
    }
}

}  // namespace

// Per device: the record, its pinned host copy, and the call sites checked since the last
// report (ids are positions in sites; they are few distinct ones, however many checks ran).
struct DeviceIndexChecks {
    std::mutex mutex;
    ErrorRecord* device_record = nullptr;
    ErrorRecord* host_record = nullptr;
    std::vector<CheckSite> sites;

    // The id of a site, added when new; no allocation for one already seen.
    long long site_id(const char* op, const char* what, std::int64_t axis, std::int64_t high) {
        for (std::size_t id = sites.size(); id-- > 0;) {
            if (sites[id].is(op, what, axis, high)) {
                return static_cast<long long>(id);
            }
        }
        sites.push_back(CheckSite{op, what, axis, high});
        return static_cast<long long>(sites.size() - 1);
    }
};

namespace {

DeviceIndexChecks* checks_for(std::int32_t device, bool create) {
    static std::mutex mutex;
    static std::map<std::int32_t, std::unique_ptr<DeviceIndexChecks>> per_device;
    const std::lock_guard lock(mutex);
    auto found = per_device.find(device);
    if (found == per_device.end()) {
        if (!create) {
            return nullptr;
        }
        found = per_device.emplace(device, std::make_unique<DeviceIndexChecks>()).first;
    }
    return found->second.get();
}

// Called with checks.mutex held; the record is made once per device and never freed.
void ensure_record(DeviceIndexChecks& checks) {
    if (checks.device_record != nullptr) {
        return;
    }
    void* host = nullptr;
    KAEL_CUDA_CHECK(cudaMallocHost(&host, sizeof(ErrorRecord)));
    void* record = nullptr;
    KAEL_CUDA_CHECK(cudaMalloc(&record, sizeof(ErrorRecord)));
    KAEL_CUDA_CHECK(cudaMemsetAsync(record, 0, sizeof(ErrorRecord), nullptr));
    KAEL_CUDA_CHECK(cudaMemsetAsync(record, 0xFF, kClearedBytes, nullptr));
    checks.host_record = static_cast<ErrorRecord*>(host);
    checks.device_record = static_cast<ErrorRecord*>(record);
}

}  // namespace

IndexErrorReport::IndexErrorReport() {
    DeviceIndexChecks* checks = checks_for(current_device(), false);
    if (checks == nullptr) {
        return;
    }
    lock_ = std::unique_lock(checks->mutex);
    if (checks->sites.empty()) {
        lock_.unlock();
        return;
    }
    KAEL_CUDA_CHECK(cudaMemcpyAsync(checks->host_record, checks->device_record,
                                    sizeof(ErrorRecord), cudaMemcpyDeviceToHost, nullptr));
    checks_ = checks;
}

void IndexErrorReport::report() {
    if (checks_ == nullptr) {
        return;
    }
    const ErrorRecord record = *checks_->host_record;  // the caller's sync waited for the copy
    std::string message;
    if (record.check >= 0 && record.check < static_cast<long long>(checks_->sites.size())) {
        const CheckSite& site = checks_->sites[static_cast<size_t>(record.check)];
        message = kernels::index_error_message(site.op.c_str(), site.what.c_str(), record.value,
                                               site.axis, site.high);
        KAEL_CUDA_CHECK(cudaMemsetAsync(checks_->device_record, 0xFF, kClearedBytes, nullptr));
    }
    // Every check queued before the sync has run: their ids can be given out again.
    checks_->sites.clear();
    checks_ = nullptr;
    lock_.unlock();
    if (!message.empty()) {
        kernels::throw_index_error(message);
    }
}

kael_status check_indices(int32_t device, const int64_t* indices, int64_t count, int64_t low,
                          int64_t high, int64_t axis, const char* op, const char* what) {
    return plugin::guarded("cuda.check_indices", [&] {
        kernels::check_indices_call(indices, count, low, high, op, what);
        use_device(device);
        if (count == 0) {
            return;
        }
        DeviceIndexChecks& checks = *checks_for(current_device(), true);
        const std::lock_guard lock(checks.mutex);
        ensure_record(checks);
        const long long site = checks.site_id(op, what, axis, high);
        const int blocks = grid_blocks(reinterpret_cast<const void*>(&find_bad_index),
                                       blocks_for(count, kThreadsPerBlock * 4));
        find_bad_index<<<blocks, kThreadsPerBlock>>>(indices, count, low, high, site,
                                                     checks.device_record);
        check_launch(typeid(FindBadIndex), __FILE__, __LINE__);
    });
}

}  // namespace kael::cuda
