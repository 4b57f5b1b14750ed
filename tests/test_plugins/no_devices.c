/* Loads fine but finds no device, like a GPU plugin on a machine without a GPU. */
#include "test_plugin_support.h"

static kael_status probe_no_device(int32_t* device_count, const char** reason) {
    *device_count = 0;
    *reason = "no simulated device present";
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    .struct_size = sizeof(kael_plugin),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .name = "no_devices",
    .version = "0.1.0",
    .kind = KAEL_PLUGIN_KIND_EMULATED,
    .priority = 1000,
    .device_type = "cuda",
    .build_info = "test plugin without devices",
    .last_error = test_plugin_last_error,
    .probe = probe_no_device,
    TEST_PLUGIN_DEVICE_SLOTS,
};

KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t core_abi_major,
                                                        uint32_t core_abi_minor) {
    (void)core_abi_major;
    (void)core_abi_minor;
    return &table;
}
