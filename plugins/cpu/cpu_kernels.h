#pragma once
// Entry points of the cpu plugin's table, one file per kernel family, plus its thread helper.
#include <cstdint>
#include <functional>

#include "kael/kernels/plugin_entries.h"
#include "kael/plugin_api.h"

namespace kael::cpu {

// Every device argument must be 0: the host is the plugin's only device.
void check_device(int32_t device);

int worker_count();

// bf16/f16 rows (chunk_size elements each, contiguous) summed, multiplied, maxed or mined in
// f32 into results (rows floats); other ops are declined (reduce.cpp).
void reduce_rows_low_precision(kael_reduce_op op, kael_dtype in_dtype, const void* data,
                               int64_t chunk_size, int64_t rows, float* results);

// parallel_ranges' pool side, for calls that are worth threads.
void parallel_ranges_on_pool(int64_t count, int64_t min_parallel,
                             const std::function<void(int64_t, int64_t)>& body);

// Splits [0, count) into contiguous ranges over the plugin's persistent threads (worker_count():
// KAEL_NUM_THREADS, else the machine's) when count >= min_parallel; body(begin, end) runs once
// per range, the calling thread taking some. The first exception a range throws is rethrown.
// A template, so a small call runs body inline without building a std::function.
template <typename Body>
void parallel_ranges(int64_t count, int64_t min_parallel, Body&& body) {
    if (count <= 0) {
        return;
    }
    if (count < min_parallel || count < 2 || worker_count() <= 1) {
        body(int64_t{0}, count);
        return;
    }
    parallel_ranges_on_pool(count, min_parallel, body);
}
// Sets worker_count() (1 .. 256, else INVALID_ARGUMENT), adding pool threads as needed, and
// tells the BLAS the same; returns it.
int set_worker_count(int threads);
// The BLAS's own threads (OpenBLAS), when it has a setting for them.
void blas_threads(int threads);

KAEL_DECLARE_PLUGIN_ENTRIES();

// Op LOGSUMEXP of reduce and reduce_dims (log_sum_exp.cpp), the call checked, f32 or f64,
// size > 0 and outer * inner > 0.
void log_sum_exp(kael_dtype dtype, void* results, const void* data, std::int64_t outer,
                 std::int64_t size, std::int64_t inner);

// Few (<= 8) f32/f64 rows long enough for sequence.cpp's blocked chains; cumprod of those rows
// in their dtype, accumulated in double (cumsum's slot takes its own).
bool long_floating_rows(kael_dtype dtype, int64_t length, int64_t rows);
void cumprod_long_rows(kael_dtype dtype, void* out, const void* data, int64_t length,
                       int64_t rows);

// The scan slot (scan.cpp).
KAEL_DECLARE_ENTRY(scan);

// collectives_gloo.cpp: the collectives extension on gloo; nullptr in a build without gloo.
const kael_collectives* collectives();
// convolution_loader.cpp: oneDNN's convolutions from kael_cpu_onednn.so beside the plugin;
// nullptr where that library (or libdnnl) is missing.
const kael_convolution* convolution();
const kael_pooling* pooling();  // its pooling, from the same library
// Where convolutions and pooling run, for kael-info's build details.
std::string convolution_description();

}  // namespace kael::cpu
