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
    TEST_PLUGIN_COMMON_FIELDS("init_fails", "test plugin whose init fails"),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .version = "0.1.0",
    .init = failing_init,
    .probe = probe_one_device,
};

TEST_PLUGIN_DEFINE_ENTRY(table)
