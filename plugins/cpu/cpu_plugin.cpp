#include <unistd.h>

#include <cstdint>
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

// BatchNorm's and GroupNorm's affine step on f32 runs at this CPU's vector width: the shared
// loop is compiled for the SSE2 baseline (a sixth of GroupNorm's fwd+bwd). The same operations
// in the same order (no contraction into FMAs in ISO C++), so the same bits.
template <bool kOther>
[[gnu::always_inline]] inline void affine_f32(const float* data, float a, float b,
                                              const float* other, float o, float* out,
                                              std::int64_t count) {
    for (std::int64_t j = 0; j < count; ++j) {
        const float value = data[j] * a + b;
        out[j] = kOther ? value + other[j] * o : value;
    }
}

template <bool kOther>
[[gnu::target("avx512f")]] void affine_f32_avx512(const float* data, float a, float b,
                                                  const float* other, float o, float* out,
                                                  std::int64_t count) {
    affine_f32<kOther>(data, a, b, other, o, out, count);
}

template <bool kOther>
[[gnu::target("avx2")]] void affine_f32_avx2(const float* data, float a, float b,
                                             const float* other, float o, float* out,
                                             std::int64_t count) {
    affine_f32<kOther>(data, a, b, other, o, out, count);
}

// The channel kernels' fold: f32 runs through the fold compiled for this CPU's vector width
// (reduce_rows_f32.h), the other dtypes through the shared one; likewise the affine step.
struct ChannelFold {
    template <typename S, typename C>
    static void affine(const S* data, C a, C b, const S* other, C o, S* out, std::int64_t count) {
        if constexpr (std::is_same_v<S, float>) {
            const vector_math::Isa isa = vector_math::chosen_isa();
            if (isa == vector_math::Isa::Avx512) {
                return other != nullptr
                           ? affine_f32_avx512<true>(data, a, b, other, o, out, count)
                           : affine_f32_avx512<false>(data, a, b, other, o, out, count);
            }
            if (isa == vector_math::Isa::Avx2) {
                return other != nullptr ? affine_f32_avx2<true>(data, a, b, other, o, out, count)
                                        : affine_f32_avx2<false>(data, a, b, other, o, out, count);
            }
        }
        kernels::tasks::SharedChannelFold::affine(data, a, b, other, o, out, count);
    }

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
    // (elementwise.cpp, reduce.cpp) with their last passes rounded in place (reduce_dims.cpp);
    // fill and convert of the narrow integers
    description.dtype_flags = KAEL_DTYPE_FLAG_LOW_PRECISION |
                              KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE |
                              KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE |
                              KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS | KAEL_DTYPE_FLAG_NARROW_INT;
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
