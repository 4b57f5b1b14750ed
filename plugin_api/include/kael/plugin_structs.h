/* kael plugin ABI, part of plugin_api.h (include that, not this): the input and output structs
 * the kernel slots take, each with its released sizes. Structs carrying struct_size only grow;
 * a reader accepts any struct_size from the first released one on. */
#ifndef KAEL_PLUGIN_STRUCTS_H
#define KAEL_PLUGIN_STRUCTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A strided iteration space, as TensorIterator computes it after broadcasting and coalescing.
 * Element e has coordinates from e decomposed innermost-first over shape; operand k lives at
 * base[k] + sum(coord[d] * strides[k][d]) bytes. Broadcast dimensions have stride 0. */
typedef struct kael_element_layout {
    size_t struct_size;                             /* sizeof(kael_element_layout) */
    int32_t dims;                                   /* 0..KAEL_MAX_DIMS; 0 means one element */
    int32_t operands;                               /* 1..KAEL_MAX_OPERANDS, output first */
    int64_t count;                                  /* product of shape; may be 0 */
    int64_t shape[KAEL_MAX_DIMS];                   /* outermost first */
    int64_t strides[KAEL_MAX_OPERANDS][KAEL_MAX_DIMS]; /* in bytes, may be 0 or negative */
    void* base[KAEL_MAX_OPERANDS];                  /* device addresses; owned by the caller */
} kael_element_layout;

/* Constants for clamp, masked_fill and fill. Integer values travel apart from real ones because
 * a double cannot hold every int64 exactly. Integer and bool dtypes read integers[]. */
typedef struct kael_element_params {
    size_t struct_size; /* sizeof(kael_element_params) */
    double reals[2];
    int64_t integers[2];
} kael_element_params;

/* gather/scatter_add addressing, in elements. The iteration space is the index tensor's shape;
 * for each coordinate c: source/out at c (source_strides), index at c (index_strides), data at c
 * with c[axis] replaced by the index value (data_strides). Indices are non-negative: the core
 * wraps negative ones and bounds-checks them, possibly later (check_indices), so since 1.2 a
 * kernel must skip an index outside [0, axis_size) (gather writes 0 there) and never touch
 * memory for it. A layout whose struct_size ends before axis_size comes from an older core that
 * checked on the host. */
typedef struct kael_index_layout {
    size_t struct_size; /* sizeof(kael_index_layout) */
    int32_t dims;       /* 1..KAEL_MAX_DIMS */
    int32_t axis;       /* 0..dims-1 */
    int64_t count;      /* product of shape; may be 0 */
    int64_t shape[KAEL_MAX_DIMS];
    int64_t data_strides[KAEL_MAX_DIMS];
    int64_t index_strides[KAEL_MAX_DIMS];
    int64_t source_strides[KAEL_MAX_DIMS]; /* the out tensor for gather, the source for scatter */
    int64_t axis_size; /* since 1.2: data's extent along axis, the bound of valid indices */
} kael_index_layout;

/* out[b] = op(a[b]) x op(b[b]) for b in batches; out is contiguous rows x columns.
 * a is rows x inner (or inner x rows when a_transposed), b is inner x columns (or columns x
 * inner when b_transposed), both contiguous in that stored form. Batch strides are in elements;
 * 0 broadcasts one matrix over every batch. precision (since 1.12) is what an f32 product may
 * round its inputs to, as torch.set_float32_matmul_precision; other dtypes ignore it. */
typedef struct kael_matmul_sizes {
    size_t struct_size; /* sizeof(kael_matmul_sizes) */
    int64_t batches;
    int64_t rows;
    int64_t inner;
    int64_t columns;
    int64_t a_batch_stride;
    int64_t b_batch_stride;
    int32_t a_transposed;
    int32_t b_transposed;
    /* Since ABI 1.12 (a smaller struct_size means KAEL_MATMUL_PRECISION_HIGHEST). */
    int32_t precision; /* KAEL_MATMUL_PRECISION_* */
    int32_t reserved;  /* 0 */
} kael_matmul_sizes;

/* Since ABI 1.12: kael_matmul_sizes.precision. Each allows less exact products than the one
 * before; a plugin may always compute more exactly than allowed. */
#define KAEL_MATMUL_PRECISION_HIGHEST 0 /* f32 products exactly as f32 multiply-adds */
#define KAEL_MATMUL_PRECISION_HIGH 1    /* inputs may be rounded to TF32 (10-bit mantissa) */
#define KAEL_MATMUL_PRECISION_MEDIUM 2  /* inputs may be rounded to bfloat16 */

/* Since ABI 1.2. Fused scaled dot-product attention over [batch, heads, tokens, head_dim] views.
 * Strides are in elements for the batch, head and token dimensions of each tensor; head_dim is
 * contiguous (stride 1) in all of them, so q/k/v may be views into one fused qkv projection and
 * out may be written as [batch, tokens, heads, head_dim]. With causal, query i sees keys
 * j <= i + (keys - queries) (aligned at the end, as with a KV cache). */
typedef struct kael_attention_layout {
    size_t struct_size; /* sizeof(kael_attention_layout) */
    int64_t batch;
    int64_t heads;
    int64_t queries;  /* query tokens; may be 0 */
    int64_t keys;     /* key/value tokens; >= 1 when queries > 0 */
    int64_t head_dim; /* >= 1 */
    int64_t q_strides[3];   /* batch, head, token */
    int64_t k_strides[3];
    int64_t v_strides[3];
    int64_t out_strides[3]; /* out and grad_out (backward); grad_q/k/v use q/k/v strides */
    double scale;           /* applied to q . k, usually 1 / sqrt(head_dim) */
    int32_t causal;         /* 0 or 1 */
    int32_t reserved;       /* 0 */
    /* Since ABI 1.3 (a smaller struct_size means NULL): NULL, or batch int64 counts in device
     * memory, for keys that are a cache of fixed capacity: batch b's keys [count, keys) are
     * ignored (never read), and causal aligns its last query with key count - 1. The forward
     * only: attention_backward rejects it. Counts are clamped to [0, keys]. */
    const int64_t* key_lengths;
} kael_attention_layout;

/* Since ABI 1.3: matmul_epilogue's activations. */
#define KAEL_ACTIVATION_NONE 0
#define KAEL_ACTIVATION_GELU_TANH 1 /* x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)), GPT-2's */

/* Since ABI 1.2. One Adam or AdamW update (the adam slot). first_correction and
 * second_correction are 1 - beta1^step and 1 - beta2^step, computed by the caller. */
typedef struct kael_adam_params {
    size_t struct_size; /* sizeof(kael_adam_params) */
    double lr;
    double beta1;
    double beta2;
    double eps;
    double weight_decay;
    double first_correction;
    double second_correction;
    int32_t decoupled; /* 1: AdamW (param *= 1 - lr * weight_decay); 0: grad += weight_decay * param */
    int32_t reserved;  /* 0 */
    /* Since 1.15. NULL, or memory of the call's device holding three doubles, lr,
     * first_correction and second_correction, which the kernel reads when it runs, in place
     * of those fields: a step recorded in a device graph then follows a step count and
     * learning rate that the device keeps (torch's capturable=True). Read it only when
     * struct_size reaches KAEL_ADAM_PARAMS_SIZE_1_15; the core passes it only to plugins of
     * ABI 1.15 or later. */
    const double* device_factors;
} kael_adam_params;

/* Filled by device_properties(). Strings are copied into the struct, NUL-terminated. */
typedef struct kael_device_properties {
    size_t struct_size; /* set by the caller to sizeof(kael_device_properties) */
    char name[128];     /* "NVIDIA H200", "host CPU (16 threads)" */
    uint64_t memory_total; /* bytes; 0 when unknown */
    uint64_t memory_free;  /* bytes; 0 when unknown */
    int32_t capability_major; /* compute capability; 0 for non-GPU devices */
    int32_t capability_minor;
} kael_device_properties;

/* The first released size of each struct that carries struct_size: the least struct_size a
 * reader accepts (see "Input structs" above). Structs only grow, so these never change. */
#define KAEL_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))
#define KAEL_ELEMENT_LAYOUT_SIZE_1_0 KAEL_SIZE_THROUGH(kael_element_layout, base)
#define KAEL_ELEMENT_PARAMS_SIZE_1_0 KAEL_SIZE_THROUGH(kael_element_params, integers)
#define KAEL_INDEX_LAYOUT_SIZE_1_0 KAEL_SIZE_THROUGH(kael_index_layout, source_strides)
#define KAEL_MATMUL_SIZES_SIZE_1_0 KAEL_SIZE_THROUGH(kael_matmul_sizes, b_transposed)
#define KAEL_DEVICE_PROPERTIES_SIZE_1_0 KAEL_SIZE_THROUGH(kael_device_properties, capability_minor)
#define KAEL_ATTENTION_LAYOUT_SIZE_1_2 KAEL_SIZE_THROUGH(kael_attention_layout, reserved)
#define KAEL_ADAM_PARAMS_SIZE_1_2 KAEL_SIZE_THROUGH(kael_adam_params, reserved)
#define KAEL_ADAM_PARAMS_SIZE_1_15 KAEL_SIZE_THROUGH(kael_adam_params, device_factors)

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus)
static_assert(sizeof(kael_element_layout) == 8 + 8 + 8 + 64 + 256 + 32, "layout ABI size");
static_assert(sizeof(kael_element_params) == 40, "params ABI size");
static_assert(sizeof(kael_index_layout) == 8 + 8 + 8 + 4 * 64 + 8, "index layout ABI size");
static_assert(sizeof(kael_matmul_sizes) == 8 + 6 * 8 + 8 + 8, "matmul sizes ABI size");
static_assert(sizeof(kael_device_properties) == 8 + 128 + 16 + 8, "device properties ABI size");
static_assert(sizeof(kael_attention_layout) == 8 + 5 * 8 + 12 * 8 + 8 + 8 + 8,
              "attention ABI size");
static_assert(sizeof(kael_adam_params) == 8 + 7 * 8 + 8 + 8, "adam params ABI size");
#endif

#endif /* KAEL_PLUGIN_STRUCTS_H */
