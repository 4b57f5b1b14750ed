#pragma once
// The reduce_dims entry and its finished form every device plugin defines in
// its own namespace, declared and wired into the table here once, beside
// KAEL_DECLARE_PLUGIN_ENTRIES.
#include <cstdint>

#include "kael/plugin_api.h"

#define KAEL_DECLARE_REDUCE_DIMS_ENTRIES()                                                       \
    kael_status reduce_dims(int32_t device, kael_reduce_op op, kael_dtype out_dtype,             \
                            kael_dtype in_dtype, void* results, const void* data, int64_t outer,  \
                            int64_t size, int64_t inner);                                         \
    kael_status reduce_dims_finished(int32_t device, kael_reduce_op op, kael_dtype dtype,         \
                                     void* results, const void* data, int64_t outer, int64_t size, \
                                     int64_t inner, double scale, int32_t root)

#define KAEL_ASSIGN_REDUCE_DIMS_ENTRIES(table)                  \
    do {                                                        \
        (table).reduce_dims = reduce_dims;                      \
        (table).reduce_dims_finished = reduce_dims_finished;    \
    } while (false)
