/* Loads fine but finds no device, like a GPU plugin on a machine without a GPU. */
#include "test_plugin_support.h"

static kael_status probe_no_device(int32_t* device_count, const char** reason) {
    *device_count = 0;
    *reason = "no simulated device present";
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    TEST_PLUGIN_COMMON_FIELDS("no_devices", "test plugin without devices"),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .version = "0.1.0",
    .probe = probe_no_device,
};

TEST_PLUGIN_DEFINE_ENTRY(table)
