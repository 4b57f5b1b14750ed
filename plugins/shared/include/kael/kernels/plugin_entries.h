#pragma once
// The memory and kernel entries every kael device plugin defines in its own namespace, declared
// and wired into the table here once from their names: each one's type is plugin_slots.h's
// kael_<slot>_fn, so no signature is written twice and the plugins cannot drift from the ABI.
#include "kael/plugin_api.h"
#include "kael/plugin_kit.h"

// The table slots all three of kael's device plugins define; a plugin declares its others
// (graphs, host_threads, scan ...) with KAEL_DECLARE_ENTRY and assigns them itself.
#define KAEL_SHARED_ENTRIES(X)                                                                 \
    X(allocate) X(release) X(copy_to_device) X(copy_to_host) X(copy_within_device)             \
    X(synchronize) X(fill) X(convert) X(elementwise) X(reduce) X(matmul) X(gather)             \
    X(scatter_add) X(sort) X(cumsum) X(reduce_dims) X(topk) X(check_indices)                   \
    X(reduce_dims_finished)

// The model kernels all three define, served through the KAEL_EXTENSION_MODEL extension (the
// table's slots of these names stay NULL); cuda adds matmul_epilogue.
#define KAEL_SHARED_MODEL_KERNELS(X)                                                           \
    X(softmax) X(softmax_backward) X(layer_norm) X(layer_norm_backward) X(cross_entropy)       \
    X(cross_entropy_backward) X(matmul_bias) X(attention) X(attention_backward) X(adam)        \
    X(adam_many)

// Declares the entry for one slot: kael_status slot(...) with the slot's parameters.
#define KAEL_DECLARE_ENTRY(slot) kael_##slot##_fn slot

#define KAEL_DECLARE_ENTRY_IN_LIST_(slot) KAEL_DECLARE_ENTRY(slot);
#define KAEL_ASSIGN_ENTRY_IN_LIST_(slot) kael_target_.slot = slot;

// Declares, in the current namespace, one function per slot of both lists.
#define KAEL_DECLARE_PLUGIN_ENTRIES()                     \
    KAEL_SHARED_ENTRIES(KAEL_DECLARE_ENTRY_IN_LIST_)      \
    KAEL_SHARED_MODEL_KERNELS(KAEL_DECLARE_ENTRY_IN_LIST_) static_assert(true, "")

// Points the table's slots of KAEL_SHARED_ENTRIES at the entries declared above.
#define KAEL_ASSIGN_PLUGIN_ENTRIES(table)                  \
    do {                                                   \
        kael_plugin& kael_target_ = (table);               \
        KAEL_SHARED_ENTRIES(KAEL_ASSIGN_ENTRY_IN_LIST_)    \
    } while (false)

// Sets kernels' struct_size and points its KAEL_SHARED_MODEL_KERNELS at the entries.
#define KAEL_ASSIGN_MODEL_KERNELS(kernels)                       \
    do {                                                         \
        kael_model_kernels& kael_target_ = (kernels);            \
        kael_target_.struct_size = sizeof(kael_model_kernels);   \
        KAEL_SHARED_MODEL_KERNELS(KAEL_ASSIGN_ENTRY_IN_LIST_)    \
    } while (false)

// Defines extension(), the table's extension slot, serving the KAEL_EXTENSION_MODEL table of
// KAEL_SHARED_MODEL_KERNELS plus what `more` (a statement on `kernels`) sets.
#define KAEL_DEFINE_MODEL_EXTENSION(more)                              \
    const void* extension(const char* name) {                          \
        static const kael_model_kernels model = [] {                   \
            kael_model_kernels kernels{};                              \
            KAEL_ASSIGN_MODEL_KERNELS(kernels);                        \
            more;                                                      \
            return kernels;                                            \
        }();                                                           \
        return ::kael::plugin::model_extension(name, model);           \
    }
