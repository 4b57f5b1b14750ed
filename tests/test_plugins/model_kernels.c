/* A plugin with one model kernel, softmax, which writes a marker instead of a softmax so a test
 * sees which kernel the core called. Built twice: as model_slots, a 1.9 plugin with softmax in
 * the table's slot (how plugins before 1.10 offer model kernels), and as model_extension, a 1.10
 * plugin whose KAEL_EXTENSION_MODEL table holds softmax while the table's own model slots abort:
 * the core must take every model kernel from the extension, a NULL one (layer_norm) included. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_plugin_support.h"

#ifndef TEST_MODEL_EXTENSION
#define TEST_MODEL_EXTENSION 0
#endif

static kael_status write_marker(kael_dtype dtype, void* out, int64_t count, float marker) {
    if (dtype != KAEL_DTYPE_F32) {
        return test_plugin_fail(KAEL_STATUS_UNSUPPORTED, "softmax: f32 only");
    }
    for (int64_t i = 0; i < count; ++i) {
        ((float*)out)[i] = marker;
    }
    return KAEL_STATUS_OK;
}

static kael_status marker_softmax(int32_t device, kael_dtype dtype, void* out, const void* data,
                                  int64_t outer, int64_t size, int64_t inner, int32_t log) {
    (void)device, (void)data, (void)log;
    return write_marker(dtype, out, outer * size * inner, TEST_MODEL_EXTENSION ? 7.0f : 42.0f);
}

static kael_status probe_one_device(int32_t* device_count, const char** reason) {
    *device_count = 1;
    *reason = NULL;
    return KAEL_STATUS_OK;
}

#if TEST_MODEL_EXTENSION
/* The table's model slots of a plugin with the extension are never called. */
static kael_status poisoned_softmax(int32_t device, kael_dtype dtype, void* out, const void* data,
                                    int64_t outer, int64_t size, int64_t inner, int32_t log) {
    (void)device, (void)dtype, (void)out, (void)data, (void)outer, (void)size, (void)inner;
    (void)log;
    fprintf(stderr, "model_extension: the core called the table's softmax slot\n");
    abort();
}

static kael_status poisoned_layer_norm(int32_t device, kael_dtype dtype, void* out, void* mean,
                                       void* rstd, const void* x, const void* weight,
                                       const void* bias, int64_t rows, int64_t columns,
                                       double eps) {
    (void)device, (void)dtype, (void)out, (void)mean, (void)rstd, (void)x, (void)weight;
    (void)bias, (void)rows, (void)columns, (void)eps;
    fprintf(stderr, "model_extension: the core called the table's layer_norm slot\n");
    abort();
}

static const kael_model_kernels model = {
    .struct_size = sizeof(kael_model_kernels),
    .softmax = marker_softmax,
};

static const void* extension(const char* name) {
    return strcmp(name, KAEL_EXTENSION_MODEL) == 0 ? &model : NULL;
}
#endif

static const kael_plugin table = {
#if TEST_MODEL_EXTENSION
    .struct_size = sizeof(kael_plugin),
    .abi_minor = 10,
    .name = "model_extension",
    .softmax = poisoned_softmax,
    .layer_norm = poisoned_layer_norm,
    .extension = extension,
#else
    .struct_size = offsetof(kael_plugin, extension),
    .abi_minor = 9,
    .name = "model_slots",
    .softmax = marker_softmax,
#endif
    .abi_major = KAEL_ABI_MAJOR,
    .version = "0.0.10",
    .kind = KAEL_PLUGIN_KIND_EMULATED,
    .priority = 1,
    .device_type = "cuda",
    .build_info = "test plugin with one model kernel",
    .last_error = test_plugin_last_error,
    .probe = probe_one_device,
    TEST_PLUGIN_DEVICE_SLOTS,
};

TEST_PLUGIN_DEFINE_ENTRY(table)
