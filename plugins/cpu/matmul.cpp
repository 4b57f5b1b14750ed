#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>

#include "blas_loader.h"
#include "cpu_kernels.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/matmul_layout.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

constexpr int64_t kMinParallelWork = int64_t{1} << 16;

// Every output row starts as the bias (columns elements), or zeros without one.
template <typename T>
void start_rows(T* out, int64_t rows, int64_t columns, const T* bias) {
    for (int64_t row = 0; row < rows; ++row) {
        if (bias != nullptr) {
            std::copy_n(bias, columns, out + row * columns);
        } else {
            std::fill_n(out + row * columns, columns, T{0});
        }
    }
}

// Plain loops in i-k-j order (rows of b and out stream); integers wrap like every int64 kernel.
// Used for i64 and for floats when no BLAS is installed.
template <typename T>
void loop_batches(const T* a, const T* b, const T* bias, T* out, const kael_matmul_sizes& s) {
    const int64_t a_row_step = s.a_transposed != 0 ? 1 : s.inner;
    const int64_t a_inner_step = s.a_transposed != 0 ? s.rows : 1;
    const int64_t b_inner_step = s.b_transposed != 0 ? 1 : s.columns;
    const int64_t b_column_step = s.b_transposed != 0 ? s.inner : 1;
    const auto multiply_rows = [&](int64_t begin, int64_t end) {
        for (int64_t flat_row = begin; flat_row < end; ++flat_row) {
            const int64_t batch = flat_row / s.rows;
            const int64_t row = flat_row % s.rows;
            const T* a_row = a + batch * s.a_batch_stride + row * a_row_step;
            const T* b_batch = b + batch * s.b_batch_stride;
            T* out_row = out + flat_row * s.columns;
            start_rows(out_row, 1, s.columns, bias);
            for (int64_t k = 0; k < s.inner; ++k) {
                const T a_value = a_row[k * a_inner_step];
                const T* b_row = b_batch + k * b_inner_step;
                for (int64_t column = 0; column < s.columns; ++column) {
                    if constexpr (std::is_integral_v<T>) {
                        out_row[column] = kernels::wrapping_add(
                            out_row[column],
                            kernels::wrapping_multiply(a_value, b_row[column * b_column_step]));
                    } else {
                        out_row[column] += a_value * b_row[column * b_column_step];
                    }
                }
            }
        }
    };
    const int64_t total_rows = s.batches * s.rows;
    const int64_t work = total_rows * s.inner * s.columns;
    parallel_ranges(total_rows, work >= kMinParallelWork ? 0 : INT64_MAX, multiply_rows);
}

// BLAS with beta = 1 over out pre-filled with the bias, so the GEMM itself adds it.
template <typename T>
void float_batches(const T* a, const T* b, const T* bias, T* out, const kael_matmul_sizes& s) {
    const GemmFunction<T> gemm = [] {
        if constexpr (std::is_same_v<T, float>) {
            return blas().sgemm;
        } else {
            return blas().dgemm;
        }
    }();
    if (gemm == nullptr || std::max({s.rows, s.inner, s.columns}) > INT_MAX) {
        loop_batches(a, b, bias, out, s);
        return;
    }
    if (bias != nullptr) {
        parallel_ranges(s.batches * s.rows, kMinParallelWork / std::max<int64_t>(s.columns, 1),
                        [&](int64_t begin, int64_t end) {
                            start_rows(out + begin * s.columns, end - begin, s.columns, bias);
                        });
    }
    const T beta = bias != nullptr ? T{1} : T{0};
    const GemvFunction<T> gemv = [] {
        if constexpr (std::is_same_v<T, float>) {
            return blas().sgemv;
        } else {
            return blas().dgemv;
        }
    }();
    if (s.rows == 1 && gemv != nullptr) {
        // One row (a decoding step): out = op(b)^T a as a GEMV, which OpenBLAS runs at memory
        // speed where its GEMM with one row does not. a's one row is contiguous either way.
        // b as stored: columns x inner when transposed (no transpose for the GEMV), else
        // inner x columns (transposed).
        const kernels::StoredMatrix stored = kernels::stored_b(s);
        const int operation = s.b_transposed != 0 ? kCblasNoTrans : kCblasTrans;
        const auto stored_rows = static_cast<int>(stored.stored_rows);
        const auto leading = static_cast<int>(stored.leading);
        for (int64_t batch = 0; batch < s.batches; ++batch) {
            gemv(kCblasRowMajor, operation, stored_rows, leading, T{1},
                 b + batch * s.b_batch_stride, leading, a + batch * s.a_batch_stride, 1, beta,
                 out + batch * s.columns, 1);
        }
        return;
    }
    const auto rows = static_cast<int>(s.rows);
    const auto inner = static_cast<int>(s.inner);
    const auto columns = static_cast<int>(s.columns);
    const int a_op = s.a_transposed != 0 ? kCblasTrans : kCblasNoTrans;
    const int b_op = s.b_transposed != 0 ? kCblasTrans : kCblasNoTrans;
    const auto lda = static_cast<int>(kernels::stored_a(s).leading);
    const auto ldb = static_cast<int>(kernels::stored_b(s).leading);
    for (int64_t batch = 0; batch < s.batches; ++batch) {
        gemm(kCblasRowMajor, a_op, b_op, rows, columns, inner, T{1}, a + batch * s.a_batch_stride,
             lda, b + batch * s.b_batch_stride, ldb, beta, out + batch * s.rows * s.columns,
             columns);
    }
}

template <typename T>
void multiply(const void* a, const void* b, const void* bias, void* out,
              const kael_matmul_sizes& s) {
    const auto* typed_bias = static_cast<const T*>(bias);
    auto* typed_out = static_cast<T*>(out);
    if (s.inner == 0) {  // an empty sum: the bias, or zeros
        start_rows(typed_out, s.batches * s.rows, s.columns, typed_bias);
    } else if constexpr (std::is_integral_v<T>) {
        loop_batches(static_cast<const T*>(a), static_cast<const T*>(b), typed_bias, typed_out, s);
    } else {
        float_batches(static_cast<const T*>(a), static_cast<const T*>(b), typed_bias, typed_out,
                      s);
    }
}

void dispatch(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
              const kael_matmul_sizes& s) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return multiply<float>(a, b, bias, out, s);
        case KAEL_DTYPE_F64: return multiply<double>(a, b, bias, out, s);
        default: return multiply<int64_t>(a, b, bias, out, s);
    }
}

}  // namespace

kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes) {
    return plugin::guarded("cpu.matmul", [&] {
        check_device(device);
        if (kernels::check_matmul_call(dtype, a, b, out, sizes)) {
            dispatch(dtype, a, b, nullptr, out, *sizes);
        }
    });
}

kael_status matmul_bias(int32_t device, kael_dtype dtype, const void* a, const void* b,
                        const void* bias, void* out, const kael_matmul_sizes* sizes) {
    return plugin::guarded("cpu.matmul_bias", [&] {
        check_device(device);
        if (kernels::check_matmul_call(dtype, a, b, out, sizes)) {
            if (bias == nullptr) {
                plugin::invalid("matmul_bias: null bias");
            }
            dispatch(dtype, a, b, bias, out, *sizes);
        }
    });
}

}  // namespace kael::cpu
