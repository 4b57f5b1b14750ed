#include "cublas_loader.h"

#include <cublas_v2.h>  // types and enums only: every function comes from dlsym
#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "cuda_context.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/matmul_layout.h"

namespace kael::cuda {
namespace {

using CreateFunction = cublasStatus_t (*)(cublasHandle_t*);
using SetStreamFunction = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using SetMathModeFunction = cublasStatus_t (*)(cublasHandle_t, cublasMath_t);
using StatusStringFunction = const char* (*)(cublasStatus_t);
// cublasGemmEx and cublasGemmStridedBatchedEx (C++ overloads them, so decltype cannot name them).
using GemmFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const void*, const void*, cudaDataType_t, int,
                                        const void*, cudaDataType_t, int, const void*, void*,
                                        cudaDataType_t, int, cublasComputeType_t, cublasGemmAlgo_t);
using StridedGemmFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                               cublasOperation_t, int, int, int, const void*,
                                               const void*, cudaDataType_t, int, long long,
                                               const void*, cudaDataType_t, int, long long,
                                               const void*, void*, cudaDataType_t, int, long long,
                                               int, cublasComputeType_t, cublasGemmAlgo_t);

struct Cublas {
    std::string unavailable;  // "" once every function below resolved
    CreateFunction create = nullptr;
    SetStreamFunction set_stream = nullptr;
    SetMathModeFunction set_math_mode = nullptr;
    StatusStringFunction status_string = nullptr;  // optional
    // The typed *Ex forms serve every float dtype (TF32 and bf16/f16 through the compute type).
    GemmFunction gemm = nullptr;
    StridedGemmFunction gemm_strided = nullptr;
};

Cublas load() {
    Cublas cublas;
    const std::string file = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* library = open_cuda_library(file, cublas.unavailable);
    if (library == nullptr) {
        return cublas;
    }
    std::string missing;
    resolve(library, "cublasCreate_v2", cublas.create, missing);
    resolve(library, "cublasSetStream_v2", cublas.set_stream, missing);
    resolve(library, "cublasSetMathMode", cublas.set_math_mode, missing);
    resolve(library, "cublasGemmEx", cublas.gemm, missing);
    resolve(library, "cublasGemmStridedBatchedEx", cublas.gemm_strided, missing);
    cublas.status_string =
        reinterpret_cast<StatusStringFunction>(dlsym(library, "cublasGetStatusString"));
    // Never dlclosed, like the plugin itself: handles made from it live until exit.
    cublas.unavailable = missing.empty() ? "" : file + " lacks " + missing;
    return cublas;
}

const Cublas& cublas() {
    static const Cublas loaded = load();
    return loaded;
}

void check(cublasStatus_t status, const char* call, int line) {
    if (status == CUBLAS_STATUS_SUCCESS) {
        return;
    }
    const char* text = cublas().status_string != nullptr ? cublas().status_string(status) : nullptr;
    throw plugin::StatusError(
        status == CUBLAS_STATUS_ALLOC_FAILED ? KAEL_STATUS_OUT_OF_MEMORY : KAEL_STATUS_DEVICE_ERROR,
        std::string("cuBLAS error at cublas_loader.cpp:") + std::to_string(line) + ": " + call +
            " failed with " + (text != nullptr ? text : "status " + std::to_string(status)));
}

#define KAEL_CUBLAS_CHECK(call) check((call), #call, __LINE__)

// One handle per device, on the stream every kael kernel of this thread uses (launch_stream:
// the legacy default stream, or a graph's capture stream); it is moved only when that changes.
// Handles are never destroyed: at exit cuBLAS's own runtime may already be gone.
cublasHandle_t handle_for_current_device() {
    struct Held {
        cublasHandle_t handle = nullptr;
        cudaStream_t stream = nullptr;
    };
    static std::mutex mutex;
    static std::map<std::int32_t, Held> handles;
    const std::lock_guard lock(mutex);
    auto found = handles.find(current_device());
    if (found == handles.end()) {
        Held held;
        KAEL_CUBLAS_CHECK(cublas().create(&held.handle));
        KAEL_CUBLAS_CHECK(cublas().set_stream(held.handle, nullptr));
        // bf16/f16 products sum split-K parts in f32, never in the output dtype (an 8x16x4
        // bf16 product was 1.4 half-steps off on an H100); TF32 stays chosen per call.
        constexpr auto kMath = static_cast<cublasMath_t>(
            CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
        KAEL_CUBLAS_CHECK(cublas().set_math_mode(held.handle, kMath));
        found = handles.emplace(current_device(), held).first;
    }
    if (found->second.stream != launch_stream()) {
        KAEL_CUBLAS_CHECK(cublas().set_stream(found->second.handle, launch_stream()));
        found->second.stream = launch_stream();
    }
    return found->second.handle;
}

// Row-major out = op(a) op(b) is column-major out^T = op(b)^T op(a)^T: the same bytes, so b goes
// first and neither operand is copied. Stored a is rows x inner (inner x rows when transposed).
// Scales are f64 for f64 products and f32 otherwise (bf16/f16 accumulate in f32).
void multiply(kael_dtype dtype, const void* a, const void* b, void* out, const kael_matmul_sizes& s,
              bool accumulate, kael_dtype out_dtype) {
    const Cublas& library = cublas();
    const bool f64 = dtype == KAEL_DTYPE_F64;
    const double one64 = 1;
    const double beta64 = accumulate ? 1 : 0;
    const float one32 = 1;
    const float beta32 = accumulate ? 1 : 0;
    const void* one = f64 ? static_cast<const void*>(&one64) : &one32;
    const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
    const cudaDataType_t type = cuda_data_type(dtype);
    const cudaDataType_t out_type = cuda_data_type(out_dtype);
    const cublasComputeType_t compute = compute_type(dtype, kernels::matmul_precision(s));
    const auto columns = static_cast<int>(s.columns);
    const auto rows = static_cast<int>(s.rows);
    const auto inner = static_cast<int>(s.inner);
    const cublasOperation_t b_operation = s.b_transposed != 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t a_operation = s.a_transposed != 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
    const auto b_leading = static_cast<int>(kernels::stored_b(s).leading);
    const auto a_leading = static_cast<int>(kernels::stored_a(s).leading);
    cublasHandle_t handle = handle_for_current_device();
    if (s.batches == 1) {
        KAEL_CUBLAS_CHECK(library.gemm(handle, b_operation, a_operation, columns, rows, inner, one,
                                       b, type, b_leading, a, type, a_leading, beta, out, out_type,
                                       columns, compute, CUBLAS_GEMM_DEFAULT));
        return;
    }
    // Batch stride 0 hands every batch the same matrix, which cuBLAS reads without copying.
    KAEL_CUBLAS_CHECK(library.gemm_strided(
        handle, b_operation, a_operation, columns, rows, inner, one, b, type, b_leading,
        s.b_batch_stride, a, type, a_leading, s.a_batch_stride, beta, out, out_type, columns,
        static_cast<long long>(s.rows) * s.columns, static_cast<int>(s.batches), compute,
        CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void* open_cuda_library(const std::string& file, std::string& why) {
    for (const std::string& candidate : {file, "/usr/local/cuda/lib64/" + file}) {
        if (void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            return library;
        }
        const char* error = dlerror();
        why += (why.empty() ? "" : "; ") +
               std::string(error != nullptr ? error : candidate + ": not loadable");
    }
    return nullptr;
}

void prepare_cublas_handle() {
    if (cublas_unavailable_reason().empty()) {
        static_cast<void>(handle_for_current_device());
    }
}

const std::string& cublas_unavailable_reason() {
    return cublas().unavailable;
}

bool cublas_fits(kael_dtype dtype, const kael_matmul_sizes& s) {
    return dtype != KAEL_DTYPE_I64 && dtype != KAEL_DTYPE_BOOL && s.rows <= INT_MAX &&
           s.columns <= INT_MAX && s.inner <= INT_MAX && s.batches <= INT_MAX;
}

cudaDataType_t cuda_data_type(kael_dtype dtype) {
    switch (dtype) {
        case KAEL_DTYPE_F64: return CUDA_R_64F;
        case KAEL_DTYPE_BF16: return CUDA_R_16BF;
        case KAEL_DTYPE_F16: return CUDA_R_16F;
        default: return CUDA_R_32F;
    }
}

cublasComputeType_t compute_type(kael_dtype dtype, std::int32_t precision) {
    if (dtype == KAEL_DTYPE_F64) {
        return CUBLAS_COMPUTE_64F;
    }
    // "medium" may round to bf16, which TF32 (more exact) satisfies, as PyTorch does on CUDA.
    return dtype == KAEL_DTYPE_F32 && precision != KAEL_MATMUL_PRECISION_HIGHEST
               ? CUBLAS_COMPUTE_32F_FAST_TF32
               : CUBLAS_COMPUTE_32F;
}

void cublas_matmul(kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes& sizes, bool accumulate) {
    multiply(dtype, a, b, out, sizes, accumulate, dtype);
}

void cublas_matmul_wide(kael_dtype dtype, const void* a, const void* b, void* out,
                        const kael_matmul_sizes& sizes) {
    multiply(dtype, a, b, out, sizes, false,
             dtype == KAEL_DTYPE_F64 ? KAEL_DTYPE_F64 : KAEL_DTYPE_F32);
}

}  // namespace kael::cuda
