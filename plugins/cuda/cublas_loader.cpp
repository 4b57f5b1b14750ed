#include "cublas_loader.h"

#include <cublas_v2.h>  // types and enums only: every function comes from dlsym
#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "cuda_context.h"
#include "kael/kernels/matmul_layout.h"

namespace kael::cuda {
namespace {

using CreateFunction = cublasStatus_t (*)(cublasHandle_t*);
using SetStreamFunction = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using StatusStringFunction = const char* (*)(cublasStatus_t);
template <typename T>
using GemmFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const T*, const T*, int, const T*, int, const T*,
                                        T*, int);
template <typename T>
using StridedGemmFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                               int, int, int, const T*, const T*, int, long long,
                                               const T*, int, long long, const T*, T*, int,
                                               long long, int);

struct Cublas {
    std::string unavailable;  // "" once every function below resolved
    CreateFunction create = nullptr;
    SetStreamFunction set_stream = nullptr;
    StatusStringFunction status_string = nullptr;  // optional
    GemmFunction<float> sgemm = nullptr;
    GemmFunction<double> dgemm = nullptr;
    StridedGemmFunction<float> sgemm_strided = nullptr;
    StridedGemmFunction<double> dgemm_strided = nullptr;
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
    resolve(library, "cublasSgemm_v2", cublas.sgemm, missing);
    resolve(library, "cublasDgemm_v2", cublas.dgemm, missing);
    resolve(library, "cublasSgemmStridedBatched", cublas.sgemm_strided, missing);
    resolve(library, "cublasDgemmStridedBatched", cublas.dgemm_strided, missing);
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
template <typename T>
void multiply(GemmFunction<T> gemm, StridedGemmFunction<T> strided, const void* a, const void* b,
              void* out, const kael_matmul_sizes& s, bool accumulate) {
    const T one{1};
    const T beta{accumulate ? T{1} : T{0}};
    const auto columns = static_cast<int>(s.columns);
    const auto rows = static_cast<int>(s.rows);
    const auto inner = static_cast<int>(s.inner);
    const cublasOperation_t b_operation = s.b_transposed != 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t a_operation = s.a_transposed != 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
    const auto b_leading = static_cast<int>(kernels::stored_b(s).leading);
    const auto a_leading = static_cast<int>(kernels::stored_a(s).leading);
    const auto* a_typed = static_cast<const T*>(a);
    const auto* b_typed = static_cast<const T*>(b);
    auto* out_typed = static_cast<T*>(out);
    cublasHandle_t handle = handle_for_current_device();
    if (s.batches == 1) {
        KAEL_CUBLAS_CHECK(gemm(handle, b_operation, a_operation, columns, rows, inner, &one,
                               b_typed, b_leading, a_typed, a_leading, &beta, out_typed, columns));
        return;
    }
    // Batch stride 0 hands every batch the same matrix, which cuBLAS reads without copying.
    KAEL_CUBLAS_CHECK(strided(handle, b_operation, a_operation, columns, rows, inner, &one, b_typed,
                              b_leading, s.b_batch_stride, a_typed, a_leading, s.a_batch_stride,
                              &beta, out_typed, columns, static_cast<long long>(s.rows) * s.columns,
                              static_cast<int>(s.batches)));
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
    return (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64) && s.rows <= INT_MAX &&
           s.columns <= INT_MAX && s.inner <= INT_MAX && s.batches <= INT_MAX;
}

void cublas_matmul(kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes& sizes, bool accumulate) {
    const Cublas& library = cublas();
    if (dtype == KAEL_DTYPE_F32) {
        multiply<float>(library.sgemm, library.sgemm_strided, a, b, out, sizes, accumulate);
    } else {
        multiply<double>(library.dgemm, library.dgemm_strided, a, b, out, sizes, accumulate);
    }
}

}  // namespace kael::cuda
