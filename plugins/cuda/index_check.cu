// check_indices without a host sync: a check is held until this thread's next call into the
// plugin; a row gather over the same indices then runs it in its own kernel, any other call
// first launches it as one small kernel. Either writes the first bad position into the device's
// error record (atomicMin, then the last block to finish stores its value); synchronize() and
// copy_to_host() read the record after the sync they do anyway.
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "index_check.h"
#include "index_check_record.cuh"
#include "kael/kernels/index_check.h"

namespace kael::cuda {

namespace {

// Where a check came from: the op, the bound, and the thread that issued it (its native id,
// as Python's threading.get_native_id() gives it), since the error surfaces at a later
// synchronising call, in whichever thread makes it.
struct CheckSite {
    std::string op;
    std::string what;
    std::int64_t axis;
    std::int64_t high;
    long thread;
    [[nodiscard]] bool is(const char* other_op, const char* other_what, std::int64_t other_axis,
                          std::int64_t other_high, long other_thread) const {
        return axis == other_axis && high == other_high && thread == other_thread &&
               op == other_op && what == other_what;
    }
};

struct FindBadIndex {};  // names the kernel in launch errors

__global__ void find_bad_index(const std::int64_t* indices, std::int64_t count, std::int64_t low,
                               std::int64_t high, KernelIndexCheck check) {
    if (!check_pending(check)) {
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
    if (threadIdx.x == 0) {
        finish_block_check(check, block_first, indices);
    }
}

// A check_indices call not launched yet: this thread's next call into the plugin launches it,
// or runs it inside a row gather over the same indices (take_held_index_check).
struct HeldCheck {
    bool held = false;
    std::int32_t device = -1;
    const std::int64_t* indices = nullptr;
    std::int64_t count = 0;
    std::int64_t low = 0;
    std::int64_t high = 0;
    std::int64_t axis = 0;
    std::string op;
    std::string what;
    long thread = 0;
};
thread_local HeldCheck held_check;

}  // namespace

// Per device: the record, its pinned host copy, and the call sites checked since the last
// report (ids are positions in sites; they are few distinct ones, however many checks ran).
struct DeviceIndexChecks {
    std::mutex mutex;
    ErrorRecord* device_record = nullptr;
    ErrorRecord* host_record = nullptr;
    std::vector<CheckSite> sites;

    // The id of a site, added when new; no allocation for one already seen.
    long long site_id(const char* op, const char* what, std::int64_t axis, std::int64_t high,
                      long thread) {
        for (std::size_t id = sites.size(); id-- > 0;) {
            if (sites[id].is(op, what, axis, high, thread)) {
                return static_cast<long long>(id);
            }
        }
        sites.push_back(CheckSite{op, what, axis, high, thread});
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
    KAEL_CUDA_CHECK(cudaMemsetAsync(record, 0, sizeof(ErrorRecord), launch_stream()));
    KAEL_CUDA_CHECK(cudaMemsetAsync(record, 0xFF, kClearedBytes, launch_stream()));
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
    KAEL_CUDA_CHECK(cudaMemcpyAsync(checks->host_record, checks->device_record, sizeof(ErrorRecord),
                                    cudaMemcpyDeviceToHost, launch_stream()));
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
        message = kernels::deferred_index_error_message(site.op.c_str(), site.what.c_str(),
                                                        record.value, site.axis, site.high,
                                                        site.thread);
        KAEL_CUDA_CHECK(
            cudaMemsetAsync(checks_->device_record, 0xFF, kClearedBytes, launch_stream()));
    }
    // Every check queued before the sync has run: their ids can be given out again.
    checks_->sites.clear();
    checks_ = nullptr;
    lock_.unlock();
    if (!message.empty()) {
        kernels::throw_index_error(message);
    }
}

namespace {

// The device's record and a site id for check, with the device's check lock held by lock, so
// that no report clears the sites before the kernel that uses the id is queued.
KernelIndexCheck claim_site(const HeldCheck& check, std::unique_lock<std::mutex>& lock) {
    DeviceIndexChecks& checks = *checks_for(check.device, true);
    lock = std::unique_lock(checks.mutex);
    ensure_record(checks);
    return {checks.device_record,
            checks.site_id(check.op.c_str(), check.what.c_str(), check.axis, check.high,
                           check.thread)};
}

}  // namespace

void launch_held_index_check() {
    if (!held_check.held) {
        return;
    }
    const HeldCheck check = std::move(held_check);
    held_check = HeldCheck{};
    std::unique_lock<std::mutex> lock;
    const KernelIndexCheck target = claim_site(check, lock);
    const int blocks = grid_blocks(reinterpret_cast<const void*>(&find_bad_index),
                                   blocks_for(check.count, kThreadsPerBlock * 4));
    find_bad_index<<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(check.indices, check.count,
                                                                     check.low, check.high, target);
    check_launch(typeid(FindBadIndex), __FILE__, __LINE__);
}

KernelIndexCheck take_held_index_check(std::int32_t device, const std::int64_t* indices,
                                       std::int64_t count, std::int64_t bound,
                                       std::unique_lock<std::mutex>& lock) {
    const HeldCheck& check = held_check;
    if (!check.held || check.device != device || check.indices != indices ||
        check.count != count || check.low != 0 || check.high != bound) {
        return {};
    }
    const HeldCheck taken = std::move(held_check);
    held_check = HeldCheck{};
    return claim_site(taken, lock);
}

kael_status check_indices(int32_t device, const int64_t* indices, int64_t count, int64_t low,
                          int64_t high, int64_t axis, const char* op, const char* what) {
    return plugin::guarded("cuda.check_indices", [&] {
        kernels::check_indices_call(indices, count, low, high, op, what);
        use_device(device);  // launches a check still held from before
        if (count == 0) {
            return;
        }
        held_check = HeldCheck{true, current_device(), indices, count, low,
                               high, axis, op, what, static_cast<long>(gettid())};
    });
}

}  // namespace kael::cuda
