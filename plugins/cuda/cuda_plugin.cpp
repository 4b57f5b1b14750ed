#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "cuda_context.h"
#include "cuda_kernels.h"
#include "graphs.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_api.h"
#include "kael/plugin_extensions.h"

#ifndef KAEL_CUDA_PLUGIN_VERSION
#define KAEL_CUDA_PLUGIN_VERSION "0.1.0"
#endif
#ifndef KAEL_NVCC_VERSION
#define KAEL_NVCC_VERSION "unknown"
#endif
#ifndef KAEL_CUDA_ARCHITECTURES
#define KAEL_CUDA_ARCHITECTURES "unknown"
#endif

namespace kael::cuda {
namespace {

// Fixed when the core loads the plugin, so cuBLAS (loaded at the first matmul) is described by
// where it is looked for; KAEL_CUDA_MATMUL=cublas turns a failed load into an error with why.
std::string build_info() {
    return std::string("compiler=nvcc ") + KAEL_NVCC_VERSION +
           "; cuda=" + std::to_string(CUDART_VERSION) +
           " (cudart static); arch=" + KAEL_CUDA_ARCHITECTURES +
           "; cublas=dlopen at first matmul (libcublas.so." +
           std::to_string(CUDART_VERSION / 1000) +
           ", else the tile kernel); convolutions=" + convolution_description();
}

kael_status probe(int32_t* device_count, const char** reason) {
    return plugin::guarded("cuda.probe", [&] {
        if (device_count == nullptr) {
            plugin::invalid("device_count is null");
        }
        *device_count = cuda::device_count(reason);
    });
}

kael_status device_properties(int32_t device, kael_device_properties* properties) {
    return plugin::guarded("cuda.device_properties", [&] {
        use_device(device);
        cudaDeviceProp device_properties{};
        KAEL_CUDA_CHECK(cudaGetDeviceProperties(&device_properties, device));
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        KAEL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (memory_pools()) {  // freed blocks the pool keeps are free for kael's next tensors
            cudaMemPool_t pool = nullptr;
            std::uint64_t reserved = 0;
            std::uint64_t used = 0;
            KAEL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
            KAEL_CUDA_CHECK(
                cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
            KAEL_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
            free_bytes += reserved > used ? reserved - used : 0;
        }
        device_properties.name[sizeof(device_properties.name) - 1] = '\0';
        plugin::fill_device_properties(properties, device_properties.name,
                                       device_properties.totalGlobalMem, free_bytes,
                                       device_properties.major, device_properties.minor);
    });
}

namespace model {
KAEL_DEFINE_MODEL_EXTENSION(kernels.matmul_epilogue = matmul_epilogue)
}  // namespace model

const kael_decoding* decoding_kernels() {
    static const kael_decoding made = {sizeof(kael_decoding), layer_norm_linear, cached_attention};
    return &made;
}

// The model kernels, NCCL's collectives (loaded at the first communicator), cuDNN's
// convolutions (loaded at the first), pooling and the recurrent cells on the shared tasks,
// per-channel statistics (channels.cu), a decoding step's fused kernels and page-locked host
// memory.
const void* extension(const char* name) {
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_COLLECTIVES) == 0) {
        return collectives();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_CONVOLUTION) == 0) {
        return convolution();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_POOLING) == 0) {
        return pooling();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_RECURRENT) == 0) {
        return recurrent();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_CHANNELS) == 0) {
        return channels();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_DECODING) == 0) {
        return decoding_kernels();
    }
    if (name != nullptr && std::strcmp(name, KAEL_EXTENSION_HOST_MEMORY) == 0) {
        return host_memory();
    }
    return model::extension(name);
}

kael_plugin make_table() {
    plugin::Description description;
    description.name = "cuda";
    description.version = KAEL_CUDA_PLUGIN_VERSION;
    description.kind = KAEL_PLUGIN_KIND_GPU;
    description.priority = 100;  // outranks the emulated plugin (10) when it has devices
    description.device_type = "cuda";
    description.memory_flags = 0;
    // fill and convert (bf16/f16 and the narrow integers); matmul through cuBLAS(Lt), the
    // low-precision elementwise ops (16-byte loads of 8 elements), the reductions (reduce.cu,
    // reduce_dims.cu: every reducer, max/min with indices) and scans (scan.cu), accumulated or
    // computed in f32 or wider
    description.dtype_flags =
        KAEL_DTYPE_FLAG_LOW_PRECISION | KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL |
        KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE | KAEL_DTYPE_FLAG_LOW_PRECISION_ATTENTION |
        KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS | KAEL_DTYPE_FLAG_LOW_PRECISION_INDEX |
        KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE | KAEL_DTYPE_FLAG_LOW_PRECISION_INDEXED |
        KAEL_DTYPE_FLAG_LOW_PRECISION_SCAN | KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS |
        KAEL_DTYPE_FLAG_NARROW_INT;
    description.dlpack_device_type = 2;  // kDLCUDA
    description.build_info = build_info();
    description.probe = probe;
    // No init (cudart is static, cuBLAS comes later) and no shutdown (the driver reclaims
    // everything; cuBLAS may be gone at exit).
    kael_plugin table = plugin::make_table(description);
    table.device_properties = device_properties;
    KAEL_ASSIGN_PLUGIN_ENTRIES(table);
    table.extension = extension;
    table.capture_begin = capture_begin;
    table.capture_end = capture_end;
    table.graph_launch = graph_launch;
    table.graph_release = graph_release;
    table.scan = scan;
    table.reduce_indexed = reduce_indexed;
    return table;
}

}  // namespace
}  // namespace kael::cuda

KAEL_PLUGIN_DEFINE_ENTRY(kael::cuda::make_table)
