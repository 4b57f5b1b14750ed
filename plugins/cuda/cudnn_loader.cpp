// Built only where cudnn.h was found (convolution_cudnn.cpp says what happens otherwise).
#if KAEL_CUDA_CUDNN_HEADER
#include "cudnn_loader.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "cublas_loader.h"
#include "cuda_context.h"

namespace kael::cuda {

namespace {

Cudnn load() {
    Cudnn library;
    if (env_is_zero("KAEL_CUDNN")) {
        library.unavailable = "KAEL_CUDNN=0";
        return library;
    }
    const char* chosen = std::getenv("KAEL_CUDNN_LIBRARY");
    std::string why;
    void* handle =
        open_cuda_library(chosen != nullptr && *chosen != '\0' ? chosen : "libcudnn.so.9", why);
    if (handle == nullptr) {
        library.unavailable = why;
        return library;
    }
    std::string missing;
#define KAEL_CUDNN_RESOLVE(name) resolve(handle, #name, library.name, missing);
    KAEL_CUDNN_FUNCTIONS(KAEL_CUDNN_RESOLVE)
#undef KAEL_CUDNN_RESOLVE
    if (!missing.empty()) {
        library.unavailable = "libcudnn lacks " + missing;
        return library;  // never dlclosed, as cuBLAS
    }
    const std::size_t version = library.cudnnGetVersion();
    library.library = "cuDNN " + std::to_string(version / 10000) + "." +
                      std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
    return library;
}

}  // namespace

const Cudnn& cudnn() {
    static const Cudnn once = load();
    return once;
}

void check_cudnn(cudnnStatus_t status, const char* call) {
    if (status != CUDNN_STATUS_SUCCESS) {
        throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR,
                                  std::string(call) + ": " + cudnn().cudnnGetErrorString(status));
    }
}

// One handle per device, on this thread's launch stream at each call.
cudnnHandle_t cudnn_handle() {
    static std::mutex mutex;
    static std::map<std::int32_t, cudnnHandle_t> handles;
    const std::lock_guard lock(mutex);
    auto found = handles.find(current_device());
    if (found == handles.end()) {
        cudnnHandle_t made = nullptr;
        KAEL_CUDNN_CHECK(cudnnCreate(&made));
        found = handles.emplace(current_device(), made).first;
    }
    KAEL_CUDNN_CHECK(cudnnSetStream(found->second, launch_stream()));
    return found->second;
}

}  // namespace kael::cuda
#endif
