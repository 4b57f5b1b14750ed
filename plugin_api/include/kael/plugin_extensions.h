/* kael plugin ABI, part of plugin_api.h (include that, not this): the extensions a plugin may
 * return from its extension slot (since 1.10), each a struct that starts with struct_size and
 * only grows. Kernels that concern one kind of model live here rather than in kael_plugin, so
 * the table stays the tensor runtime's and a family grows without new table slots.
 * This header compiles as C99 and as C++. */
#ifndef KAEL_PLUGIN_EXTENSIONS_H
#define KAEL_PLUGIN_EXTENSIONS_H

#include <stddef.h>

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus)
static_assert(sizeof(kael_model_kernels) == 8 + 12 * 8, "model kernels ABI size");
#endif

#endif /* KAEL_PLUGIN_EXTENSIONS_H */
