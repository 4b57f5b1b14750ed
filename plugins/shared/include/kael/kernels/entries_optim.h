#pragma once
// The optimizer entries (adam and adam_many) every device plugin defines,
// declared and wired once.
#include "kael/plugin_api.h"

#define KAEL_DECLARE_OPTIM_ENTRIES()                                                            \
    kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,           \
                     const void* grad, int64_t count, const kael_adam_params* params);          \
    kael_status adam_many(int32_t device, kael_dtype dtype, int64_t count, void* const* params, \
                          void* const* m, void* const* v, const void* const* grads,             \
                          const int64_t* sizes, const kael_adam_params* const* steps)

#define KAEL_ASSIGN_OPTIM_ENTRIES(table) \
    do {                                 \
        (table).adam = adam;             \
        (table).adam_many = adam_many;   \
    } while (false)
