// A misbehaving plugin: probe() lets a C++ exception escape across the C ABI, which the rules
// forbid. The core must catch it rather than terminate.
#include <stdexcept>

#include "test_plugin_support.h"

namespace {

kael_status throwing_probe(int32_t*, const char**) { throw std::runtime_error("boom from probe"); }

kael_plugin make_table() {
    kael_plugin table{};
    table.struct_size = sizeof(kael_plugin);
    table.abi_major = KAEL_ABI_MAJOR;
    table.abi_minor = KAEL_ABI_MINOR;
    table.name = "throws";
    table.version = "0.1.0";
    table.kind = KAEL_PLUGIN_KIND_EMULATED;
    table.priority = 1000;
    table.device_type = "cuda";
    table.build_info = "test plugin whose probe throws";
    table.last_error = test_plugin_last_error;
    table.probe = throwing_probe;
    table.device_properties = test_device_properties;
    table.allocate = test_allocate;
    table.release = test_release;
    table.copy_to_device = test_copy_to_device;
    table.copy_to_host = test_copy_to_host;
    table.copy_within_device = test_copy_within_device;
    table.synchronize = test_synchronize;
    return table;
}

}  // namespace

extern "C" KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t, uint32_t) {
    static const kael_plugin table = make_table();
    return &table;
}
