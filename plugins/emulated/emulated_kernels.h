#pragma once
// Entry points of the emulated plugin's table, one file per family, and the Launcher through
// which the shared device tasks (kael/kernels/tasks/) run here.
#include <cstdint>
#include <functional>

#include "emulated_launch.h"
#include "kael/kernels/index_check.h"
#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::emulated {

// The emulated device is index 0 only.
void check_device(int32_t device);

// memory.cpp: device memory is separate host allocations, tracked so that misuse is caught.
std::uint64_t bytes_in_use();
std::uint64_t memory_total();         // host physical memory
void* allocate_block(int64_t bytes);  // throws StatusError(OUT_OF_MEMORY)
void release_block(void* block);
// Throws INVALID_ARGUMENT unless [address, address + bytes) lies inside one live device block.
void check_on_device(const void* address, int64_t bytes, const char* what);
// The index error check_indices found, reported by the next synchronize() or copy_to_host().
kernels::PendingIndexError& pending_index_error();

// graphs.cpp: this thread's device-graph recording, if any. While it records, work is kept
// (record_work) instead of run, and blocks freed are kept until the graph is released.
bool recording_graph();
void record_work(std::function<void()> work);
// work recorded while this thread records, else run now (device copies, index checks).
void run_or_record(std::function<void()> work);
bool keep_for_graph(void* block);  // true when kept
// Throws DEVICE_ERROR (and fails the recording) when this thread records: host copies and
// synchronize, as in a CUDA capture.
void refuse_while_recording(const char* call);

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        if (recording_graph()) {
            record_work([count, task] { emulated::for_each(count, task); });  // tasks copy
            return;
        }
        emulated::for_each(count, task);
    }
    template <typename T>
    static void atomic_add(T* target, T value) {
        emulated::atomic_add(target, value);
    }
    static void* allocate(std::int64_t bytes) { return allocate_block(bytes); }
    static void release(void* block) {
        if (!keep_for_graph(block)) {
            release_block(block);
        }
    }
};

KAEL_DECLARE_PLUGIN_ENTRIES();
KAEL_DECLARE_ENTRY(capture_begin);
KAEL_DECLARE_ENTRY(capture_end);
KAEL_DECLARE_ENTRY(graph_launch);
KAEL_DECLARE_ENTRY(graph_release);

}  // namespace kael::emulated
