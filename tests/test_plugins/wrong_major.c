/* A plugin from a future, incompatible ABI: the core must refuse it before calling anything. */
#include "test_plugin_support.h"

static kael_status probe_one_device(int32_t* device_count, const char** reason) {
    *device_count = 1;
    *reason = NULL;
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    .struct_size = sizeof(kael_plugin),
    .abi_major = KAEL_ABI_MAJOR + 1,
    .abi_minor = 3,
    .name = "wrong_major",
    .version = "9.0.0",
    .kind = KAEL_PLUGIN_KIND_EMULATED,
    .priority = 1000,
    .device_type = "cuda",
    .build_info = "test plugin with the next ABI major",
    .last_error = test_plugin_last_error,
    .probe = probe_one_device,
    TEST_PLUGIN_DEVICE_SLOTS,
};

KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t core_abi_major,
                                                        uint32_t core_abi_minor) {
    (void)core_abi_major;
    (void)core_abi_minor;
    return &table;
}
