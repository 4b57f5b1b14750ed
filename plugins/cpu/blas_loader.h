#pragma once
// CBLAS found at run time, so the cpu plugin loads on machines without a BLAS and uses the
// best one present: OpenBLAS, else the system's libblas.so.3, else kael's own loops.
#include <string>

namespace kael::cpu {

// Standard CBLAS enum values (cblas.h), so no BLAS header is needed to build.
enum CblasOrder { kCblasRowMajor = 101 };
enum CblasTranspose { kCblasNoTrans = 111, kCblasTrans = 112 };

template <typename T>
using GemmFunction = void (*)(int order, int a_op, int b_op, int rows, int columns, int inner,
                              T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* out,
                              int ldc);

// y = alpha op(a) x + beta y, a rows x columns (row-major, leading dimension lda).
template <typename T>
using GemvFunction = void (*)(int order, int a_op, int rows, int columns, T alpha, const T* a,
                              int lda, const T* x, int x_step, T beta, T* y, int y_step);

using SetThreadsFunction = void (*)(int);

struct Blas {
    GemmFunction<float> sgemm = nullptr;
    GemmFunction<double> dgemm = nullptr;
    GemvFunction<float> sgemv = nullptr;  // optional: products of one row use it when present
    GemvFunction<double> dgemv = nullptr;
    SetThreadsFunction set_threads = nullptr;  // openblas_set_num_threads, when there
    std::string description;  // "OpenBLAS 0.3.21 (libopenblas.so.0)" or why none was found
};

// Loaded once; KAEL_CPU_BLAS names a library to use instead, or "none" for kael's loops.
const Blas& blas();

}  // namespace kael::cpu
