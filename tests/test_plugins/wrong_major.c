/* A plugin from a future, incompatible ABI: the core must refuse it before calling anything. */
#include "test_plugin_support.h"

static kael_status probe_one_device(int32_t* device_count, const char** reason) {
    *device_count = 1;
    *reason = NULL;
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    TEST_PLUGIN_COMMON_FIELDS("wrong_major", "test plugin with the next ABI major"),
    .abi_major = KAEL_ABI_MAJOR + 1,
    .abi_minor = 3,
    .version = "9.0.0",
    .probe = probe_one_device,
};

TEST_PLUGIN_DEFINE_ENTRY(table)
