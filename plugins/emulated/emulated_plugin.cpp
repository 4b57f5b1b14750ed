#include <cstdio>
#include <string>

#include "emulated_kernels.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_api.h"

#ifndef KAEL_EMULATED_PLUGIN_VERSION
#define KAEL_EMULATED_PLUGIN_VERSION "0.1.0"
#endif

namespace kael::emulated {
namespace {

std::string compiler_description() {
#if defined(__clang__)
    return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("GCC ") + __VERSION__;
#else
    return "unknown";
#endif
}

const std::string& build_info() {
    static const std::string info =
        "compiler=" + compiler_description() + "; tasks=host, one thread, backwards";
    return info;
}

kael_status probe(int32_t* device_count, const char** reason) {
    return plugin::guarded("emulated.probe", [&] {
        if (device_count == nullptr) {
            plugin::invalid("device_count is null");
        }
        *device_count = 1;
        if (reason != nullptr) {
            *reason = nullptr;
        }
    });
}

kael_status device_properties(int32_t device, kael_device_properties* properties) {
    return plugin::guarded("emulated.device_properties", [&] {
        check_device(device);
        if (properties == nullptr || properties->struct_size < sizeof(kael_device_properties)) {
            plugin::invalid("kael_device_properties is null or its struct_size too small");
        }
        std::snprintf(properties->name, sizeof(properties->name), "%s",
                      "kael emulated CUDA device (host memory)");
        const std::uint64_t total = memory_total();
        const std::uint64_t in_use = bytes_in_use();
        properties->memory_total = total;
        properties->memory_free = total > in_use ? total - in_use : 0;
        properties->capability_major = 0;
        properties->capability_minor = 0;
    });
}

kael_plugin make_table() {
    kael_plugin table{};
    table.struct_size = sizeof(kael_plugin);
    table.abi_major = KAEL_ABI_MAJOR;
    table.abi_minor = KAEL_ABI_MINOR;
    table.name = "emulated";
    table.version = KAEL_EMULATED_PLUGIN_VERSION;
    table.kind = KAEL_PLUGIN_KIND_EMULATED;
    table.priority = 10;  // a real GPU plugin with devices (100) outranks it
    table.device_type = "cuda";
    table.build_info = build_info().c_str();
    table.last_error = plugin::last_error;
    table.init = nullptr;
    table.probe = probe;
    table.device_properties = device_properties;
    table.shutdown = nullptr;
    KAEL_ASSIGN_PLUGIN_ENTRIES(table);
    return table;
}

}  // namespace
}  // namespace kael::emulated

extern "C" KAEL_PLUGIN_EXPORT const kael_plugin* kael_plugin_query(uint32_t /*core_abi_major*/,
                                                                   uint32_t /*core_abi_minor*/) {
    try {
        static const kael_plugin table = kael::emulated::make_table();
        return &table;
    } catch (...) {
        return nullptr;
    }
}
