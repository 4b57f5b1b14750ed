#pragma once
// The contract between the device task bodies and the plugin that runs them.
//
// A task is a trivially copyable struct (POD layouts, raw device pointers, element functors) with
//     KAEL_HD void operator()(std::int64_t item) const;
// that processes one work item and knows nothing of threads. Tasks are passed by value to the
// launcher, so they hold no std::vector, std::function, virtuals or references. A task may also
// have std::int64_t cost() const, the elements one item reads, from which a host launcher judges
// whether a call is worth threads (the cpu plugin's); device launchers ignore it.
//
// The host drivers in this folder (launch_fill, launch_reduce, ...) validate an ABI call and
// enqueue tasks through a Launcher, a type with only static members:
//     template <typename Task> static void for_each(std::int64_t count, const Task& task);
//         runs task(i) for every i in [0, count) in any order, possibly concurrently;
//     template <typename T> KAEL_HD static void atomic_add(T* target, T value);
//         T is float, double or std::int64_t (wrapping); several items may hit one target;
//     static void* allocate(std::int64_t bytes);  // device scratch (bytes > 0); throws on failure
//     static void release(void* block);           // ordered after the work that used the block
// Drivers throw plugin::StatusError for bad calls; the plugin wraps each entry in guarded().
#include <cstdint>
#include <string>

#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_math.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_api.h"

namespace kael::kernels::tasks {

using kernels::check_element_layout;
using kernels::check_index_layout;
using kernels::index_bound;
using kernels::check_matmul_call;
using kernels::check_matmul_sizes;

KAEL_HD constexpr std::int64_t min_of(std::int64_t a, std::int64_t b) {
    return a < b ? a : b;
}

KAEL_HD constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

// count elements of T in device scratch memory, released when the owner leaves scope.
template <typename Launcher, typename T>
class Scratch {
public:
    explicit Scratch(std::int64_t count)
        : data_(static_cast<T*>(Launcher::allocate(count * std::int64_t{sizeof(T)}))) {}
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() { Launcher::release(data_); }
    [[nodiscard]] T* get() const { return data_; }

private:
    T* data_;
};

inline void check_rows(const char* entry, std::int64_t chunk_size, std::int64_t row_count) {
    if (chunk_size < 0 || row_count < 0) {
        plugin::invalid(std::string(entry) + ": negative chunk_size or row_count");
    }
}

}  // namespace kael::kernels::tasks
