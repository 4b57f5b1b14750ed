#pragma once
// The cpu plugin's Launcher for the shared task bodies (kael/kernels/tasks/launch.h), the one
// every kernel family here uses: for_each splits the items into contiguous ranges over the
// persistent pool when a call reads enough to be worth threads, judged from task.cost() (the
// elements one item reads) where the task says, else from kDefaultItemCost. Scratch is host
// memory; atomic_add is a real atomic, since ranges run concurrently.
#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <new>

#include "cpu_kernels.h"

namespace kael::cpu {

// Below this many elements read, a call stays on the calling thread.
inline constexpr std::int64_t kLaunchMinElements = std::int64_t{1} << 15;
// What an item of a task without cost() is taken to read: a row, so a few dozen rows go wide.
inline constexpr std::int64_t kDefaultItemCost = 1024;

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        std::int64_t per_item = kDefaultItemCost;
        if constexpr (requires {
                          { task.cost() } -> std::convertible_to<std::int64_t>;
                      }) {
            per_item = std::max<std::int64_t>(1, task.cost());
        }
        const std::int64_t min_parallel =
            std::max<std::int64_t>(2, (kLaunchMinElements + per_item - 1) / per_item);
        parallel_ranges(count, min_parallel, [&task](std::int64_t begin, std::int64_t end) {
            for (std::int64_t item = begin; item < end; ++item) {
                task(item);
            }
        });
    }

    // int64 wraps through the unsigned type, as Plus<int64_t> does.
    template <typename T>
    static void atomic_add(T* target, T value) {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(target))
                .fetch_add(static_cast<std::uint64_t>(value), std::memory_order_relaxed);
        } else {
            std::atomic_ref<T>(*target).fetch_add(value, std::memory_order_relaxed);
        }
    }

    static void* allocate(std::int64_t bytes) { return ::operator new(static_cast<size_t>(bytes)); }
    static void release(void* block) { ::operator delete(block); }
};

}  // namespace kael::cpu
