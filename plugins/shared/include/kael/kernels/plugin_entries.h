#pragma once
// The memory and kernel entries every device plugin defines in its own namespace: declared and
// wired into the table here once, so the three plugins cannot drift from the ABI or each other.
#include <cstdint>

#include "kael/kernels/entries_attention.h"
#include "kael/kernels/entries_index_check.h"
#include "kael/kernels/entries_layer_norm.h"
#include "kael/kernels/entries_matmul_bias.h"
#include "kael/kernels/entries_optim.h"
#include "kael/kernels/entries_reduce_dims.h"
#include "kael/kernels/entries_sequence.h"
#include "kael/kernels/entries_softmax.h"
#include "kael/plugin_api.h"

// Declares, in the current namespace, one function per memory and kernel slot of kael_plugin.
#define KAEL_DECLARE_PLUGIN_ENTRIES()                                                              \
    kael_status allocate(int32_t device, int64_t bytes, void** block);                             \
    void release(int32_t device, void* block);                                                     \
    kael_status copy_to_device(int32_t device, void* target, const void* source, int64_t bytes);   \
    kael_status copy_to_host(int32_t device, void* target, const void* source, int64_t bytes);     \
    kael_status copy_within_device(int32_t device, void* target, const void* source,               \
                                   int64_t bytes);                                                 \
    kael_status synchronize(int32_t device);                                                       \
    kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,                \
                     const kael_element_params* value);                                            \
    kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,                 \
                        const kael_element_layout* layout);                                        \
    kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,              \
                            kael_dtype in_dtype, const kael_element_layout* layout,                \
                            const kael_element_params* params);                                    \
    kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype,                    \
                       kael_dtype in_dtype, void* results, const void* data, int64_t chunk_size,   \
                       int64_t output_count);                                                      \
    kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,  \
                       const kael_matmul_sizes* sizes);                                            \
    kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,              \
                       const int64_t* indices, const kael_index_layout* layout);                   \
    kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,  \
                            const void* source, const kael_index_layout* layout);                  \
    kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices,             \
                     const void* data, int64_t chunk_size, int64_t row_count, int32_t descending); \
    kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,       \
                       const void* data, int64_t chunk_size, int64_t row_count);                   \
    KAEL_DECLARE_LAYER_NORM_ENTRIES();                                                             \
    KAEL_DECLARE_INDEX_CHECK_ENTRIES();                                                            \
    KAEL_DECLARE_MATMUL_BIAS_ENTRIES();                                                            \
    KAEL_DECLARE_SOFTMAX_ENTRIES();                                                                \
    KAEL_DECLARE_OPTIM_ENTRIES();                                                                  \
    KAEL_DECLARE_REDUCE_DIMS_ENTRIES();                                                            \
    KAEL_DECLARE_SEQUENCE_ENTRIES();                                                               \
    KAEL_DECLARE_ATTENTION_ENTRIES()

// Points the table's memory and kernel slots at the entries declared above.
#define KAEL_ASSIGN_PLUGIN_ENTRIES(table)                \
    do {                                                 \
        (table).allocate = allocate;                     \
        (table).release = release;                       \
        (table).copy_to_device = copy_to_device;         \
        (table).copy_to_host = copy_to_host;             \
        (table).copy_within_device = copy_within_device; \
        (table).synchronize = synchronize;               \
        (table).fill = fill;                             \
        (table).convert = convert;                       \
        (table).elementwise = elementwise;               \
        (table).reduce = reduce;                         \
        (table).matmul = matmul;                         \
        (table).gather = gather;                         \
        (table).scatter_add = scatter_add;               \
        (table).sort = sort;                             \
        (table).cumsum = cumsum;                         \
        KAEL_ASSIGN_LAYER_NORM_ENTRIES(table);           \
        KAEL_ASSIGN_INDEX_CHECK_ENTRIES(table);          \
        KAEL_ASSIGN_MATMUL_BIAS_ENTRIES(table);          \
        KAEL_ASSIGN_SOFTMAX_ENTRIES(table);              \
        KAEL_ASSIGN_OPTIM_ENTRIES(table);                \
        KAEL_ASSIGN_REDUCE_DIMS_ENTRIES(table);          \
        KAEL_ASSIGN_SEQUENCE_ENTRIES(table);             \
        KAEL_ASSIGN_ATTENTION_ENTRIES(table);            \
    } while (false)
