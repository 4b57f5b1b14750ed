#pragma once
// Entry points of the cpu plugin's table, one file per kernel family, plus its thread helper.
#include <cstdint>
#include <functional>

#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::cpu {

// Every device argument must be 0: the host is the plugin's only device.
void check_device(int32_t device);

// Splits [0, count) into contiguous ranges over the plugin's persistent threads (worker_count():
// KAEL_NUM_THREADS, else the machine's) when count >= min_parallel; body(begin, end) runs once
// per range, the calling thread taking some. The first exception a range throws is rethrown.
void parallel_ranges(int64_t count, int64_t min_parallel,
                     const std::function<void(int64_t, int64_t)>& body);
int worker_count();
// Sets worker_count() (1 .. 256, else INVALID_ARGUMENT), adding pool threads as needed, and
// tells the BLAS the same; returns it.
int set_worker_count(int threads);
// The BLAS's own threads (OpenBLAS), when it has a setting for them.
void blas_threads(int threads);

KAEL_DECLARE_PLUGIN_ENTRIES();

}  // namespace kael::cpu
