// The cpu plugin's convolution and pooling extensions: kael_cpu_onednn.so (convolution_onednn.cpp,
// built when oneDNN was found) opened beside this plugin at the first request. Its calls are passed
// through so that a failure's message reaches this plugin's last_error slot. Without the
// library (or libdnnl on the machine) the extension is absent and the core composes.
#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "cpu_kernels.h"
#include "kael/plugin_kit.h"

namespace kael::cpu {

namespace {

struct Loaded {
    const kael_convolution* inner = nullptr;
    const kael_pooling* pooling = nullptr;
    const char* (*inner_error)() = nullptr;
    std::string why_not;  // for kael-info when absent
};

// The folder this plugin was loaded from (the library lies beside it).
std::string own_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&own_folder), &info) == 0 ||
        info.dli_fname == nullptr) {
        return ".";
    }
    const std::string path = info.dli_fname;
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

Loaded load() {
    Loaded loaded;
    const std::string path = own_folder() + "/kael_cpu_onednn.so";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* error = dlerror();
        loaded.why_not = error != nullptr ? error : path;
        return loaded;
    }
    using Table = const kael_convolution* (*)();
    const auto table = reinterpret_cast<Table>(dlsym(library, "kael_cpu_onednn_table"));
    loaded.inner_error =
        reinterpret_cast<const char* (*)()>(dlsym(library, "kael_cpu_onednn_last_error"));
    if (table == nullptr || loaded.inner_error == nullptr) {
        loaded.why_not = path + " lacks its entries";
        return loaded;  // never dlclosed, as the BLAS
    }
    loaded.inner = table();
    using Pooling = const kael_pooling* (*)();
    if (const auto pooling = reinterpret_cast<Pooling>(dlsym(library, "kael_cpu_onednn_pooling"))) {
        loaded.pooling = pooling();
    }
    return loaded;
}

const Loaded& loaded() {
    static const Loaded once = load();
    return once;
}

kael_status passed(kael_status status) {
    return status == KAEL_STATUS_OK ? status : plugin::fail(status, loaded().inner_error());
}

kael_status forward(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                    const void* input, const void* weight, const void* bias, void* output) {
    return passed(loaded().inner->forward(device, dtype, geometry, input, weight, bias, output));
}

kael_status backward_input(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                           const void* grad_output, const void* weight, void* grad_input) {
    return passed(
        loaded().inner->backward_input(device, dtype, geometry, grad_output, weight, grad_input));
}

kael_status backward_weight(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                            const void* grad_output, const void* input, void* grad_weight,
                            void* grad_bias) {
    return passed(loaded().inner->backward_weight(device, dtype, geometry, grad_output, input,
                                                  grad_weight, grad_bias));
}

int64_t pool_workspace_bytes(int32_t device, kael_dtype dtype, const kael_pool_geometry* geometry) {
    return loaded().pooling->workspace_bytes(device, dtype, geometry);
}

kael_status pool_forward(int32_t device, kael_dtype dtype, const kael_pool_geometry* geometry,
                         const void* input, void* output, void* workspace) {
    return passed(loaded().pooling->forward(device, dtype, geometry, input, output, workspace));
}

kael_status pool_backward(int32_t device, kael_dtype dtype, const kael_pool_geometry* geometry,
                          const void* grad_output, const void* workspace, void* grad_input) {
    return passed(
        loaded().pooling->backward(device, dtype, geometry, grad_output, workspace, grad_input));
}

}  // namespace

std::string convolution_description() {
    const std::string path = own_folder() + "/kael_cpu_onednn.so";
    if (access(path.c_str(), R_OK) != 0) {
        return "composed by the core (no kael_cpu_onednn.so: built without libdnnl-dev)";
    }
    return "oneDNN through kael_cpu_onednn.so, opened at the first convolution or pooling";
}

const kael_pooling* pooling() {
    if (loaded().pooling == nullptr) {
        return nullptr;
    }
    static const kael_pooling table = {sizeof(kael_pooling), loaded().pooling->library,
                                       pool_workspace_bytes, pool_forward, pool_backward};
    return &table;
}

const kael_convolution* convolution() {
    if (loaded().inner == nullptr) {
        return nullptr;
    }
    static const kael_convolution table = {sizeof(kael_convolution), loaded().inner->library,
                                           forward, backward_input, backward_weight};
    return &table;
}

}  // namespace kael::cpu
