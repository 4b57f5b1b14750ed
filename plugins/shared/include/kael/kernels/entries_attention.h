#pragma once
// The attention family's entries (slots attention and attention_backward), declared in
// a plugin's namespace and wired into its table beside KAEL_DECLARE/ASSIGN_PLUGIN_ENTRIES.
#include <cstdint>

#include "kael/plugin_api.h"

#define KAEL_DECLARE_ATTENTION_ENTRIES()                                                         \
    kael_status attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q, \
                          const void* k, const void* v, const kael_attention_layout* layout);    \
    kael_status attention_backward(int32_t device, kael_dtype dtype, void* grad_q, void* grad_k, \
                                   void* grad_v, const void* grad_out, const void* q,            \
                                   const void* k, const void* v, const void* out,                \
                                   const void* lse, const kael_attention_layout* layout)

#define KAEL_ASSIGN_ATTENTION_ENTRIES(table)              \
    do {                                                  \
        (table).attention = attention;                    \
        (table).attention_backward = attention_backward;  \
    } while (false)
