#pragma once
// cuDNN, dlopen'ed on first use as cuBLAS is (cublas_loader.h), so the plugin never depends on
// it: its functions as pointers resolved by name, a handle per device, and checked calls. Only
// compiled where cudnn.h was found (KAEL_CUDA_CUDNN_HEADER).
#include <cudnn.h>  // types and enums only: every function comes from dlsym

#include <string>

namespace kael::cuda {

// clang-format off
#define KAEL_CUDNN_FUNCTIONS(X)                                                            \
    X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnCreate) X(cudnnSetStream)             \
    X(cudnnCreateTensorDescriptor) X(cudnnSetTensorNdDescriptor)                           \
    X(cudnnCreateFilterDescriptor) X(cudnnSetFilterNdDescriptor)                           \
    X(cudnnCreateConvolutionDescriptor) X(cudnnSetConvolutionNdDescriptor)                 \
    X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType)                        \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionForwardWorkspaceSize)   \
    X(cudnnConvolutionForward) X(cudnnGetConvolutionBackwardDataAlgorithm_v7)              \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnConvolutionBackwardData)        \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                                       \
    X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionBackwardFilter)     \
    X(cudnnFindConvolutionForwardAlgorithm) X(cudnnFindConvolutionBackwardDataAlgorithm)    \
    X(cudnnFindConvolutionBackwardFilterAlgorithm)
// clang-format on

struct Cudnn {
#define KAEL_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
    KAEL_CUDNN_FUNCTIONS(KAEL_CUDNN_MEMBER)
#undef KAEL_CUDNN_MEMBER
    std::string unavailable;  // "" once loaded, else why not
    std::string library;      // "cuDNN 9.19.0", for kael-info
};

// Loads cuDNN at the first call. KAEL_CUDNN_LIBRARY names the file to open instead (a PyTorch
// wheel's nvidia/cudnn/lib, say); KAEL_CUDNN=0 leaves cuDNN out.
const Cudnn& cudnn();

// Throws DEVICE_ERROR naming call and cuDNN's message unless status is success.
void check_cudnn(cudnnStatus_t status, const char* call);
#define KAEL_CUDNN_CHECK(call) ::kael::cuda::check_cudnn(::kael::cuda::cudnn().call, #call)

// The current device's handle, on this thread's launch stream.
cudnnHandle_t cudnn_handle();

}  // namespace kael::cuda
