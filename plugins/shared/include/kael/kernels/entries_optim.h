#pragma once
// The optimizer entries (ABI 1.2) every device plugin defines, declared and wired once.
#include "kael/plugin_api.h"

#define KAEL_DECLARE_OPTIM_ENTRIES()                                                          \
    kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,         \
                     const void* grad, int64_t count, const kael_adam_params* params)

#define KAEL_ASSIGN_OPTIM_ENTRIES(table) \
    do {                                 \
        (table).adam = adam;             \
    } while (false)
