#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <type_traits>

#include "blas_loader.h"
#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/channels.h"
#include "kael/kernels/tasks/recurrent.h"
#include "kael/plugin_api.h"
#include "reduce_rows_f32.h"
#include "vector_math.h"

#ifndef KAEL_CPU_PLUGIN_VERSION
#define KAEL_CPU_PLUGIN_VERSION "0.1.0"
#endif

namespace kael::cpu {
namespace {

std::string build_info() {
    return "compiler=" + plugin::compiler_description() + "; blas=" + blas().description +
           "; threads=" + std::to_string(worker_count()) + "; vector math=libmvec " +
           vector_math::isa() + "; convolutions and pooling=" + convolution_description();
}

kael_status host_threads(int32_t requested, int32_t* current) {
    return plugin::guarded("cpu.host_threads", [&] {
        if (current == nullptr || requested < 0) {
            plugin::invalid("host_threads: current is null or requested negative");
        }
        *current = requested > 0 ? set_worker_count(requested) : worker_count();
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
        const unsigned threads = std::thread::hardware_concurrency();
        const std::string name =
            "host CPU (" + std::to_string(threads == 0 ? 1U : threads) + " threads)";
        plugin::fill_device_properties(properties, name.c_str(),
                                       pages_to_bytes(sysconf(_SC_PHYS_PAGES)),
                                       pages_to_bytes(sysconf(_SC_AVPHYS_PAGES)));
    });
}

// The channel kernels' fold: f32 runs through the fold compiled for this CPU's vector width
// (reduce_rows_f32.h), the other dtypes through the shared one.
struct ChannelFold {
    template <typename S, bool kGrad>
    static void run(const S* values, const S* grads, double center, std::int64_t rows,
                    std::int64_t inner, std::int64_t stride, double* sums, double* products) {
        if constexpr (std::is_same_v<S, float>) {
            rows_f32::table().channel_fold(values, kGrad ? grads : nullptr, center, rows, inner,
                                           stride, sums, products);
        } else {
            kernels::tasks::SharedChannelFold::run<S, kGrad>(values, grads, center, rows, inner,
                                                             stride, sums, products);
        }
    }
};

namespace model {
KAEL_DEFINE_MODEL_EXTENSION((void)kernels)
}  // namespace model

// The model kernels, the collectives when gloo was found at build time, oneDNN's
// convolutions and pooling where its library loads, and the recurrent cells and per-channel
// statistics on the shared tasks.
const void* extension(const char* name) {
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_COLLECTIVES) == 0) {
#ifdef KAEL_CPU_HAS_GLOO
        return collectives();
#else
        return nullptr;
#endif
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_CONVOLUTION) == 0) {
        return convolution();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_POOLING) == 0) {
        return pooling();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_RECURRENT) == 0) {
        return kernels::tasks::RecurrentTasks<Launcher, &check_device>::table();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_CHANNELS) == 0) {
        return kernels::tasks::ChannelTasks<Launcher, &check_device, ChannelFold>::table();
    }
    return model::extension(name);
}

kael_plugin make_table() {
    plugin::Description description;
    description.name = "cpu";
    description.version = KAEL_CPU_PLUGIN_VERSION;
    description.kind = KAEL_PLUGIN_KIND_CPU;
    description.priority = 0;
    description.device_type = "cpu";
    description.memory_flags = KAEL_MEMORY_HOST_ADDRESSABLE;
    // fill, convert, and contiguous elementwise ops and row reductions through f32 blocks
    // (elementwise.cpp, reduce.cpp); fill and convert of the narrow integers
    description.dtype_flags = KAEL_DTYPE_FLAG_LOW_PRECISION |
                              KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE |
                              KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE | KAEL_DTYPE_FLAG_NARROW_INT;
    description.dlpack_device_type = 1;  // kDLCPU
    description.build_info = build_info();
    kael_plugin table = plugin::make_table(description);
    table.device_properties = device_properties;
    KAEL_ASSIGN_PLUGIN_ENTRIES(table);
    table.extension = extension;
    table.host_threads = host_threads;
    table.scan = scan;
    return table;
}

}  // namespace
}  // namespace kael::cpu

KAEL_PLUGIN_DEFINE_ENTRY(kael::cpu::make_table)
