#pragma once
// Deferred index checks on the GPU: check_indices queues a kernel that records the first bad
// index in a per-device record in device memory; the next synchronising call reads the record
// and reports it (KAEL_STATUS_INDEX_ERROR) once.
#include <mutex>

namespace kael::cuda {

struct DeviceIndexChecks;

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
