/* kael plugin ABI: the only door between libkael_core and a device backend.
 * The guide for plugin authors, with a complete example, is docs/plugins.md; kael-dev ships
 * kael/plugin_kit.h (C++ helpers), kael_add_plugin() (CMake) and kael-conformance.
 *
 * Rules:
 *  - A plugin is a shared library named kael_plugin_<name>.so that exports exactly one symbol,
 *    KAEL_PLUGIN_ENTRY (kael_plugin_query). Everything else has hidden visibility.
 *  - ABI major must match exactly; a minor version only appends slots at the end of structs.
 *    Every struct starts with struct_size, so a reader ignores slots past the size it was given.
 *  - Nothing C++ crosses: no exceptions, no std types. Calls return a kael_status; after a failure
 *    last_error() returns the message, valid until the next call into the plugin on that thread.
 *  - Loading and querying a plugin runs no device work; probe() counts devices and explains zero.
 *  - Plugins are never unloaded; shutdown() lets them release resources at exit.
 *  - Every device call carries the device index (0 .. device_count-1) within the plugin.
 *
 * Contracts every slot keeps (docs/plugins.md explains each):
 *  - Threads: the core calls a plugin from any thread, and several at once (on one device or on
 *    several), except where a slot says otherwise; every slot must be thread-safe. Device graph
 *    capture (capture_begin .. capture_end) records the calling thread only.
 *  - Order: each device has one queue. A kernel slot, fill, convert and copy_within_device may
 *    return before their work is done, but run in the order they were called on that device, so
 *    a later call sees an earlier call's results. copy_to_device returns once the host source
 *    may be reused; copy_to_host returns once the host target holds the bytes (after all earlier
 *    work on the device); synchronize() returns once every queued call on the device is done.
 *    A plugin whose calls finish before returning keeps all of this trivially.
 *  - Memory: allocate() returns blocks aligned to at least 64 bytes. The core touches a block
 *    only through this plugin's slots, unless memory_flags has KAEL_MEMORY_HOST_ADDRESSABLE.
 *    release() may be called while queued work still reads or writes the block: the plugin
 *    keeps it valid until that work is done (stream-ordered free).
 *  - Ownership: the table, its strings and every string a slot returns are the plugin's and
 *    live for the process. Every pointer the core passes (layouts, params, host buffers, device
 *    blocks) is the caller's and valid during the call only, except that device blocks of queued
 *    work stay valid as the order rule above says; a plugin keeps no pointer to a caller's
 *    struct or host buffer after returning.
 *  - Input structs: struct_size says which fields the caller wrote. A plugin accepts any
 *    struct_size from the struct's first released size up (an older core sends a smaller struct;
 *    fields past it take the defaults the field's comment gives), never requires its own
 *    sizeof, and reads nothing past struct_size. For the struct a plugin fills
 *    (kael_device_properties) it writes only the fields that fit in the caller's struct_size.
 *  - Kinds: kind (KAEL_PLUGIN_KIND_*) is shown to users and never ranks; priority ranks plugins
 *    of one device type; memory_flags and dlpack_device_type say what the memory is.
 *  - KAEL_STATUS_UNSUPPORTED from any kernel slot, before it has written anything, makes the
 *    core run that one call on the cpu plugin through copies (counted as a missing slot is):
 *    a plugin implements what it can and declines the rest per call.
 * This header compiles as C99 and as C++. */
#ifndef KAEL_PLUGIN_API_H
#define KAEL_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#define KAEL_ABI_MAJOR 1
#define KAEL_ABI_MINOR 20
#define KAEL_PLUGIN_ENTRY kael_plugin_query
#define KAEL_PLUGIN_ENTRY_NAME "kael_plugin_query"
#define KAEL_PLUGIN_FILE_PREFIX "kael_plugin_"

#define KAEL_MAX_DIMS 8     /* iteration dimensions after coalescing */
#define KAEL_MAX_OPERANDS 4 /* one output plus up to three inputs (enough for where) */

#if defined(_WIN32)
#define KAEL_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KAEL_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes; fixed-width so the ABI does not depend on enum sizes. */
typedef int32_t kael_status;
#define KAEL_STATUS_OK 0
#define KAEL_STATUS_INVALID_ARGUMENT 1 /* bad dtype/op/layout from the caller */
#define KAEL_STATUS_UNSUPPORTED 2      /* the plugin has the slot but not this dtype/op */
#define KAEL_STATUS_OUT_OF_MEMORY 3    /* allocation failed on the device */
#define KAEL_STATUS_DEVICE_ERROR 4     /* the device runtime reported an error */
#define KAEL_STATUS_INTERNAL 5         /* anything else, including a caught C++ exception */
#define KAEL_STATUS_INDEX_ERROR 6      /* since 1.2: an index out of range (check_indices) */

/* Element types, in the order of kael::DType. kael's bool is one byte holding 0 or 1.
 * Since 1.11: bfloat16 and IEEE binary16, two bytes each, passed only to the fill and convert
 * slots of a plugin whose dtype_flags has KAEL_DTYPE_FLAG_LOW_PRECISION (which may still decline
 * a call: the cpu plugin then runs it), and since 1.12 to the matmul and elementwise slots of one
 * that also has KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL / _ELEMENTWISE / _REDUCE. Every other call with them the core runs in float32 on
 * the same device, over float32 copies that convert makes, and rounds the results back. */
typedef int32_t kael_dtype;
#define KAEL_DTYPE_F32 0
#define KAEL_DTYPE_F64 1
#define KAEL_DTYPE_I64 2
#define KAEL_DTYPE_BOOL 3
#define KAEL_DTYPE_BF16 4 /* since 1.11 */
#define KAEL_DTYPE_F16 5  /* since 1.11 */
/* Since 1.14: the narrow integers, two's complement (uint8 unsigned), passed only to the fill and
 * convert slots of a plugin whose dtype_flags has KAEL_DTYPE_FLAG_NARROW_INT. Every other call
 * with them the core runs in int64 over int64 copies and narrows the results back (wrapping, as
 * PyTorch's integer arithmetic does). */
#define KAEL_DTYPE_I32 6
#define KAEL_DTYPE_I16 7
#define KAEL_DTYPE_I8 8
#define KAEL_DTYPE_U8 9
#define KAEL_DTYPE_COUNT 10

/* What a plugin is, shown by kael-info; it does not rank plugins (priority does) and, since
 * ABI 1.5, says nothing about memory (memory_flags does; before, KIND_CPU meant host memory). */
typedef int32_t kael_plugin_kind;
#define KAEL_PLUGIN_KIND_CPU 0      /* the host's processor */
#define KAEL_PLUGIN_KIND_GPU 1      /* an accelerator */
#define KAEL_PLUGIN_KIND_EMULATED 2 /* device semantics emulated on the host, for tests */

/* The element and reduce ops, one X-macro table each, with their enums. */
#include "kael/plugin_ops.h"

/* The input and output structs the slots take, with their released sizes. */
#include "kael/plugin_structs.h"

/* The function slots' types, kael_<slot>_fn, each with its contract, and KAEL_PLUGIN_SLOTS. */
#include "kael/plugin_slots.h"

/* The extensions' tables (the model kernels), returned by the extension slot. */
#include "kael/plugin_extensions.h"

/* The table a plugin returns from kael_plugin_query. Static, owned by the plugin.
 * Memory and runtime slots are required; kernel slots may be NULL, in which case the core runs
 * that work on the cpu plugin through copies and counts it (kael::fallback_counts), as it does
 * for a call a slot declines with KAEL_STATUS_UNSUPPORTED. */
typedef struct kael_plugin {
    size_t struct_size; /* sizeof(kael_plugin) as the plugin was built; later slots absent */
    uint32_t abi_major; /* KAEL_ABI_MAJOR the plugin was built with; must equal the core's */
    uint32_t abi_minor; /* KAEL_ABI_MINOR the plugin was built with; any value works */

    const char* name;        /* "cpu", "cuda", "emulated"; matches the file name; not NULL */
    const char* version;     /* plugin version, "0.1.0"; not NULL */
    kael_plugin_kind kind;   /* KAEL_PLUGIN_KIND_* */
    int32_t priority; /* among plugins serving one device type, the highest with devices wins,
                       * unless KAEL_DEVICE_PLUGIN or kael::set_device_plugin chooses another */
    const char* device_type; /* the Device type it serves ("cpu", "cuda", "toy"): lowercase
                              * letters, digits and '_', starting with a letter, at most 32
                              * characters; any name, the core keeps no list. Not NULL */
    const char* build_info;  /* "compiler=GCC 12.2; cuda=13.0"; not NULL, may be "" */

    /* Runtime (plugin_slots.h documents each slot). */
    kael_last_error_fn* last_error;
    kael_init_fn* init;
    kael_probe_fn* probe;
    kael_device_properties_fn* device_properties;
    kael_shutdown_fn* shutdown;

    /* Memory. */
    kael_allocate_fn* allocate;
    kael_release_fn* release;
    kael_copy_to_device_fn* copy_to_device;
    kael_copy_to_host_fn* copy_to_host;
    kael_copy_within_device_fn* copy_within_device;
    kael_synchronize_fn* synchronize;

    /* Kernels. */
    kael_fill_fn* fill;
    kael_convert_fn* convert;
    kael_elementwise_fn* elementwise;
    kael_reduce_fn* reduce;
    kael_matmul_fn* matmul;
    kael_gather_fn* gather;
    kael_scatter_add_fn* scatter_add;

    /* Since ABI 1.1. */
    kael_sort_fn* sort;
    kael_cumsum_fn* cumsum;

    /* Since ABI 1.2: fused kernels for the model path. */
    kael_softmax_fn* softmax;
    kael_softmax_backward_fn* softmax_backward;
    kael_layer_norm_fn* layer_norm;
    kael_layer_norm_backward_fn* layer_norm_backward;
    kael_cross_entropy_fn* cross_entropy;
    kael_cross_entropy_backward_fn* cross_entropy_backward;
    kael_reduce_dims_fn* reduce_dims;
    kael_topk_fn* topk;
    kael_matmul_bias_fn* matmul_bias;
    kael_attention_fn* attention;
    kael_attention_backward_fn* attention_backward;
    kael_check_indices_fn* check_indices;
    kael_adam_fn* adam;

    /* Since ABI 1.3: device graphs, the fused linear layer, host threads. */
    kael_capture_begin_fn* capture_begin;
    kael_capture_end_fn* capture_end;
    kael_graph_launch_fn* graph_launch;
    kael_graph_release_fn* graph_release;
    kael_matmul_epilogue_fn* matmul_epilogue;
    kael_host_threads_fn* host_threads;

    /* Since ABI 1.4. */
    kael_adam_many_fn* adam_many;

    /* Since ABI 1.5: what allocate()'s memory is, so the core needs no code per device type.
     * A table whose struct_size ends before these is read as: host-addressable and DLPack
     * kDLCPU when kind is KAEL_PLUGIN_KIND_CPU, else neither. */
    uint32_t memory_flags;      /* KAEL_MEMORY_* bits */
    int32_t dlpack_device_type; /* DLPack's DLDeviceType of the memory (1 kDLCPU, 2 kDLCUDA, 10
                                 * kDLROCM ...) for zero-copy exchange; 0: no DLPack exchange */

    /* Since ABI 1.7. */
    kael_scan_fn* scan;

    /* Since ABI 1.8. */
    kael_reduce_indexed_fn* reduce_indexed;

    /* Since ABI 1.9. */
    kael_reduce_dims_finished_fn* reduce_dims_finished;

    /* Since ABI 1.10: extensions, the model kernels among them (plugin_extensions.h). */
    kael_extension_fn* extension;

    /* Since ABI 1.11: the dtypes past f32, f64, i64 and bool that the plugin takes; 0 (and any
     * older table) takes none of them, whatever headers it was rebuilt against. */
    uint32_t dtype_flags; /* KAEL_DTYPE_FLAG_* bits */
    uint32_t reserved;    /* 0 */
} kael_plugin;

/* dtype_flags bits. Low precision: fill and convert take KAEL_DTYPE_BF16 and KAEL_DTYPE_F16.
 * Since 1.12, low-precision matmul: so do matmul, matmul_bias and matmul_epilogue (every
 * operand of that dtype, products accumulated in f32 and rounded once); low-precision
 * elementwise: so does elementwise (in_dtype bf16 or f16, computed in f32, rounded once);
 * low-precision reduce: so do reduce, reduce_dims and reduce_dims_finished (in_dtype bf16 or
 * f16, accumulated in f32 or wider, results in the op's out dtype: argmax and argmin int64,
 * reduce_dims_finished the input's, the others the input's or f32 for a first pass whose
 * partial results the core keeps wide). Since 1.13,
 * low-precision attention: attention and attention_backward take bf16/f16 q, k, v, out and
 * gradients, with lse in f32 (scores, softmax and sums in f32; products may round their
 * operands to the dtype, as FlashAttention's P V does); low-precision rows: layer_norm and
 * layer_norm_backward take bf16/f16 data, with mean and rstd in f32, and cross_entropy and
 * cross_entropy_backward bf16/f16 logits and grad_logits, with losses, lse and grad_losses in
 * f32; low-precision index: gather and scatter_add take bf16/f16 data (scatter_add may add in
 * the dtype, rounding each add, as PyTorch's CUDA atomics do). Each may decline a call (an op
 * it does not compute in them): the core then runs it in f32. */
#define KAEL_DTYPE_FLAG_LOW_PRECISION 1u
#define KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL 2u
#define KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE 4u
#define KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE 8u
#define KAEL_DTYPE_FLAG_LOW_PRECISION_ATTENTION 16u /* since 1.13 */
#define KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS 32u      /* since 1.13 */
#define KAEL_DTYPE_FLAG_LOW_PRECISION_INDEX 64u     /* since 1.13 */
/* Since 1.14: fill and convert take KAEL_DTYPE_I32, _I16, _I8 and _U8. Convert pairs one of them
 * with itself or with f32, f64, i64 or bool (the core routes other pairs through i64 or f32);
 * values out of range wrap, from floats through int64 (NaN gives 0). */
#define KAEL_DTYPE_FLAG_NARROW_INT 128u
/* Since 1.19, low-precision max/min with indices: reduce_indexed takes bf16/f16 data and writes
 * its values in that dtype; low-precision scans: scan takes bf16/f16 data, accumulates in f32
 * or wider and writes out in that dtype (in_dtype == out_dtype). Either may decline a call. */
#define KAEL_DTYPE_FLAG_LOW_PRECISION_INDEXED 256u
#define KAEL_DTYPE_FLAG_LOW_PRECISION_SCAN 512u
/* Since 1.20, low-precision last passes: reduce and reduce_dims take in_dtype f32 with out_dtype
 * bf16 or f16 for SUM, PROD, NORM2 and LOGSUMEXP, the last pass of a bf16/f16 reduction over the
 * f32 partial results of its first (folded as any f32 call, each result rounded once to nearest
 * even, NaN kept), so the result needs no convert of its own. May decline a call (the core then
 * writes f32 results and converts them). */
#define KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS 1024u

/* memory_flags bits. Host-addressable: the core may read and write blocks with plain loads and
 * stores once the device's queued work is done (after synchronize()), and passes such blocks as
 * the host side of another plugin's copies. Blocks of a plugin without it are only touched
 * through this plugin's own slots. */
#define KAEL_MEMORY_HOST_ADDRESSABLE 1u

/* The one exported symbol. The core passes its own ABI version; the plugin returns its static
 * table (even when the majors differ, so the core can report both), or NULL if it cannot serve. */
typedef const kael_plugin* (*kael_plugin_query_fn)(uint32_t core_abi_major,
                                                   uint32_t core_abi_minor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus)
static_assert(sizeof(kael_plugin) == 56 + 42 * 8 + 8 + 8 + 8 + 8, "plugin table size");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(kael_plugin) == 56 + 42 * 8 + 8 + 8 + 8 + 8, "plugin table size");
#endif

#endif /* KAEL_PLUGIN_API_H */
