#pragma once
// The memory and kernel entries every kael device plugin defines in its own namespace, declared
// and wired into the table here once from their names: each one's type is plugin_slots.h's
// kael_<slot>_fn, so no signature is written twice and the plugins cannot drift from the ABI.
#include "kael/plugin_api.h"

// The slots all three of kael's device plugins define; a plugin declares its others (graphs,
// host_threads, scan ...) with KAEL_DECLARE_ENTRY and assigns them itself.
#define KAEL_SHARED_ENTRIES(X)                                                                 \
    X(allocate) X(release) X(copy_to_device) X(copy_to_host) X(copy_within_device)             \
    X(synchronize) X(fill) X(convert) X(elementwise) X(reduce) X(matmul) X(gather)             \
    X(scatter_add) X(sort) X(cumsum) X(softmax) X(softmax_backward) X(layer_norm)              \
    X(layer_norm_backward) X(cross_entropy) X(cross_entropy_backward) X(reduce_dims) X(topk)   \
    X(matmul_bias) X(attention) X(attention_backward) X(check_indices) X(adam) X(adam_many)    \
    X(reduce_dims_finished)

// Declares the entry for one slot: kael_status name(...) with the slot's parameters.
#define KAEL_DECLARE_ENTRY(slot) kael_##slot##_fn slot

#define KAEL_DECLARE_ENTRY_IN_LIST_(slot) KAEL_DECLARE_ENTRY(slot);
#define KAEL_ASSIGN_ENTRY_IN_LIST_(slot) kael_table_.slot = slot;

// Declares, in the current namespace, one function per slot of KAEL_SHARED_ENTRIES.
#define KAEL_DECLARE_PLUGIN_ENTRIES() \
    KAEL_SHARED_ENTRIES(KAEL_DECLARE_ENTRY_IN_LIST_) static_assert(true, "")

// Points the table's slots of KAEL_SHARED_ENTRIES at the entries declared above.
#define KAEL_ASSIGN_PLUGIN_ENTRIES(table)                        \
    do {                                                         \
        kael_plugin& kael_table_ = (table);                      \
        KAEL_SHARED_ENTRIES(KAEL_ASSIGN_ENTRY_IN_LIST_)          \
    } while (false)
