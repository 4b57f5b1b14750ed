/* A memory-only backend built as if against an older ABI minor: its table ends before the
 * kernel slots, so the core must run every kernel on the cpu plugin through copies. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_plugin_support.h"

/* An older plugin's memory past struct_size is not table slots. The kernel slots are filled
 * with functions that abort, so a core that reads past struct_size fails loudly instead of
 * passing because the slots happen to be NULL. */
static void called_past_struct_size(const char* slot) {
    fprintf(stderr, "old_minor: the core called '%s', a slot past the table's struct_size\n",
            slot);
    abort();
}

static kael_status poisoned_fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                                 const kael_element_params* value) {
    (void)device, (void)dtype, (void)target, (void)count, (void)value;
    called_past_struct_size("fill");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                                    const kael_element_layout* layout) {
    (void)device, (void)out_dtype, (void)in_dtype, (void)layout;
    called_past_struct_size("convert");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                                        kael_dtype in_dtype, const kael_element_layout* layout,
                                        const kael_element_params* params) {
    (void)device, (void)op, (void)out_dtype, (void)in_dtype, (void)layout, (void)params;
    called_past_struct_size("elementwise");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                                   kael_dtype in_dtype, void* results, const void* data,
                                   int64_t chunk_size, int64_t output_count) {
    (void)device, (void)op, (void)out_dtype, (void)in_dtype, (void)results, (void)data;
    (void)chunk_size, (void)output_count;
    called_past_struct_size("reduce");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_matmul(int32_t device, kael_dtype dtype, const void* a,
                                   const void* b, void* out, const kael_matmul_sizes* sizes) {
    (void)device, (void)dtype, (void)a, (void)b, (void)out, (void)sizes;
    called_past_struct_size("matmul");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                                   const int64_t* indices, const kael_index_layout* layout) {
    (void)device, (void)dtype, (void)out, (void)data, (void)indices, (void)layout;
    called_past_struct_size("gather");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_scatter_add(int32_t device, kael_dtype dtype, void* data,
                                        const int64_t* indices, const void* source,
                                        const kael_index_layout* layout) {
    (void)device, (void)dtype, (void)data, (void)indices, (void)source, (void)layout;
    called_past_struct_size("scatter_add");
    return KAEL_STATUS_INTERNAL;
}

/* Since ABI 1.1: poisoned as well, so a core that reads any slot past struct_size aborts. */
static kael_status poisoned_sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices,
                                 const void* data, int64_t chunk_size, int64_t row_count,
                                 int32_t descending) {
    (void)device, (void)dtype, (void)values, (void)indices, (void)data, (void)chunk_size;
    (void)row_count, (void)descending;
    called_past_struct_size("sort");
    return KAEL_STATUS_INTERNAL;
}

static kael_status poisoned_cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                                   void* out, const void* data, int64_t chunk_size,
                                   int64_t row_count) {
    (void)device, (void)out_dtype, (void)in_dtype, (void)out, (void)data, (void)chunk_size;
    (void)row_count;
    called_past_struct_size("cumsum");
    return KAEL_STATUS_INTERNAL;
}

/* Built three times: as old_minor; as fake_gpu (a "real GPU" plugin that must outrank
 * emulated); as an old "cpu" plugin, whose missing slots the core must report. */
#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "old_minor"
#define TEST_PLUGIN_KIND KAEL_PLUGIN_KIND_EMULATED
#define TEST_PLUGIN_PRIORITY 1
#endif
#ifndef TEST_PLUGIN_DEVICE_TYPE
#define TEST_PLUGIN_DEVICE_TYPE "cuda"
#endif

static kael_status probe_one_device(int32_t* device_count, const char** reason) {
    *device_count = 1;
    *reason = NULL;
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    .struct_size = offsetof(kael_plugin, fill),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = 0,
    .name = TEST_PLUGIN_NAME,
    .version = "0.0.9",
    .kind = TEST_PLUGIN_KIND,
    .priority = TEST_PLUGIN_PRIORITY,
    .device_type = TEST_PLUGIN_DEVICE_TYPE,
    .build_info = "test plugin without kernel slots",
    .last_error = test_plugin_last_error,
    .probe = probe_one_device,
    TEST_PLUGIN_DEVICE_SLOTS,
    .fill = poisoned_fill,
    .convert = poisoned_convert,
    .elementwise = poisoned_elementwise,
    .reduce = poisoned_reduce,
    .matmul = poisoned_matmul,
    .gather = poisoned_gather,
    .scatter_add = poisoned_scatter_add,
    .sort = poisoned_sort,
    .cumsum = poisoned_cumsum,
};

KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t core_abi_major,
                                                        uint32_t core_abi_minor) {
    (void)core_abi_major;
    (void)core_abi_minor;
    return &table;
}
