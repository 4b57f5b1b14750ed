#pragma once
// The sequence family's later entries (sort and cumsum, the first ones, are in
// plugin_entries.h): declared and wired into a plugin's table here once.
#include <cstdint>

#include "kael/plugin_api.h"

// Declares, in the current namespace, the entries of the sequence family's 1.2 slots.
#define KAEL_DECLARE_SEQUENCE_ENTRIES()                                                  \
    kael_status topk(int32_t device, kael_dtype dtype, void* values, int64_t* indices,   \
                     const void* data, int64_t chunk_size, int64_t row_count, int64_t k, \
                     int32_t largest)

// Points the table's sequence slots at the entries declared above.
#define KAEL_ASSIGN_SEQUENCE_ENTRIES(table) \
    do {                                    \
        (table).topk = topk;                \
    } while (false)
