#pragma once
// cuBLAS, dlopen'ed on first use so the plugin never depends on it: a machine without it still
// runs every matmul through the tile kernel.
#include <cublas_v2.h>  // types and enums only: every function comes from dlsym
#include <dlfcn.h>

#include <cstdint>
#include <string>

#include "kael/plugin_api.h"

namespace kael::cuda {

// dlopen's a CUDA library by name, then from /usr/local/cuda/lib64; null when neither loads,
// with each attempt's reason appended to why ("; " between them).
void* open_cuda_library(const std::string& file, std::string& why);

// function = dlsym(library, name); a missing name is appended to missing (", " between).
template <typename Function>
bool resolve(void* library, const char* name, Function& function, std::string& missing) {
    function = reinterpret_cast<Function>(dlsym(library, name));
    if (function == nullptr) {
        missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
    return function != nullptr;
}

// Loads cuBLAS on the first call; "" when it is usable, otherwise why it is not.
const std::string& cublas_unavailable_reason();

// Makes the current device's cuBLAS handle now when cuBLAS loads: creating it inside a graph
// recording fails (it allocates and waits), so capture_begin makes it first.
void prepare_cublas_handle();

// Whether cuBLAS can take this product: a float dtype with every size within a cuBLAS int.
bool cublas_fits(kael_dtype dtype, const kael_matmul_sizes& sizes);

// cuBLAS's names for kael's float dtypes, and the compute type of a product: f64 in f64, the
// rest accumulated in f32, f32 on TF32 tensor cores where precision allows.
cudaDataType_t cuda_data_type(kael_dtype dtype);
cublasComputeType_t compute_type(kael_dtype dtype, std::int32_t precision);

// out = a x b (row-major, per kael_matmul_sizes) on the current device, or out += a x b when
// accumulate (beta = 1); cuBLAS must be usable and the product must fit. inner == 0 and empty
// outputs are the caller's business.
void cublas_matmul(kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes& sizes, bool accumulate = false);

// The same product (accumulate off) with out in f32 (f64 for f64 operands): each product of a
// bf16/f16 batch summed in f32 and never rounded to the dtype, for a caller that adds batches.
void cublas_matmul_wide(kael_dtype dtype, const void* a, const void* b, void* out,
                        const kael_matmul_sizes& sizes);

}  // namespace kael::cuda
