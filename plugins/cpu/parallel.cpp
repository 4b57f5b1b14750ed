#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cpu_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {

void check_device(int32_t device) {
    if (device != 0) {
        plugin::invalid("cpu has one device (0), got device " + std::to_string(device));
    }
}

int worker_count() {
    static const int workers =
        static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1U, 8U));
    return workers;
}

void parallel_ranges(int64_t count, int64_t min_parallel,
                     const std::function<void(int64_t, int64_t)>& body) {
    if (count <= 0) {
        return;
    }
    const int64_t workers = std::min<int64_t>(worker_count(), count);
    if (count < min_parallel || workers <= 1) {
        body(0, count);
        return;
    }
    const int64_t per_worker = (count + workers - 1) / workers;
    std::mutex failure_mutex;
    std::exception_ptr failure;
    const auto run_range = [&](int64_t begin, int64_t end) noexcept {
        try {
            body(begin, end);
        } catch (...) {
            const std::lock_guard lock(failure_mutex);
            if (!failure) {
                failure = std::current_exception();
            }
        }
    };
    {
        // jthreads join on scope exit, also when a later thread fails to start.
        std::vector<std::jthread> helpers;
        helpers.reserve(static_cast<size_t>(workers - 1));
        for (int64_t begin = per_worker; begin < count; begin += per_worker) {
            const int64_t end = std::min(count, begin + per_worker);
            helpers.emplace_back(run_range, begin, end);
        }
        run_range(0, std::min(count, per_worker));
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

}  // namespace kael::cpu
