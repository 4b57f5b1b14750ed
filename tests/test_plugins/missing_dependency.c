/* A working plugin whose shared-library dependency cannot be found at load time. */
#include "test_dependency.h"
#include "test_plugin_support.h"

static kael_status probe_through_dependency(int32_t* device_count, const char** reason) {
    *device_count = kael_test_dependency_device_count();
    *reason = NULL;
    return KAEL_STATUS_OK;
}

static const kael_plugin table = {
    .struct_size = sizeof(kael_plugin),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .name = "missing_dependency",
    .version = "0.1.0",
    .kind = KAEL_PLUGIN_KIND_EMULATED,
    .priority = 1000,
    .device_type = "cuda",
    .build_info = "test plugin with an unresolvable dependency",
    .last_error = test_plugin_last_error,
    .probe = probe_through_dependency,
    TEST_PLUGIN_DEVICE_SLOTS,
};

KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t core_abi_major,
                                                        uint32_t core_abi_minor) {
    (void)core_abi_major;
    (void)core_abi_minor;
    return &table;
}
