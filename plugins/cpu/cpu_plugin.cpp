#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "blas_loader.h"
#include "cpu_kernels.h"
#include "vector_math.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_api.h"

#ifndef KAEL_CPU_PLUGIN_VERSION
#define KAEL_CPU_PLUGIN_VERSION "0.1.0"
#endif

namespace kael::cpu {
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
        "compiler=" + compiler_description() + "; blas=" + blas().description +
        "; threads=" + std::to_string(worker_count()) +
        "; vector math=libmvec " + vector_math::isa();
    return info;
}

kael_status host_threads(int32_t requested, int32_t* current) {
    return plugin::guarded("cpu.host_threads", [&] {
        if (current == nullptr || requested < 0) {
            plugin::invalid("host_threads: current is null or requested negative");
        }
        *current = requested > 0 ? set_worker_count(requested) : worker_count();
    });
}

kael_status probe(int32_t* device_count, const char** reason) {
    return plugin::guarded("cpu.probe", [&] {
        if (device_count == nullptr) {
            plugin::invalid("device_count is null");
        }
        *device_count = 1;
        if (reason != nullptr) {
            *reason = nullptr;
        }
    });
}

uint64_t pages_to_bytes(long pages) {
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) {
        return 0;
    }
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

kael_status device_properties(int32_t device, kael_device_properties* properties) {
    return plugin::guarded("cpu.device_properties", [&] {
        check_device(device);
        if (properties == nullptr || properties->struct_size < sizeof(kael_device_properties)) {
            plugin::invalid("kael_device_properties is null or its struct_size too small");
        }
        const unsigned threads = std::thread::hardware_concurrency();
        std::snprintf(properties->name, sizeof(properties->name), "host CPU (%u threads)",
                      threads == 0 ? 1U : threads);
        properties->memory_total = pages_to_bytes(sysconf(_SC_PHYS_PAGES));
        properties->memory_free = pages_to_bytes(sysconf(_SC_AVPHYS_PAGES));
        properties->capability_major = 0;
        properties->capability_minor = 0;
    });
}

kael_plugin make_table() {
    kael_plugin table{};
    table.struct_size = sizeof(kael_plugin);
    table.abi_major = KAEL_ABI_MAJOR;
    table.abi_minor = KAEL_ABI_MINOR;
    table.name = "cpu";
    table.version = KAEL_CPU_PLUGIN_VERSION;
    table.kind = KAEL_PLUGIN_KIND_CPU;
    table.priority = 0;
    table.device_type = "cpu";
    table.build_info = build_info().c_str();
    table.last_error = plugin::last_error;
    table.init = nullptr;
    table.probe = probe;
    table.device_properties = device_properties;
    table.shutdown = nullptr;
    KAEL_ASSIGN_PLUGIN_ENTRIES(table);
    table.host_threads = host_threads;
    return table;
}

}  // namespace
}  // namespace kael::cpu

extern "C" KAEL_PLUGIN_EXPORT const kael_plugin* kael_plugin_query(uint32_t /*core_abi_major*/,
                                                                   uint32_t /*core_abi_minor*/) {
    try {
        static const kael_plugin table = kael::cpu::make_table();
        return &table;
    } catch (...) {
        return nullptr;
    }
}
