#pragma once
// The softmax family's entries (slots softmax, softmax_backward, cross_entropy,
// cross_entropy_backward), declared and wired into a plugin's table once for every plugin.
#include <cstdint>

#include "kael/plugin_api.h"

#define KAEL_DECLARE_SOFTMAX_ENTRIES()                                                          \
    kael_status softmax(int32_t device, kael_dtype dtype, void* out, const void* data,          \
                        int64_t outer, int64_t size, int64_t inner, int32_t log);               \
    kael_status softmax_backward(int32_t device, kael_dtype dtype, void* grad_in,               \
                                 const void* grad_out, const void* out, int64_t outer,          \
                                 int64_t size, int64_t inner, int32_t log);                     \
    kael_status cross_entropy(int32_t device, kael_dtype dtype, void* losses, void* lse,        \
                              const void* logits, const int64_t* targets, int64_t rows,         \
                              int64_t classes);                                                 \
    kael_status cross_entropy_backward(int32_t device, kael_dtype dtype, void* grad_logits,     \
                                       const void* grad_losses, int64_t grad_stride,            \
                                       const void* logits, const void* lse,                     \
                                       const int64_t* targets, int64_t rows, int64_t classes)

#define KAEL_ASSIGN_SOFTMAX_ENTRIES(table)                         \
    do {                                                           \
        (table).softmax = softmax;                                 \
        (table).softmax_backward = softmax_backward;               \
        (table).cross_entropy = cross_entropy;                     \
        (table).cross_entropy_backward = cross_entropy_backward;   \
    } while (false)
