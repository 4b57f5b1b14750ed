#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "emulated_kernels.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/channels.h"
#include "kael/kernels/tasks/pooling.h"
#include "kael/kernels/tasks/recurrent.h"
#include "kael/plugin_api.h"

#ifndef KAEL_EMULATED_PLUGIN_VERSION
#define KAEL_EMULATED_PLUGIN_VERSION "0.1.0"
#endif

namespace kael::emulated {
namespace {

kael_status device_properties(int32_t device, kael_device_properties* properties) {
    return plugin::guarded("emulated.device_properties", [&] {
        check_device(device);
        const std::uint64_t total = memory_total();
        const std::uint64_t in_use = bytes_in_use();
        plugin::fill_device_properties(properties, "kael emulated CUDA device (host memory)", total,
                                       total > in_use ? total - in_use : 0);
    });
}

namespace model {
KAEL_DEFINE_MODEL_EXTENSION((void)kernels)
}  // namespace model

// KAEL_EXTENSION_HOST_MEMORY: ordinary aligned host memory (there is nothing to pin here), so
// the core's pinned-memory path runs on machines without a GPU.
kael_status host_allocate(int32_t device, int64_t bytes, void** block) {
    return plugin::guarded("emulated.host_memory.allocate", [&] {
        check_device(device);
        if (block == nullptr || bytes <= 0) {
            plugin::invalid("host_memory.allocate: null block or size " + std::to_string(bytes));
        }
        constexpr int64_t kAlignment = 64;
        *block = std::aligned_alloc(kAlignment, static_cast<std::size_t>((bytes + kAlignment - 1) /
                                                                         kAlignment * kAlignment));
        if (*block == nullptr) {
            throw plugin::StatusError(KAEL_STATUS_OUT_OF_MEMORY,
                                      "cannot allocate " + std::to_string(bytes) + " host bytes");
        }
    });
}

void host_release(int32_t /*device*/, void* block) {
    std::free(block);
}

const kael_host_memory* host_memory() {
    static const kael_host_memory made = {sizeof(kael_host_memory), host_allocate, host_release};
    return &made;
}

// The model kernels, pooling, the recurrent cells and per-channel statistics on the shared
// tasks, and host memory.
const void* extension(const char* name) {
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_POOLING) == 0) {
        return kernels::tasks::PoolingTasks<Launcher, &check_device>::table();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_RECURRENT) == 0) {
        return kernels::tasks::RecurrentTasks<Launcher, &check_device>::table();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_CHANNELS) == 0) {
        return kernels::tasks::ChannelTasks<Launcher, &check_device>::table();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_HOST_MEMORY) == 0) {
        return host_memory();
    }
    return model::extension(name);
}

kael_plugin make_table() {
    plugin::Description description;
    description.name = "emulated";
    description.version = KAEL_EMULATED_PLUGIN_VERSION;
    description.kind = KAEL_PLUGIN_KIND_EMULATED;
    description.priority = 10;  // a real GPU plugin with devices (100) outranks it
    description.device_type = "cuda";
    // Host memory posing as a device's: the core must not touch it, and no DLPack consumer
    // could use it as either kind.
    description.memory_flags = 0;
    // fill, convert, matmul (the shared tile body, summing in f32) and the low-precision
    // elementwise ops, as the cuda plugin; fill and convert of the narrow integers
    description.dtype_flags = KAEL_DTYPE_FLAG_LOW_PRECISION | KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL |
                              KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE |
                              KAEL_DTYPE_FLAG_NARROW_INT;
    description.dlpack_device_type = 0;
    description.build_info =
        "compiler=" + plugin::compiler_description() + "; tasks=host, one thread, backwards";
    kael_plugin table = plugin::make_table(description);
    table.device_properties = device_properties;
    KAEL_ASSIGN_PLUGIN_ENTRIES(table);
    table.capture_begin = capture_begin;
    table.capture_end = capture_end;
    table.graph_launch = graph_launch;
    table.graph_release = graph_release;
    table.extension = extension;
    return table;
}

}  // namespace
}  // namespace kael::emulated

KAEL_PLUGIN_DEFINE_ENTRY(kael::emulated::make_table)
