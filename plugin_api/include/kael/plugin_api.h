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
#define KAEL_ABI_MINOR 9
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

/* Element types, in the order of kael::DType. kael's bool is one byte holding 0 or 1. */
typedef int32_t kael_dtype;
#define KAEL_DTYPE_F32 0
#define KAEL_DTYPE_F64 1
#define KAEL_DTYPE_I64 2
#define KAEL_DTYPE_BOOL 3
#define KAEL_DTYPE_COUNT 4

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

    /* Message of the last failed call on this thread; never NULL; owned by the plugin. */
    const char* (*last_error)(void);
    /* Plugin-wide setup without device work (e.g. resolve the driver library). Called once after
     * the ABI check. May be NULL. A failure marks the plugin "init failed" with last_error(). */
    kael_status (*init)(void);
    /* Counts devices. On 0, *reason (owned by the plugin, may stay NULL) says why, e.g.
     * "CUDA driver not found (libcuda.so.1: cannot open shared object file)". Not NULL. */
    kael_status (*probe)(int32_t* device_count, const char** reason);
    /* Fills *properties for one device; the caller sets properties->struct_size. Not NULL. */
    kael_status (*device_properties)(int32_t device, kael_device_properties* properties);
    /* Releases resources before exit; the plugin is never dlclosed. May be NULL. */
    void (*shutdown)(void);

    /* Allocates bytes (> 0) on the device; *block receives a device address aligned to at least
     * 64 bytes, owned by the caller until release(). KAEL_STATUS_OUT_OF_MEMORY when the device
     * is full (the core then frees its cached blocks and retries once). Not NULL. */
    kael_status (*allocate)(int32_t device, int64_t bytes, void** block);
    /* Frees a block from allocate(), possibly while queued work still uses it (see Memory
     * above); must not fail; NULL block is a no-op. Not NULL. */
    void (*release)(int32_t device, void* block);
    /* Copies bytes from host memory (source, owned by caller) to device memory, in order after
     * earlier work on the device; returns once source may be reused. Not NULL. */
    kael_status (*copy_to_device)(int32_t device, void* target, const void* source, int64_t bytes);
    /* Copies bytes from device memory to host memory (target, owned by caller); waits for
     * earlier work on the device. Not NULL. */
    kael_status (*copy_to_host)(int32_t device, void* target, const void* source, int64_t bytes);
    /* Copies bytes between two ranges of the same device's memory, which may overlap (as
     * memmove); queued in order. Not NULL. */
    kael_status (*copy_within_device)(int32_t device, void* target, const void* source,
                                      int64_t bytes);
    /* Waits until all queued work on the device is done. Not NULL. */
    kael_status (*synchronize)(int32_t device);

    /* Writes count copies of the value (params reals[0] or integers[0]) into target. May be NULL. */
    kael_status (*fill)(int32_t device, kael_dtype dtype, void* target, int64_t count,
                        const kael_element_params* value);
    /* operand 0 (out_dtype) = operand 1 (in_dtype) converted: float to int saturates, NaN to 0,
     * anything non-zero to bool true. May be NULL. */
    kael_status (*convert)(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                           const kael_element_layout* layout);
    /* Runs op over the layout; in_dtype is the inputs' dtype (Where: of operands 2 and 3, the
     * condition is bool; masked_fill: the mask is bool). May be NULL. */
    kael_status (*elementwise)(int32_t device, kael_element_op op, kael_dtype out_dtype,
                               kael_dtype in_dtype, const kael_element_layout* layout,
                               const kael_element_params* params);
    /* Reduces output_count contiguous rows of chunk_size elements of data into results
     * (contiguous, out_dtype). Empty rows give the identity (sum 0, prod 1); Max/Min/Arg* on
     * empty rows are rejected by the core. May be NULL. */
    kael_status (*reduce)(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                          kael_dtype in_dtype, void* results, const void* data,
                          int64_t chunk_size, int64_t output_count);
    /* out = a x b per kael_matmul_sizes, all of dtype (not bool). out never aliases a or b.
     * May be NULL. */
    kael_status (*matmul)(int32_t device, kael_dtype dtype, const void* a, const void* b,
                          void* out, const kael_matmul_sizes* sizes);
    /* out[c] = data[c with axis -> indices[c]] for every c of the layout. May be NULL. */
    kael_status (*gather)(int32_t device, kael_dtype dtype, void* out, const void* data,
                          const int64_t* indices, const kael_index_layout* layout);
    /* data[c with axis -> indices[c]] += source[c], repeated indices accumulate (bool: or).
     * May be NULL. */
    kael_status (*scatter_add)(int32_t device, kael_dtype dtype, void* data,
                               const int64_t* indices, const void* source,
                               const kael_index_layout* layout);

    /* Since ABI 1.1. */
    /* Sorts row_count contiguous rows of chunk_size elements of data (dtype) into values (dtype,
     * contiguous) and indices (int64 positions within the row); stable, ascending or descending
     * (descending != 0); NaN sorts as the largest value. Outputs never alias data. May be NULL. */
    kael_status (*sort)(int32_t device, kael_dtype dtype, void* values, int64_t* indices,
                        const void* data, int64_t chunk_size, int64_t row_count,
                        int32_t descending);
    /* Inclusive prefix sums of row_count contiguous rows of chunk_size elements of data into out
     * (contiguous). Floats accumulate in double and store out_dtype == in_dtype; i64 and bool
     * write int64 (out_dtype i64), wrapping on overflow. out never aliases data. May be NULL. */
    kael_status (*cumsum)(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                          const void* data, int64_t chunk_size, int64_t row_count);

    /* Since ABI 1.2: fused kernels for the model path. Float dtypes (f32, f64) unless said;
     * an unsupported dtype is KAEL_STATUS_UNSUPPORTED. "outer x size x inner" names a contiguous
     * buffer whose element (o, i, j) sits at (o * size + i) * inner + j; the op runs along i.
     * Outputs never alias inputs. Sizes may be 0 (nothing to do). Each may be NULL. */
    /* out = softmax(data) along i, or log_softmax when log != 0; rows with every element -inf
     * give NaN as PyTorch does. Accumulates in at least f32 with the row maximum subtracted. */
    kael_status (*softmax)(int32_t device, kael_dtype dtype, void* out, const void* data,
                           int64_t outer, int64_t size, int64_t inner, int32_t log);
    /* grad_in from grad_out and the forward's out: softmax: out * (grad_out - sum(grad_out *
     * out)); log_softmax: grad_out - exp(out) * sum(grad_out), sums along i. */
    kael_status (*softmax_backward)(int32_t device, kael_dtype dtype, void* grad_in,
                                    const void* grad_out, const void* out, int64_t outer,
                                    int64_t size, int64_t inner, int32_t log);
    /* Normalizes each of rows contiguous rows of columns elements: out = (x - mean) * rstd *
     * weight + bias, rstd = 1 / sqrt(biased variance + eps); writes mean and rstd (rows
     * elements, dtype) for the backward. weight and bias (columns elements) may each be NULL. */
    kael_status (*layer_norm)(int32_t device, kael_dtype dtype, void* out, void* mean, void* rstd,
                              const void* x, const void* weight, const void* bias, int64_t rows,
                              int64_t columns, double eps);
    /* Gradients of layer_norm: grad_x (rows x columns), grad_weight and grad_bias (columns,
     * overwritten, not accumulated); any of the three may be NULL when not wanted. weight may be
     * NULL (taken as ones). mean and rstd are the forward's. */
    kael_status (*layer_norm_backward)(int32_t device, kael_dtype dtype, void* grad_x,
                                       void* grad_weight, void* grad_bias, const void* grad_out,
                                       const void* x, const void* mean, const void* rstd,
                                       const void* weight, int64_t rows, int64_t columns);
    /* For each of rows rows of classes logits: lse[r] = log(sum(exp(logits[r]))) and
     * losses[r] = lse[r] - logits[r][targets[r]], in one pass. Targets are int64 in
     * [0, classes), checked by the core (see check_indices). */
    kael_status (*cross_entropy)(int32_t device, kael_dtype dtype, void* losses, void* lse,
                                 const void* logits, const int64_t* targets, int64_t rows,
                                 int64_t classes);
    /* grad_logits[r][c] = grad_losses[r * grad_stride] * (exp(logits[r][c] - lse[r]) -
     * (c == targets[r])): no one-hot tensor. grad_stride is 1, or 0 for one shared value. */
    kael_status (*cross_entropy_backward)(int32_t device, kael_dtype dtype, void* grad_logits,
                                          const void* grad_losses, int64_t grad_stride,
                                          const void* logits, const void* lse,
                                          const int64_t* targets, int64_t rows, int64_t classes);
    /* results[o * inner + j] = op over i of data (outer x size x inner), with reduce()'s dtype
     * rules and identities; reduce() is the case inner == 1. Any dtype. */
    kael_status (*reduce_dims)(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                               kael_dtype in_dtype, void* results, const void* data,
                               int64_t outer, int64_t size, int64_t inner);
    /* The k largest (largest != 0) or smallest elements of each of row_count contiguous rows of
     * chunk_size elements, in sort order as sort() orders them (NaN largest, ties by position),
     * into values (dtype) and indices (int64 positions), rows of k. 0 <= k <= chunk_size.
     * Numeric dtypes and bool. */
    kael_status (*topk)(int32_t device, kael_dtype dtype, void* values, int64_t* indices,
                        const void* data, int64_t chunk_size, int64_t row_count, int64_t k,
                        int32_t largest);
    /* matmul() plus bias: out[b][r][c] = (a x b)[b][r][c] + bias[c] (columns elements, dtype),
     * in one call (a GEMM epilogue or beta = 1 over the broadcast bias). */
    kael_status (*matmul_bias)(int32_t device, kael_dtype dtype, const void* a, const void* b,
                               const void* bias, void* out, const kael_matmul_sizes* sizes);
    /* out = softmax(q k^T * scale, causal mask) v per (batch, head), never forming the scores
     * in memory; lse (batch x heads x queries, contiguous) receives each query's log-sum-exp of
     * its scaled scores for the backward. */
    kael_status (*attention)(int32_t device, kael_dtype dtype, void* out, void* lse,
                             const void* q, const void* k, const void* v,
                             const kael_attention_layout* layout);
    /* Gradients of attention from the forward's out and lse: grad_q, grad_k, grad_v (laid out
     * as q, k, v; overwritten). */
    kael_status (*attention_backward)(int32_t device, kael_dtype dtype, void* grad_q,
                                      void* grad_k, void* grad_v, const void* grad_out,
                                      const void* q, const void* k, const void* v,
                                      const void* out, const void* lse,
                                      const kael_attention_layout* layout);
    /* Checks that each of count int64 indices lies in [low, high). May return before the check
     * has run: then a violation is returned as KAEL_STATUS_INDEX_ERROR by the device's next
     * synchronize() or copy_to_host(), once, with last_error() "<op>: <what> V is out of bounds
     * for dimension <axis> with size <high>"; a plugin that checks at once returns it here.
     * op and what are copied. This is how index ops avoid a host sync per call. */
    kael_status (*check_indices)(int32_t device, const int64_t* indices, int64_t count,
                                 int64_t low, int64_t high, int64_t axis, const char* op,
                                 const char* what);
    /* One Adam step over count contiguous elements of dtype (f32, f64), in place on param, m and
     * v: m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2; param -= lr * (m /
     * first_correction) / (sqrt(v / second_correction) + eps), g the grad after weight decay. */
    kael_status (*adam)(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                        const void* grad, int64_t count, const kael_adam_params* params);

    /* Since ABI 1.3: device graphs (CUDA graphs on the cuda plugin), so a fixed sequence of
     * small kernels, such as a decoding step, costs one launch instead of one per kernel. All
     * four are NULL, or none is. Between capture_begin and capture_end, work the calling
     * thread queues on the device is recorded, not run: the kernels' arguments, addresses
     * included, are fixed in the recording. Meanwhile the calls that copy host memory or wait
     * for the device (copy_to_device, copy_to_host, synchronize) fail with
     * KAEL_STATUS_UNSUPPORTED, and blocks that release() is given stay allocated until
     * graph_release, since replays still use them. Other threads are not recorded. */
    kael_status (*capture_begin)(int32_t device);
    /* Ends this thread's recording on device; *graph receives it, owned by the caller until
     * graph_release. When a call inside the recording failed, returns an error, *graph is
     * NULL, and the device is usable as before. */
    kael_status (*capture_end)(int32_t device, void** graph);
    /* Queues every recorded call again, in order after the work queued before it. */
    kael_status (*graph_launch)(int32_t device, void* graph);
    /* Frees a graph (after any queued replay); NULL is a no-op; must not fail. */
    void (*graph_release)(int32_t device, void* graph);

    /* Since ABI 1.3. matmul_bias() with its epilogue in the same pass: out = act(a x b + bias)
     * + residual, act per activation (KAEL_ACTIVATION_*), bias (columns elements) and residual
     * (out's size, contiguous) each may be NULL. A linear layer with its activation, or with
     * the residual add after it, in inference (decoding) costs one kernel. May be NULL. */
    kael_status (*matmul_epilogue)(int32_t device, kael_dtype dtype, const void* a, const void* b,
                                   const void* bias, const void* residual, void* out,
                                   const kael_matmul_sizes* sizes, int32_t activation);
    /* Since ABI 1.3. The host threads the plugin's kernels may use (its pool and its BLAS):
     * requested >= 1 sets the count, 0 leaves it; *current (not NULL) receives the count in
     * force. Calls in flight on other threads finish with the count they started with. NULL
     * for a plugin that runs no host threads of its own. */
    kael_status (*host_threads)(int32_t requested, int32_t* current);

    /* Since ABI 1.4. adam() over count tensors in one call: tensor i is sizes[i] contiguous
     * elements of dtype at params[i], m[i], v[i] and grads[i], stepped per *steps[i]; the
     * result is each tensor's adam(). The arrays are the caller's, read during the call. A
     * plugin may fuse the tensors into few launches, so a model's many small parameters cost
     * one kernel instead of one each. May be NULL: the core calls adam() per tensor. */
    kael_status (*adam_many)(int32_t device, kael_dtype dtype, int64_t count, void* const* params,
                             void* const* m, void* const* v, const void* const* grads,
                             const int64_t* sizes, const kael_adam_params* const* steps);

    /* Since ABI 1.5: what allocate()'s memory is, so the core needs no code per device type.
     * A table whose struct_size ends before these is read as: host-addressable and DLPack
     * kDLCPU when kind is KAEL_PLUGIN_KIND_CPU, else neither. */
    uint32_t memory_flags;      /* KAEL_MEMORY_* bits */
    int32_t dlpack_device_type; /* DLPack's DLDeviceType of the memory (1 kDLCPU, 2 kDLCUDA, 10
                                 * kDLROCM ...) for zero-copy exchange; 0: no DLPack exchange */

    /* Since ABI 1.7. Inclusive scans along i of outer x size x inner (contiguous data and out;
     * out never aliases data): op KAEL_REDUCE_SUM is cumsum, KAEL_REDUCE_PROD cumprod, others
     * are KAEL_STATUS_UNSUPPORTED. cumsum()'s dtype rules: floats accumulate in double and
     * write in_dtype, i64 and bool write i64, wrapping. Any dim scans in place of its layout,
     * with no transposed copies. May be NULL: the core then moves the dim last for cumsum() and
     * composes cumprod from elementwise products. */
    kael_status (*scan)(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, void* out, const void* data, int64_t outer,
                        int64_t size, int64_t inner);

    /* Since ABI 1.8. max(dim)/min(dim) in one pass: along i of outer x size x inner (contiguous
     * data, size > 0), values[o * inner + j] (dtype) is the largest (op KAEL_REDUCE_ARGMAX) or
     * smallest (KAEL_REDUCE_ARGMIN) element and indices[o * inner + j] its index i, the first
     * one on ties and the first NaN if any, exactly as the max/min and argmax/argmin reduce ops
     * give them. Other ops are KAEL_STATUS_UNSUPPORTED. May be NULL: the core then runs those
     * two reductions. */
    kael_status (*reduce_indexed)(int32_t device, kael_reduce_op op, kael_dtype dtype,
                                  void* values, int64_t* indices, const void* data,
                                  int64_t outer, int64_t size, int64_t inner);

    /* Since ABI 1.9. reduce_dims() with its results finished in the same pass, so mean, var and
     * std are one launch: each result r, taken as a double before it is rounded, is stored as
     * r * scale, or sqrt(r * scale) when root != 0, in dtype (the input's, f32 or f64). Ops SUM
     * (mean: scale 1 / n), VARIANCE (var: n / (n - correction); std: root), NORM2 and LOGSUMEXP;
     * others are KAEL_STATUS_UNSUPPORTED. An empty row finishes its identity (mean: 0 * inf is
     * NaN, as the caller's scale is). May be NULL: the core then runs reduce_dims() and finishes
     * the results with elementwise ops. */
    kael_status (*reduce_dims_finished)(int32_t device, kael_reduce_op op, kael_dtype dtype,
                                        void* results, const void* data, int64_t outer,
                                        int64_t size, int64_t inner, double scale, int32_t root);
} kael_plugin;

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
static_assert(sizeof(kael_plugin) == 56 + 42 * 8 + 8 + 8, "plugin table size");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(kael_plugin) == 56 + 42 * 8 + 8 + 8, "plugin table size");
#endif

#endif /* KAEL_PLUGIN_API_H */
