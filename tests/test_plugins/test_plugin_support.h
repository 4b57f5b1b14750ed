/* Memory and runtime slots shared by the test plugins: one host-memory "device" (index 0). */
#ifndef KAEL_TEST_PLUGIN_SUPPORT_H
#define KAEL_TEST_PLUGIN_SUPPORT_H

#include "kael/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

const char* test_plugin_last_error(void);
kael_status test_plugin_fail(kael_status status, const char* message);

kael_status test_device_properties(int32_t device, kael_device_properties* properties);
kael_status test_allocate(int32_t device, int64_t bytes, void** block);
void test_release(int32_t device, void* block);
kael_status test_copy_to_device(int32_t device, void* target, const void* source, int64_t bytes);
kael_status test_copy_to_host(int32_t device, void* target, const void* source, int64_t bytes);
kael_status test_copy_within_device(int32_t device, void* target, const void* source,
                                    int64_t bytes);
kael_status test_synchronize(int32_t device);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* For designated initializers in C plugins. */
#define TEST_PLUGIN_DEVICE_SLOTS                      \
    .device_properties = test_device_properties,      \
    .allocate = test_allocate,                        \
    .release = test_release,                          \
    .copy_to_device = test_copy_to_device,            \
    .copy_to_host = test_copy_to_host,                \
    .copy_within_device = test_copy_within_device,    \
    .synchronize = test_synchronize

/* The fields the loading-failure plugins share: an emulated "cuda" plugin of priority 1000, so
 * it would outrank the real ones if the core wrongly kept it, with the shared device slots. */
#define TEST_PLUGIN_COMMON_FIELDS(plugin_name, description) \
    .struct_size = sizeof(kael_plugin),                    \
    .name = plugin_name,                                   \
    .kind = KAEL_PLUGIN_KIND_EMULATED,                     \
    .priority = 1000,                                      \
    .device_type = "cuda",                                 \
    .build_info = description,                             \
    .last_error = test_plugin_last_error,                  \
    TEST_PLUGIN_DEVICE_SLOTS

/* The entry point that hands the core `table`, whatever ABI the core has. */
#define TEST_PLUGIN_DEFINE_ENTRY(table)                                                      \
    KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t core_abi_major,         \
                                                            uint32_t core_abi_minor) {       \
        (void)core_abi_major;                                                                \
        (void)core_abi_minor;                                                                \
        return &(table);                                                                     \
    }

#endif /* KAEL_TEST_PLUGIN_SUPPORT_H */
