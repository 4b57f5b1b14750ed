// A misbehaving plugin: probe() lets a C++ exception escape across the C ABI, which the rules
// forbid. The core must catch it rather than terminate.
#include <stdexcept>

#include "test_plugin_support.h"

namespace {

kael_status throwing_probe(int32_t*, const char**) { throw std::runtime_error("boom from probe"); }

const kael_plugin table = {
    .struct_size = sizeof(kael_plugin),
    .abi_major = KAEL_ABI_MAJOR,
    .abi_minor = KAEL_ABI_MINOR,
    .name = "throws",
    .version = "0.1.0",
    .kind = KAEL_PLUGIN_KIND_EMULATED,
    .priority = 1000,
    .device_type = "cuda",
    .build_info = "test plugin whose probe throws",
    .last_error = test_plugin_last_error,
    .init = nullptr,
    .probe = throwing_probe,
    TEST_PLUGIN_DEVICE_SLOTS,
};

}  // namespace

extern "C" KAEL_PLUGIN_EXPORT const kael_plugin* KAEL_PLUGIN_ENTRY(uint32_t, uint32_t) {
    return &table;
}
