#include <cstdint>
#include <cstring>
#include <string>

#include "emulated_kernels.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/pooling.h"
#include "kael/kernels/tasks/channels.h"
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

// The model kernels, and pooling, the recurrent cells and per-channel statistics on the shared
// tasks.
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
