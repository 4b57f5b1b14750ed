/* A working plugin whose shared-library dependency cannot be found at load time. */
#include "test_dependency.h"
#include "test_plugin_support.h"

static kael_status probe_through_dependency(int32_t* device_count, const char** reason) {
    *device_count = kael_test_dependency_device_count();
    *reason = NULL;
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    TEST_PLUGIN_COMMON_FIELDS("missing_dependency", "test plugin with an unresolvable dependency"),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .version = "0.1.0",
    .probe = probe_through_dependency,
};

TEST_PLUGIN_DEFINE_ENTRY(table)
