#pragma once
// The deferred index check slot: declared and wired into a plugin's table here.
#include <cstdint>

#include "kael/plugin_api.h"

#define KAEL_DECLARE_INDEX_CHECK_ENTRIES()                                                    \
    kael_status check_indices(int32_t device, const int64_t* indices, int64_t count,          \
                              int64_t low, int64_t high, int64_t axis, const char* op,        \
                              const char* what)

#define KAEL_ASSIGN_INDEX_CHECK_ENTRIES(table)   \
    do {                                         \
        (table).check_indices = check_indices;   \
    } while (false)
