#pragma once
// check_indices for plugins whose memory the host can read: the rule (the first index
// in memory order outside [low, high) is the one reported), its message, and the error a
// deferring plugin keeps until the device's next synchronize() or copy_to_host().
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "kael/kernels/plugin_support.h"

namespace kael::kernels {

inline void check_indices_call(const std::int64_t* indices, std::int64_t count, std::int64_t low,
                               std::int64_t high, const char* op, const char* what) {
    if (count < 0 || low > high) {
        plugin::invalid("check_indices: count " + std::to_string(count) + " or range [" +
                        std::to_string(low) + ", " + std::to_string(high) + ") is invalid");
    }
    if ((count > 0 && indices == nullptr) || op == nullptr || what == nullptr) {
        plugin::invalid("check_indices: null indices, op or what");
    }
}

// Position of the first index outside [low, high), or -1 when all are inside.
inline std::int64_t first_bad_index(const std::int64_t* indices, std::int64_t count,
                                    std::int64_t low, std::int64_t high) {
    for (std::int64_t i = 0; i < count; ++i) {
        if (indices[i] < low || indices[i] >= high) {
            return i;
        }
    }
    return -1;
}

// "<op>: <what> V is out of bounds for dimension <axis> with size <high>", PyTorch's wording.
inline std::string index_error_message(const char* op, const char* what, std::int64_t value,
                                       std::int64_t axis, std::int64_t high) {
    return std::string(op) + ": " + what + " " + std::to_string(value) +
           " is out of bounds for dimension " + std::to_string(axis) + " with size " +
           std::to_string(high);
}

// The same, for a check reported later (cuda's deferred checks, and the emulated plugin's that
// imitate them): it names the thread that issued the op, since another may be the one told.
inline std::string deferred_index_error_message(const char* op, const char* what,
                                                std::int64_t value, std::int64_t axis,
                                                std::int64_t high, long thread) {
    return index_error_message(op, what, value, axis, high) + " (issued by thread " +
           std::to_string(thread) + "; a cuda index check reports at the next synchronising call)";
}

[[noreturn]] inline void throw_index_error(const std::string& message) {
    throw plugin::StatusError(KAEL_STATUS_INDEX_ERROR, message);
}

// The first index error found since the last report, kept until it is taken (once).
class PendingIndexError {
public:
    void record(const std::string& message) {
        const std::lock_guard lock(mutex_);
        if (!message_) {
            message_ = message;
        }
    }
    // Throws the kept error as KAEL_STATUS_INDEX_ERROR and forgets it; a no-op when none.
    void report() {
        std::optional<std::string> taken;
        {
            const std::lock_guard lock(mutex_);
            taken.swap(message_);
        }
        if (taken) {
            throw_index_error(*taken);
        }
    }

private:
    std::mutex mutex_;
    std::optional<std::string> message_;
};

}  // namespace kael::kernels
