#pragma once
// matmul with a bias added to every row: declared and wired into a plugin's table here.
#include <cstdint>

#include "kael/plugin_api.h"

#define KAEL_DECLARE_MATMUL_BIAS_ENTRIES()                                                    \
    kael_status matmul_bias(int32_t device, kael_dtype dtype, const void* a, const void* b,   \
                            const void* bias, void* out, const kael_matmul_sizes* sizes)

#define KAEL_ASSIGN_MATMUL_BIAS_ENTRIES(table) \
    do {                                       \
        (table).matmul_bias = matmul_bias;     \
    } while (false)
