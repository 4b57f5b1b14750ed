/* init() fails the way a plugin does when its driver library is broken. */
#include "test_plugin_support.h"

static kael_status failing_init(void) {
    return test_plugin_fail(KAEL_STATUS_DEVICE_ERROR, "simulated driver failure");
}

/* Reports a device, so a core that ignored the init failure would show the plugin as loaded. */
static kael_status probe_one_device(int32_t* device_count, const char** reason) {
    *device_count = 1;
    *reason = NULL;
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    .struct_size = sizeof(kael_plugin),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .name = "init_fails",
    .version = "0.1.0",
    .kind = KAEL_PLUGIN_KIND_EMULATED,
    .priority = 1000,
    .device_type = "cuda",
    .build_info = "test plugin whose init fails",
    .last_error = test_plugin_last_error,
    .init = failing_init,
    .probe = probe_one_device,
    TEST_PLUGIN_DEVICE_SLOTS,
};

KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t core_abi_major,
                                                        uint32_t core_abi_minor) {
    (void)core_abi_major;
    (void)core_abi_minor;
    return &table;
}
