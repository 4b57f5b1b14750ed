/* kael plugin ABI, part of plugin_api.h (include that, not this): the extensions a plugin may
 * return from its extension slot (since 1.10), each a struct that starts with struct_size and
 * only grows. Kernels that concern one kind of model live here rather than in kael_plugin, so
 * the table stays the tensor runtime's and a family grows without new table slots.
 * This header compiles as C99 and as C++. */
#ifndef KAEL_PLUGIN_EXTENSIONS_H
#define KAEL_PLUGIN_EXTENSIONS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model-path kernels (neural-network layers, losses, attention, optimizer steps), each with
 * the type and contract of the table slot of the same name (plugin_slots.h). The core takes a
 * kernel from here when the plugin returns this extension, and otherwise from the table's slot
 * (the way of plugins before 1.10, which keep working); kael's plugins fill only this. Any
 * kernel may be NULL: the core then runs that call on the cpu plugin and counts it. */
#define KAEL_EXTENSION_MODEL "kael.model"
typedef struct kael_model_kernels {
    size_t struct_size; /* sizeof(kael_model_kernels) as the plugin was built */
    kael_softmax_fn* softmax;
    kael_softmax_backward_fn* softmax_backward;
    kael_layer_norm_fn* layer_norm;
    kael_layer_norm_backward_fn* layer_norm_backward;
    kael_cross_entropy_fn* cross_entropy;
    kael_cross_entropy_backward_fn* cross_entropy_backward;
    kael_matmul_bias_fn* matmul_bias;
    kael_matmul_epilogue_fn* matmul_epilogue;
    kael_attention_fn* attention;
    kael_attention_backward_fn* attention_backward;
    kael_adam_fn* adam;
    kael_adam_many_fn* adam_many;
} kael_model_kernels;

/* Its kernels in struct order, X(kernel); each names a kael_plugin slot as well. */
#define KAEL_MODEL_KERNELS(X)                                                                   \
    X(softmax) X(softmax_backward) X(layer_norm) X(layer_norm_backward) X(cross_entropy)        \
    X(cross_entropy_backward) X(matmul_bias) X(matmul_epilogue) X(attention)                    \
    X(attention_backward) X(adam) X(adam_many)

/* The first released size. */
#define KAEL_MODEL_KERNELS_SIZE_1_10 (offsetof(kael_model_kernels, adam_many) + sizeof(void*))

/* Since 1.14: collectives over the plugin's memory (gloo's on the cpu plugin), for
 * kael::distributed. Processes meet through the core's key-value store; one communicator is one
 * process group. Every call blocks until this process's part is done, takes buffers of the
 * plugin's device memory (contiguous, count elements of dtype: any KAEL_DTYPE_*, bool as one
 * byte) and returns KAEL_STATUS_*; a peer that fails or times out makes the call return
 * KAEL_STATUS_DEVICE_ERROR with the reason in last_error. */
#define KAEL_EXTENSION_COLLECTIVES "kael.collectives"

/* The reductions of all_reduce and reduce_scatter (an average is a sum the core divides). */
typedef int32_t kael_collective_op;
#define KAEL_COLLECTIVE_SUM 0
#define KAEL_COLLECTIVE_PRODUCT 1
#define KAEL_COLLECTIVE_MIN 2
#define KAEL_COLLECTIVE_MAX 3

/* The core's key-value store, as the plugin sees it during communicator_create: set publishes a
 * value; get waits (up to the store's timeout) for key and returns a copy the plugin frees with
 * free_value. Thread-safe; valid only during communicator_create. */
typedef struct kael_store {
    size_t struct_size; /* sizeof(kael_store) */
    void* context;
    kael_status (*set)(void* context, const char* key, const void* value, int64_t bytes);
    kael_status (*get)(void* context, const char* key, void** value, int64_t* bytes);
    void (*free_value)(void* context, void* value);
} kael_store;

typedef struct kael_collectives {
    size_t struct_size;  /* sizeof(kael_collectives) as the plugin was built */
    const char* library; /* what moves the bytes, for kael-info: "gloo (TCP)" */
    /* A communicator of `size` processes in which this one is `rank`, on device (its memory):
     * rendezvous through store, keys prefixed by the core; timeout_ms bounds every later call. */
    kael_status (*communicator_create)(int32_t device, const kael_store* store, int32_t rank,
                                       int32_t size, int64_t timeout_ms, void** communicator);
    void (*communicator_release)(void* communicator); /* NULL is a no-op; must not fail */
    /* data = op over every rank's data, in place. */
    kael_status (*all_reduce)(void* communicator, kael_dtype dtype, kael_collective_op op,
                              void* data, int64_t count);
    /* every rank's data = root's. */
    kael_status (*broadcast)(void* communicator, kael_dtype dtype, void* data, int64_t count,
                             int32_t root);
    /* out (size * count) = rank 0's in, rank 1's in, ... */
    kael_status (*all_gather)(void* communicator, kael_dtype dtype, void* out, const void* in,
                              int64_t count);
    /* out (count) = op over every rank's slice `rank` of in (size * count). */
    kael_status (*reduce_scatter)(void* communicator, kael_dtype dtype, kael_collective_op op,
                                  void* out, const void* in, int64_t count);
    /* slice j of out (count each) = rank j's slice `rank` of in. */
    kael_status (*all_to_all)(void* communicator, kael_dtype dtype, void* out, const void* in,
                              int64_t count);
    /* Point to point, matched by peer and tag. */
    kael_status (*send)(void* communicator, kael_dtype dtype, const void* data, int64_t count,
                        int32_t peer, int32_t tag);
    kael_status (*recv)(void* communicator, kael_dtype dtype, void* data, int64_t count,
                        int32_t peer, int32_t tag);
    kael_status (*barrier)(void* communicator);
    /* Since 1.16 (absent where struct_size ends at barrier): all_to_all with a count per rank.
     * in holds in_counts[j] elements for rank j, end to end in rank order; out receives
     * out_counts[j] elements from rank j the same way. Both arrays hold `size` counts, and
     * rank j's in_counts[rank] equals this rank's out_counts[j]. */
    kael_status (*all_to_all_v)(void* communicator, kael_dtype dtype, void* out,
                                const int64_t* out_counts, const void* in,
                                const int64_t* in_counts);
} kael_collectives;

/* The size of the first collectives table (1.14), without all_to_all_v. */
#define KAEL_COLLECTIVES_SIZE_1_14 (offsetof(kael_collectives, barrier) + sizeof(void*))

/* Since 1.16: convolution (kael.nn's Conv1d-3d) over the plugin's memory. Without it, or when
 * a call returns KAEL_STATUS_UNSUPPORTED before writing anything, the core composes the
 * convolution from sliding windows and a matrix product on the same device (never a copy to
 * another one). Buffers are contiguous: input [N, C, *input], weight [OC, C / groups, *kernel],
 * bias [OC] (NULL: none), output [N, OC, *output], all of dtype. */
#define KAEL_EXTENSION_CONVOLUTION "kael.convolution"

typedef struct kael_conv_geometry {
    size_t struct_size; /* sizeof(kael_conv_geometry) */
    int32_t spatial;    /* 1 to 3 spatial dims; entries past them are 0 */
    /* f32 products' precision, as kael_matmul_sizes.precision (KAEL_MATMUL_PRECISION_*; 0, the
     * highest, from a core that left it unset): High lets a device use TF32 tensor cores. A
     * plugin may always compute more exactly. */
    int32_t precision;
    int64_t batch, in_channels, out_channels, groups;
    int64_t input[3], kernel[3], output[3];
    int64_t stride[3];
    int64_t padding_before[3], padding_after[3]; /* zeros, as PyTorch's padding (maybe uneven) */
    int64_t dilation[3];                         /* PyTorch's: 1 is a dense kernel */
} kael_conv_geometry;

typedef struct kael_convolution {
    size_t struct_size;  /* sizeof(kael_convolution) as the plugin was built */
    const char* library; /* what computes it, for kael-info: "oneDNN 2.6" */
    /* output = convolution of input by weight, plus bias. */
    kael_status (*forward)(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                           const void* input, const void* weight, const void* bias,
                           void* output);
    /* grad_input = the gradient of the input for grad_output ([N, OC, *output]). */
    kael_status (*backward_input)(int32_t device, kael_dtype dtype,
                                  const kael_conv_geometry* geometry, const void* grad_output,
                                  const void* weight, void* grad_input);
    /* grad_weight, and grad_bias unless NULL (the sum of grad_output over N and positions). */
    kael_status (*backward_weight)(int32_t device, kael_dtype dtype,
                                   const kael_conv_geometry* geometry, const void* grad_output,
                                   const void* input, void* grad_weight, void* grad_bias);
} kael_convolution;

/* Since 1.16: max and average pooling (kael.nn's MaxPool and AvgPool) over the plugin's memory,
 * as the convolution extension is: absent, or a call declined with KAEL_STATUS_UNSUPPORTED
 * before writing anything, and the core pools with its own ops on the same device. Buffers
 * are contiguous: input [N, C, *input], output [N, C, *output]. Max pooling's backward reads
 * the workspace its forward wrote (workspace_bytes of the plugin's memory, opaque to the
 * core). */
#define KAEL_EXTENSION_POOLING "kael.pooling"

typedef int32_t kael_pool_kind;
#define KAEL_POOL_MAX 0
#define KAEL_POOL_AVG_INCLUDE_PADDING 1 /* the window's cells in the padded input */
#define KAEL_POOL_AVG_EXCLUDE_PADDING 2 /* the window's cells in the input */

typedef struct kael_pool_geometry {
    size_t struct_size; /* sizeof(kael_pool_geometry) */
    int32_t spatial;    /* 1 to 3 */
    kael_pool_kind kind;
    int64_t batch, channels;
    int64_t input[3], kernel[3], output[3], stride[3];
    int64_t padding_before[3], padding_after[3]; /* after includes ceil_mode's last window */
    int64_t dilation[3];                         /* PyTorch's: 1 is dense (max only) */
} kael_pool_geometry;

typedef struct kael_pooling {
    size_t struct_size;  /* sizeof(kael_pooling) as the plugin was built */
    const char* library; /* for kael-info: "oneDNN 2.6" */
    /* The workspace max pooling's forward writes for its backward, in bytes (0 for average),
     * or -1 when the plugin does not pool this geometry and dtype. */
    int64_t (*workspace_bytes)(int32_t device, kael_dtype dtype,
                               const kael_pool_geometry* geometry);
    kael_status (*forward)(int32_t device, kael_dtype dtype, const kael_pool_geometry* geometry,
                           const void* input, void* output, void* workspace);
    /* grad_input (zeroed by the plugin) from grad_output and forward's workspace. */
    kael_status (*backward)(int32_t device, kael_dtype dtype, const kael_pool_geometry* geometry,
                            const void* grad_output, const void* workspace, void* grad_input);
} kael_pooling;

/* Since 1.16: the LSTM and GRU cells of kael.nn's LSTM, GRU and their cells, one step over the
 * plugin's memory, so a step is one launch instead of a dozen elementwise ones (absent, or a
 * call declined with KAEL_STATUS_UNSUPPORTED before writing anything: the core composes the cell
 * from its ops). Buffers are contiguous rows of `batch`. LSTM: x_gates and h_gates
 * [batch, 4 * hidden] (the input's and the hidden state's products with their biases, in
 * PyTorch's gate order i, f, g, o, summed here), cell, hidden_out and cell_out [batch, hidden];
 * saved [batch, 4 * hidden] receives the activated gates (sigmoid i, f, o and tanh g). */
#define KAEL_EXTENSION_RECURRENT "kael.recurrent"

typedef struct kael_recurrent {
    size_t struct_size;  /* sizeof(kael_recurrent) as the plugin was built */
    /* cell_out = f * cell + i * g, hidden_out = o * tanh(cell_out). */
    kael_status (*lstm_cell_forward)(int32_t device, kael_dtype dtype, int64_t batch,
                                     int64_t hidden, const void* x_gates, const void* h_gates,
                                     const void* cell, void* hidden_out, void* cell_out,
                                     void* saved);
    /* From the forward's saved gates, cell and cell_out, and the gradients of hidden_out and
     * cell_out (grad_cell_out NULL: zero): grad_gates [batch, 4 * hidden] (the gradient of both
     * x_gates and h_gates) and grad_cell [batch, hidden] (of cell). */
    kael_status (*lstm_cell_backward)(int32_t device, kael_dtype dtype, int64_t batch,
                                      int64_t hidden, const void* saved, const void* cell,
                                      const void* cell_out, const void* grad_hidden,
                                      const void* grad_cell_out, void* grad_gates,
                                      void* grad_cell);
    /* The GRU cell, gates [batch, 3 * hidden] in PyTorch's order r, z, n and the hidden state
     * [batch, hidden]: r and z the sigmoids of the summed products, n = tanh(x_n + r * h_n),
     * hidden_out = (1 - z) * n + z * hidden; saved [batch, 3 * hidden] receives r, z and n. */
    kael_status (*gru_cell_forward)(int32_t device, kael_dtype dtype, int64_t batch,
                                    int64_t hidden, const void* x_gates, const void* h_gates,
                                    const void* hidden_in, void* hidden_out, void* saved);
    /* Its gradients: of x_gates and h_gates (they differ in n: h_n's is r times x_n's) and of
     * hidden_in, from the forward's saved gates, h_gates, hidden_in and grad_hidden. */
    kael_status (*gru_cell_backward)(int32_t device, kael_dtype dtype, int64_t batch,
                                     int64_t hidden, const void* saved, const void* h_gates,
                                     const void* hidden_in, const void* grad_hidden,
                                     void* grad_x_gates, void* grad_h_gates, void* grad_hidden_in);
} kael_recurrent;

/* Since 1.16: per-channel statistics and maps over buffers laid out [outer, channels, inner]
 * (contiguous, of dtype, outer * inner > 0 and channels > 0), for kael.nn's BatchNorm and for
 * var/std over the dims on both sides of one kept run, each one pass over the data where the
 * core's reductions take a copy and two passes. The per-channel buffers (mean, variance, sums,
 * scale, shift) are float64 for float64 data and float32 otherwise. Absent, or a call declined
 * with KAEL_STATUS_UNSUPPORTED before writing anything: the core composes the same results from
 * its reductions and elementwise ops on the same device. */
#define KAEL_EXTENSION_CHANNELS "kael.channels"

typedef struct kael_channels {
    size_t struct_size; /* sizeof(kael_channels) as the plugin was built */
    /* mean[c] of channel c's outer * inner values and variance[c] = M2 / max(outer * inner -
     * correction, 0) (M2 their squared deviations from the mean: inf or NaN past the count, as
     * PyTorch's var). */
    kael_status (*moments)(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels,
                           int64_t inner, const void* data, double correction, void* mean,
                           void* variance);
    /* sum_grad[c] = the sum of grad over channel c, sum_grad_centered[c] = the sum of
     * grad * (data - mean[c]) (BatchNorm's backward: its bias and weight gradients). */
    kael_status (*backward_sums)(int32_t device, kael_dtype dtype, int64_t outer,
                                 int64_t channels, int64_t inner, const void* data,
                                 const void* grad, const void* mean, void* sum_grad,
                                 void* sum_grad_centered);
    /* out = data * scale[c] + shift[c], plus other * other_scale[c] unless other is NULL (then
     * other_scale is unused); out may be data or other. */
    kael_status (*affine)(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels,
                          int64_t inner, const void* data, const void* scale, const void* shift,
                          const void* other, const void* other_scale, void* out);
} kael_channels;

/* Since 1.17: a decoding step's fused kernels (a model run one token at a time in inference),
 * each one launch where the composed ops would be several. Absent, or a call declined with
 * KAEL_STATUS_UNSUPPORTED before writing anything: the core composes the same result from its
 * own kernels on the same device. */
#define KAEL_EXTENSION_DECODING "kael.decoding"

/* The queries' own keys and values for cached_attention: [batch, heads, queries, head_dim]
 * views, strides in elements for batch, head and token (head_dim contiguous). */
typedef struct kael_cache_append {
    size_t struct_size; /* sizeof(kael_cache_append) */
    const void* keys;
    const void* values;
    int64_t key_strides[3];
    int64_t value_strides[3];
} kael_cache_append;

typedef struct kael_decoding {
    size_t struct_size; /* sizeof(kael_decoding) as the plugin was built */
    /* A layer norm and the linear layer it feeds: out = act(n x b + bias) + residual, n each
     * row of a (sizes->rows x sizes->inner, contiguous) normalised as layer_norm does, (a -
     * mean) * rstd * norm_weight + norm_bias with rstd = 1 / sqrt(variance + eps) (norm_weight
     * and norm_bias inner elements, either NULL for ones and zeros) and rounded to dtype as
     * layer_norm's output is; then matmul_epilogue's product with sizes, bias, residual and
     * activation (KAEL_ACTIVATION_*). Nothing else is stored (no mean or rstd). */
    kael_status (*layer_norm_linear)(int32_t device, kael_dtype dtype, const void* a,
                                     const void* norm_weight, const void* norm_bias, double eps,
                                     const void* b, const void* bias, const void* residual,
                                     void* out, const kael_matmul_sizes* sizes, int32_t activation);
    /* The attention slot over a KV cache of fixed capacity (layout->key_lengths not NULL) after
     * storing append's keys and values into k and v, which this call writes: batch b's query i
     * at token key_lengths[b] - queries + i (a token outside [0, keys) is not stored), read as
     * the cache's own from there. A decoding step's key and value then need no launch of
     * their own. */
    kael_status (*cached_attention)(int32_t device, kael_dtype dtype, void* out, void* lse,
                                    const void* q, void* k, void* v,
                                    const kael_attention_layout* layout,
                                    const kael_cache_append* append);
} kael_decoding;

/* Since 1.18: page-locked ("pinned") host memory for the plugin's device, which it copies to and
 * from at the link's full speed (cudaHostAlloc on the cuda plugin, where pageable memory moves
 * through a staging buffer at a fraction of it). The core gives it to cpu tensors:
 * Tensor::pin_memory() and the gloo backend's host copies of the device's tensors. Absent,
 * pin_memory raises and staging uses ordinary host memory. The memory is host-addressable and
 * read and written by the cpu plugin like any other host memory. */
#define KAEL_EXTENSION_HOST_MEMORY "kael.host_memory"

typedef struct kael_host_memory {
    size_t struct_size; /* sizeof(kael_host_memory) as the plugin was built */
    /* bytes (> 0) of page-locked host memory into *block, aligned to 64 bytes at least;
     * KAEL_STATUS_OUT_OF_MEMORY when none is left. */
    kael_status (*allocate)(int32_t device, int64_t bytes, void** block);
    /* Gives back a block from allocate (NULL: nothing); never fails. */
    void (*release)(int32_t device, void* block);
} kael_host_memory;

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus)
static_assert(sizeof(kael_model_kernels) == 8 + 12 * 8, "model kernels ABI size");
static_assert(sizeof(kael_collectives) == 8 * 13, "collectives ABI size");
static_assert(sizeof(kael_conv_geometry) == 8 * 27, "convolution geometry ABI size");
static_assert(sizeof(kael_convolution) == 8 * 5, "convolution ABI size");
static_assert(sizeof(kael_pool_geometry) == 8 * 25, "pooling geometry ABI size");
static_assert(sizeof(kael_pooling) == 8 * 5, "pooling ABI size");
static_assert(sizeof(kael_recurrent) == 8 * 5, "recurrent ABI size");
static_assert(sizeof(kael_channels) == 8 * 4, "channels ABI size");
static_assert(sizeof(kael_host_memory) == 8 * 3, "host memory ABI size");
#endif

#endif /* KAEL_PLUGIN_EXTENSIONS_H */
