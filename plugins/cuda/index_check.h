#pragma once
// Deferred index checks on the GPU: check_indices queues a kernel that records the first bad
// index in a per-device record in device memory; the next synchronising call reads the record
// and reports it (KAEL_STATUS_INDEX_ERROR) once.
#include <cstdint>
#include <mutex>

#include "index_check_record.cuh"

namespace kael::cuda {

struct DeviceIndexChecks;

// check_indices holds its check (on the calling thread) instead of launching it. use_device,
// which every entry point calls first, launches a held check; a row gather takes it first.
void launch_held_index_check();

// The held check, for a kernel that reads count indices at indices in order (its positions are
// the check's) and treats those outside [0, bound) as bad; none (record null) when the held
// check is another one. lock then holds the device's check lock until the kernel is queued.
KernelIndexCheck take_held_index_check(std::int32_t device, const std::int64_t* indices,
                                       std::int64_t count, std::int64_t bound,
                                       std::unique_lock<std::mutex>& lock);

// Wraps a synchronising call on the current device: the constructor queues, before the sync,
// an asynchronous copy of the record into pinned memory when checks are pending (and holds the
// device's check lock, so no check slips in); report(), after the sync, throws the error once.
class IndexErrorReport {
public:
    IndexErrorReport();
    IndexErrorReport(const IndexErrorReport&) = delete;
    IndexErrorReport& operator=(const IndexErrorReport&) = delete;
    void report();

private:
    std::unique_lock<std::mutex> lock_;
    DeviceIndexChecks* checks_ = nullptr;  // null when nothing is pending
};

}  // namespace kael::cuda
