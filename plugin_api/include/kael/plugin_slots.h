/* kael plugin ABI, part of plugin_api.h (include that, not this): the type of every function
 * slot of kael_plugin, kael_<slot>_fn, with its contract, and KAEL_PLUGIN_SLOTS, their one
 * list in table order. A plugin declares an entry as `kael_softmax_fn softmax;`, so its
 * signature is written here only. Kernel slots arriving after 1.10 take one
 * const kael_<slot>_args* (a struct starting with struct_size), so a later parameter is an
 * appended field, not a new slot; model kernels arrive in an extension (plugin_extensions.h). This header compiles as C99 and as C++. */
#ifndef KAEL_PLUGIN_SLOTS_H
#define KAEL_PLUGIN_SLOTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runtime and memory slots: required (not NULL) unless said. */

/* Message of the last failed call on this thread; never NULL; owned by the plugin. */
typedef const char* kael_last_error_fn(void);

/* Plugin-wide setup without device work (e.g. resolve the driver library). Called once after
 * the ABI check. May be NULL. A failure marks the plugin "init failed" with last_error(). */
typedef kael_status kael_init_fn(void);

/* Counts devices. On 0, *reason (owned by the plugin, may stay NULL) says why, e.g.
 * "CUDA driver not found (libcuda.so.1: cannot open shared object file)". Not NULL. */
typedef kael_status kael_probe_fn(int32_t* device_count, const char** reason);

/* Fills *properties for one device; the caller sets properties->struct_size. Not NULL. */
typedef kael_status kael_device_properties_fn(int32_t device, kael_device_properties* properties);

/* Releases resources before exit; the plugin is never dlclosed. May be NULL. */
typedef void kael_shutdown_fn(void);

/* Allocates bytes (> 0) on the device; *block receives a device address aligned to at least
 * 64 bytes, owned by the caller until release(). KAEL_STATUS_OUT_OF_MEMORY when the device
 * is full (the core then frees its cached blocks and retries once). Not NULL. */
typedef kael_status kael_allocate_fn(int32_t device, int64_t bytes, void** block);

/* Frees a block from allocate(), possibly while queued work still uses it (see Memory
 * above); must not fail; NULL block is a no-op. Not NULL. */
typedef void kael_release_fn(int32_t device, void* block);

/* Copies bytes from host memory (source, owned by caller) to device memory, in order after
 * earlier work on the device; returns once source may be reused. Not NULL. */
typedef kael_status kael_copy_to_device_fn(int32_t device, void* target, const void* source,
                                           int64_t bytes);

/* Copies bytes from device memory to host memory (target, owned by caller); waits for
 * earlier work on the device. Not NULL. */
typedef kael_status kael_copy_to_host_fn(int32_t device, void* target, const void* source,
                                         int64_t bytes);

/* Copies bytes between two ranges of the same device's memory, which may overlap (as
 * memmove); queued in order. Not NULL. */
typedef kael_status kael_copy_within_device_fn(int32_t device, void* target, const void* source,
                                               int64_t bytes);

/* Waits until all queued work on the device is done. Not NULL. */
typedef kael_status kael_synchronize_fn(int32_t device);

/* Kernel slots: each may be NULL; the core then runs that work on the cpu plugin through
 * copies and counts it (kael::fallback_counts), as it does for a call a slot declines with
 * KAEL_STATUS_UNSUPPORTED. */

/* Writes count copies of the value (params reals[0] or integers[0]) into target. May be NULL. */
typedef kael_status kael_fill_fn(int32_t device, kael_dtype dtype, void* target, int64_t count,
                                 const kael_element_params* value);

/* operand 0 (out_dtype) = operand 1 (in_dtype) converted: float to int saturates, NaN to 0,
 * anything non-zero to bool true. May be NULL. */
typedef kael_status kael_convert_fn(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                                    const kael_element_layout* layout);

/* Runs op over the layout; in_dtype is the inputs' dtype (Where: of operands 2 and 3, the
 * condition is bool; masked_fill: the mask is bool). May be NULL. */
typedef kael_status kael_elementwise_fn(int32_t device, kael_element_op op, kael_dtype out_dtype,
                                        kael_dtype in_dtype, const kael_element_layout* layout,
                                        const kael_element_params* params);

/* Reduces output_count contiguous rows of chunk_size elements of data into results
 * (contiguous, out_dtype). Empty rows give the identity (sum 0, prod 1); Max/Min/Arg* on
 * empty rows are rejected by the core. May be NULL. */
typedef kael_status kael_reduce_fn(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                                   kael_dtype in_dtype, void* results, const void* data,
                                   int64_t chunk_size, int64_t output_count);

/* out = a x b per kael_matmul_sizes, all of dtype (not bool). out never aliases a or b.
 * May be NULL. */
typedef kael_status kael_matmul_fn(int32_t device, kael_dtype dtype, const void* a, const void* b,
                                   void* out, const kael_matmul_sizes* sizes);

/* out[c] = data[c with axis -> indices[c]] for every c of the layout. May be NULL. */
typedef kael_status kael_gather_fn(int32_t device, kael_dtype dtype, void* out, const void* data,
                                   const int64_t* indices, const kael_index_layout* layout);

/* data[c with axis -> indices[c]] += source[c], repeated indices accumulate (bool: or).
 * May be NULL. */
typedef kael_status kael_scatter_add_fn(int32_t device, kael_dtype dtype, void* data,
                                        const int64_t* indices, const void* source,
                                        const kael_index_layout* layout);

/* Since ABI 1.1. Sorts row_count contiguous rows of chunk_size elements of data (dtype) into
 * values (dtype, contiguous) and indices (int64 positions within the row); stable, ascending or
 * descending (descending != 0); NaN sorts as the largest value. Outputs never alias data. May
 * be NULL. */
typedef kael_status kael_sort_fn(int32_t device, kael_dtype dtype, void* values, int64_t* indices,
                                 const void* data, int64_t chunk_size, int64_t row_count,
                                 int32_t descending);

/* Inclusive prefix sums of row_count contiguous rows of chunk_size elements of data into out
 * (contiguous). Floats accumulate in double and store out_dtype == in_dtype; i64 and bool
 * write int64 (out_dtype i64), wrapping on overflow. out never aliases data. May be NULL. */
typedef kael_status kael_cumsum_fn(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                                   void* out, const void* data, int64_t chunk_size,
                                   int64_t row_count);

/* Since ABI 1.2: fused kernels for the model path. Float dtypes (f32, f64) unless said;
 * an unsupported dtype is KAEL_STATUS_UNSUPPORTED. "outer x size x inner" names a contiguous
 * buffer whose element (o, i, j) sits at (o * size + i) * inner + j; the op runs along i.
 * Outputs never alias inputs. Sizes may be 0 (nothing to do). Each may be NULL. */

/* out = softmax(data) along i, or log_softmax when log != 0; rows with every element -inf
 * give NaN as PyTorch does. Accumulates in at least f32 with the row maximum subtracted. */
typedef kael_status kael_softmax_fn(int32_t device, kael_dtype dtype, void* out, const void* data,
                                    int64_t outer, int64_t size, int64_t inner, int32_t log);

/* grad_in from grad_out and the forward's out: softmax: out * (grad_out - sum(grad_out *
 * out)); log_softmax: grad_out - exp(out) * sum(grad_out), sums along i. */
typedef kael_status kael_softmax_backward_fn(int32_t device, kael_dtype dtype, void* grad_in,
                                             const void* grad_out, const void* out, int64_t outer,
                                             int64_t size, int64_t inner, int32_t log);

/* Normalizes each of rows contiguous rows of columns elements: out = (x - mean) * rstd *
 * weight + bias, rstd = 1 / sqrt(biased variance + eps); writes mean and rstd (rows
 * elements, dtype) for the backward. weight and bias (columns elements) may each be NULL. */
typedef kael_status kael_layer_norm_fn(int32_t device, kael_dtype dtype, void* out, void* mean,
                                       void* rstd, const void* x, const void* weight,
                                       const void* bias, int64_t rows, int64_t columns, double eps);

/* Gradients of layer_norm: grad_x (rows x columns), grad_weight and grad_bias (columns,
 * overwritten, not accumulated); any of the three may be NULL when not wanted. weight may be
 * NULL (taken as ones). mean and rstd are the forward's. */
typedef kael_status kael_layer_norm_backward_fn(int32_t device, kael_dtype dtype, void* grad_x,
                                                void* grad_weight, void* grad_bias,
                                                const void* grad_out, const void* x,
                                                const void* mean, const void* rstd,
                                                const void* weight, int64_t rows, int64_t columns);

/* For each of rows rows of classes logits: lse[r] = log(sum(exp(logits[r]))) and
 * losses[r] = lse[r] - logits[r][targets[r]], in one pass. Targets are int64 in
 * [0, classes), checked by the core (see check_indices). */
typedef kael_status kael_cross_entropy_fn(int32_t device, kael_dtype dtype, void* losses, void* lse,
                                          const void* logits, const int64_t* targets, int64_t rows,
                                          int64_t classes);

/* grad_logits[r][c] = grad_losses[r * grad_stride] * (exp(logits[r][c] - lse[r]) -
 * (c == targets[r])): no one-hot tensor. grad_stride is 1, or 0 for one shared value. */
typedef kael_status kael_cross_entropy_backward_fn(int32_t device, kael_dtype dtype,
                                                   void* grad_logits, const void* grad_losses,
                                                   int64_t grad_stride, const void* logits,
                                                   const void* lse, const int64_t* targets,
                                                   int64_t rows, int64_t classes);

/* results[o * inner + j] = op over i of data (outer x size x inner), with reduce()'s dtype
 * rules and identities; reduce() is the case inner == 1. Any dtype. */
typedef kael_status kael_reduce_dims_fn(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                                        kael_dtype in_dtype, void* results, const void* data,
                                        int64_t outer, int64_t size, int64_t inner);

/* The k largest (largest != 0) or smallest elements of each of row_count contiguous rows of
 * chunk_size elements, in sort order as sort() orders them (NaN largest, ties by position),
 * into values (dtype) and indices (int64 positions), rows of k. 0 <= k <= chunk_size.
 * Numeric dtypes and bool. */
typedef kael_status kael_topk_fn(int32_t device, kael_dtype dtype, void* values, int64_t* indices,
                                 const void* data, int64_t chunk_size, int64_t row_count, int64_t k,
                                 int32_t largest);

/* matmul() plus bias: out[b][r][c] = (a x b)[b][r][c] + bias[c] (columns elements, dtype),
 * in one call (a GEMM epilogue or beta = 1 over the broadcast bias). */
typedef kael_status kael_matmul_bias_fn(int32_t device, kael_dtype dtype, const void* a,
                                        const void* b, const void* bias, void* out,
                                        const kael_matmul_sizes* sizes);

/* out = softmax(q k^T * scale, causal mask) v per (batch, head), never forming the scores
 * in memory; lse (batch x heads x queries, contiguous) receives each query's log-sum-exp of
 * its scaled scores for the backward. */
typedef kael_status kael_attention_fn(int32_t device, kael_dtype dtype, void* out, void* lse,
                                      const void* q, const void* k, const void* v,
                                      const kael_attention_layout* layout);

/* Gradients of attention from the forward's out and lse: grad_q, grad_k, grad_v (laid out
 * as q, k, v; overwritten). */
typedef kael_status kael_attention_backward_fn(int32_t device, kael_dtype dtype, void* grad_q,
                                               void* grad_k, void* grad_v, const void* grad_out,
                                               const void* q, const void* k, const void* v,
                                               const void* out, const void* lse,
                                               const kael_attention_layout* layout);

/* Checks that each of count int64 indices lies in [low, high). May return before the check
 * has run: then a violation is returned as KAEL_STATUS_INDEX_ERROR by the device's next
 * synchronize() or copy_to_host(), once, with last_error() "<op>: <what> V is out of bounds
 * for dimension <axis> with size <high>"; a plugin that checks at once returns it here.
 * op and what are copied. This is how index ops avoid a host sync per call. */
typedef kael_status kael_check_indices_fn(int32_t device, const int64_t* indices, int64_t count,
                                          int64_t low, int64_t high, int64_t axis, const char* op,
                                          const char* what);

/* One Adam step over count contiguous elements of dtype (f32, f64), in place on param, m and
 * v: m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2; param -= lr * (m /
 * first_correction) / (sqrt(v / second_correction) + eps), g the grad after weight decay. */
typedef kael_status kael_adam_fn(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                                 const void* grad, int64_t count, const kael_adam_params* params);

/* Since ABI 1.3: device graphs (CUDA graphs on the cuda plugin), so a fixed sequence of
 * small kernels, such as a decoding step, costs one launch instead of one per kernel. All
 * four are NULL, or none is. Between capture_begin and capture_end, work the calling
 * thread queues on the device is recorded, not run: the kernels' arguments, addresses
 * included, are fixed in the recording. Meanwhile the calls that copy host memory or wait
 * for the device (copy_to_device, copy_to_host, synchronize) fail with
 * KAEL_STATUS_UNSUPPORTED, and blocks that release() is given stay allocated until
 * graph_release, since replays still use them. Other threads are not recorded. */
typedef kael_status kael_capture_begin_fn(int32_t device);

/* Ends this thread's recording on device; *graph receives it, owned by the caller until
 * graph_release. When a call inside the recording failed, returns an error, *graph is
 * NULL, and the device is usable as before. */
typedef kael_status kael_capture_end_fn(int32_t device, void** graph);

/* Queues every recorded call again, in order after the work queued before it. */
typedef kael_status kael_graph_launch_fn(int32_t device, void* graph);

/* Frees a graph (after any queued replay); NULL is a no-op; must not fail. */
typedef void kael_graph_release_fn(int32_t device, void* graph);

/* Since ABI 1.3. matmul_bias() with its epilogue in the same pass: out = act(a x b + bias)
 * + residual, act per activation (KAEL_ACTIVATION_*), bias (columns elements) and residual
 * (out's size, contiguous) each may be NULL. A linear layer with its activation, or with
 * the residual add after it, in inference (decoding) costs one kernel. May be NULL. */
typedef kael_status kael_matmul_epilogue_fn(int32_t device, kael_dtype dtype, const void* a,
                                            const void* b, const void* bias, const void* residual,
                                            void* out, const kael_matmul_sizes* sizes,
                                            int32_t activation);

/* Since ABI 1.3. The host threads the plugin's kernels may use (its pool and its BLAS):
 * requested >= 1 sets the count, 0 leaves it; *current (not NULL) receives the count in
 * force. Calls in flight on other threads finish with the count they started with. NULL
 * for a plugin that runs no host threads of its own. */
typedef kael_status kael_host_threads_fn(int32_t requested, int32_t* current);

/* Since ABI 1.4. adam() over count tensors in one call: tensor i is sizes[i] contiguous
 * elements of dtype at params[i], m[i], v[i] and grads[i], stepped per *steps[i]; the
 * result is each tensor's adam(). The arrays are the caller's, read during the call. A
 * plugin may fuse the tensors into few launches, so a model's many small parameters cost
 * one kernel instead of one each. May be NULL: the core calls adam() per tensor. */
typedef kael_status kael_adam_many_fn(int32_t device, kael_dtype dtype, int64_t count,
                                      void* const* params, void* const* m, void* const* v,
                                      const void* const* grads, const int64_t* sizes,
                                      const kael_adam_params* const* steps);

/* Since ABI 1.7. Inclusive scans along i of outer x size x inner (contiguous data and out;
 * out never aliases data): op KAEL_REDUCE_SUM is cumsum, KAEL_REDUCE_PROD cumprod, others
 * are KAEL_STATUS_UNSUPPORTED. cumsum()'s dtype rules: floats accumulate in double and
 * write in_dtype, i64 and bool write i64, wrapping. Any dim scans in place of its layout,
 * with no transposed copies. May be NULL: the core then moves the dim last for cumsum() and
 * composes cumprod from elementwise products. */
typedef kael_status kael_scan_fn(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                                 kael_dtype in_dtype, void* out, const void* data, int64_t outer,
                                 int64_t size, int64_t inner);

/* Since ABI 1.8. max(dim)/min(dim) in one pass: along i of outer x size x inner (contiguous
 * data, size > 0), values[o * inner + j] (dtype) is the largest (op KAEL_REDUCE_ARGMAX) or
 * smallest (KAEL_REDUCE_ARGMIN) element and indices[o * inner + j] its index i, the first
 * one on ties and the first NaN if any, exactly as the max/min and argmax/argmin reduce ops
 * give them. Other ops are KAEL_STATUS_UNSUPPORTED. May be NULL: the core then runs those
 * two reductions. */
typedef kael_status kael_reduce_indexed_fn(int32_t device, kael_reduce_op op, kael_dtype dtype,
                                           void* values, int64_t* indices, const void* data,
                                           int64_t outer, int64_t size, int64_t inner);

/* Since ABI 1.9. reduce_dims() with its results finished in the same pass, so mean, var and
 * std are one launch: each result r, taken as a double before it is rounded, is stored as
 * r * scale, or sqrt(r * scale) when root != 0, in dtype (the input's, f32 or f64). Ops SUM
 * (mean: scale 1 / n), VARIANCE (var: n / (n - correction); std: root), NORM2 and LOGSUMEXP;
 * others are KAEL_STATUS_UNSUPPORTED. An empty row finishes its identity (mean: 0 * inf is
 * NaN, as the caller's scale is). May be NULL: the core then runs reduce_dims() and finishes
 * the results with elementwise ops. */
typedef kael_status kael_reduce_dims_finished_fn(int32_t device, kael_reduce_op op,
                                                 kael_dtype dtype, void* results, const void* data,
                                                 int64_t outer, int64_t size, int64_t inner,
                                                 double scale, int32_t root);

/* Since ABI 1.10. The extension called name (KAEL_EXTENSION_MODEL, plugin_extensions.h), a
 * static table owned by the plugin whose first field is its struct_size, or NULL when the plugin
 * has no such extension. The core asks once per name when it loads the plugin; must not fail.
 * May be NULL (no extensions). */
typedef const void* kael_extension_fn(const char* name);

/* Every function slot of kael_plugin in table order, X(slot, since): since is the ABI minor it
 * arrived in. kael's plugins generate their declarations and table assignments from it, and a
 * test checks it against the table. */
/* clang-format off */
#define KAEL_PLUGIN_SLOTS(X)      \
    X(last_error, 0)              \
    X(init, 0)                    \
    X(probe, 0)                   \
    X(device_properties, 0)       \
    X(shutdown, 0)                \
    X(allocate, 0)                \
    X(release, 0)                 \
    X(copy_to_device, 0)          \
    X(copy_to_host, 0)            \
    X(copy_within_device, 0)      \
    X(synchronize, 0)             \
    X(fill, 0)                    \
    X(convert, 0)                 \
    X(elementwise, 0)             \
    X(reduce, 0)                  \
    X(matmul, 0)                  \
    X(gather, 0)                  \
    X(scatter_add, 0)             \
    X(sort, 1)                    \
    X(cumsum, 1)                  \
    X(softmax, 2)                 \
    X(softmax_backward, 2)        \
    X(layer_norm, 2)              \
    X(layer_norm_backward, 2)     \
    X(cross_entropy, 2)           \
    X(cross_entropy_backward, 2)  \
    X(reduce_dims, 2)             \
    X(topk, 2)                    \
    X(matmul_bias, 2)             \
    X(attention, 2)               \
    X(attention_backward, 2)      \
    X(check_indices, 2)           \
    X(adam, 2)                    \
    X(capture_begin, 3)           \
    X(capture_end, 3)             \
    X(graph_launch, 3)            \
    X(graph_release, 3)           \
    X(matmul_epilogue, 3)         \
    X(host_threads, 3)            \
    X(adam_many, 4)               \
    X(scan, 7)                    \
    X(reduce_indexed, 8)          \
    X(reduce_dims_finished, 9)    \
    X(extension, 10)
/* clang-format on */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KAEL_PLUGIN_SLOTS_H */
