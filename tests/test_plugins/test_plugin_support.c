#include "test_plugin_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error_message[256];

const char* test_plugin_last_error(void) { return last_error_message; }

kael_status test_plugin_fail(kael_status status, const char* message) {
    snprintf(last_error_message, sizeof(last_error_message), "%s", message);
    return status;
}

static int valid_device(int32_t device) { return device == 0; }

kael_status test_device_properties(int32_t device, kael_device_properties* properties) {
    if (!valid_device(device)) {
        return test_plugin_fail(KAEL_STATUS_INVALID_ARGUMENT, "no such device");
    }
    if (properties == NULL || properties->struct_size < KAEL_DEVICE_PROPERTIES_SIZE_1_0) {
        return test_plugin_fail(KAEL_STATUS_INVALID_ARGUMENT, "properties struct too small");
    }
    snprintf(properties->name, sizeof(properties->name), "kael test device (host memory)");
    properties->memory_total = 0;
    properties->memory_free = 0;
    properties->capability_major = 0;
    properties->capability_minor = 0;
    return KAEL_STATUS_OK;
}

kael_status test_allocate(int32_t device, int64_t bytes, void** block) {
    if (!valid_device(device) || bytes <= 0) {
        return test_plugin_fail(KAEL_STATUS_INVALID_ARGUMENT, "bad device or size");
    }
    *block = malloc((size_t)bytes);
    if (*block == NULL) {
        return test_plugin_fail(KAEL_STATUS_OUT_OF_MEMORY, "malloc failed");
    }
    return KAEL_STATUS_OK;
}

void test_release(int32_t device, void* block) {
    (void)device;
    free(block);
}

static kael_status copy_bytes(int32_t device, void* target, const void* source, int64_t bytes) {
    if (!valid_device(device) || bytes < 0) {
        return test_plugin_fail(KAEL_STATUS_INVALID_ARGUMENT, "bad device or size");
    }
    memmove(target, source, (size_t)bytes);
    return KAEL_STATUS_OK;
}

kael_status test_copy_to_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return copy_bytes(device, target, source, bytes);
}

kael_status test_copy_to_host(int32_t device, void* target, const void* source, int64_t bytes) {
    return copy_bytes(device, target, source, bytes);
}

kael_status test_copy_within_device(int32_t device, void* target, const void* source,
                                    int64_t bytes) {
    return copy_bytes(device, target, source, bytes);
}

kael_status test_synchronize(int32_t device) {
    return valid_device(device) ? KAEL_STATUS_OK
                                : test_plugin_fail(KAEL_STATUS_INVALID_ARGUMENT, "no such device");
}
