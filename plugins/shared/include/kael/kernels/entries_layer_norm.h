#pragma once
// The layer_norm slots, declared in a plugin's namespace and wired into its table.
#include <cstdint>

#include "kael/plugin_api.h"

#define KAEL_DECLARE_LAYER_NORM_ENTRIES()                                                       \
    kael_status layer_norm(int32_t device, kael_dtype dtype, void* out, void* mean, void* rstd, \
                           const void* x, const void* weight, const void* bias, int64_t rows,   \
                           int64_t columns, double eps);                                        \
    kael_status layer_norm_backward(int32_t device, kael_dtype dtype, void* grad_x,             \
                                    void* grad_weight, void* grad_bias, const void* grad_out,   \
                                    const void* x, const void* mean, const void* rstd,          \
                                    const void* weight, int64_t rows, int64_t columns)

#define KAEL_ASSIGN_LAYER_NORM_ENTRIES(table)              \
    do {                                                   \
        (table).layer_norm = layer_norm;                   \
        (table).layer_norm_backward = layer_norm_backward; \
    } while (false)
