#include <cblas.h>

#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>

#include "cpu_kernels.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

constexpr int64_t kMinParallelWork = int64_t{1} << 16;

void check_sizes(const kael_matmul_sizes* sizes) {
    if (sizes == nullptr || sizes->struct_size < sizeof(kael_matmul_sizes)) {
        plugin::invalid("kael_matmul_sizes is null or its struct_size too small");
    }
    if (sizes->batches < 0 || sizes->rows < 0 || sizes->inner < 0 || sizes->columns < 0) {
        plugin::invalid("negative matmul size (batches " + std::to_string(sizes->batches) +
                        ", rows " + std::to_string(sizes->rows) + ", inner " +
                        std::to_string(sizes->inner) + ", columns " +
                        std::to_string(sizes->columns) + ")");
    }
    if (sizes->a_batch_stride < 0 || sizes->b_batch_stride < 0) {
        plugin::invalid("negative matmul batch stride");
    }
}

template <typename T>
void gemm_batches(const T* a, const T* b, T* out, const kael_matmul_sizes& s) {
    if (std::max({s.rows, s.inner, s.columns}) > INT_MAX) {
        plugin::unsupported("matmul dimension above the BLAS int range");
    }
    const auto rows = static_cast<blasint>(s.rows);
    const auto inner = static_cast<blasint>(s.inner);
    const auto columns = static_cast<blasint>(s.columns);
    const CBLAS_TRANSPOSE a_op = s.a_transposed != 0 ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE b_op = s.b_transposed != 0 ? CblasTrans : CblasNoTrans;
    const blasint lda = s.a_transposed != 0 ? rows : inner;
    const blasint ldb = s.b_transposed != 0 ? inner : columns;
    for (int64_t batch = 0; batch < s.batches; ++batch) {
        const T* a_batch = a + batch * s.a_batch_stride;
        const T* b_batch = b + batch * s.b_batch_stride;
        T* out_batch = out + batch * s.rows * s.columns;
        if constexpr (std::is_same_v<T, float>) {
            cblas_sgemm(CblasRowMajor, a_op, b_op, rows, columns, inner, 1.0F, a_batch, lda,
                        b_batch, ldb, 0.0F, out_batch, columns);
        } else {
            cblas_dgemm(CblasRowMajor, a_op, b_op, rows, columns, inner, 1.0, a_batch, lda, b_batch,
                        ldb, 0.0, out_batch, columns);
        }
    }
}

// Integer matmul wraps like every other int64 kernel; i-k-j order streams rows of b and out.
void integer_batches(const int64_t* a, const int64_t* b, int64_t* out, const kael_matmul_sizes& s) {
    const int64_t a_row_step = s.a_transposed != 0 ? 1 : s.inner;
    const int64_t a_inner_step = s.a_transposed != 0 ? s.rows : 1;
    const int64_t b_inner_step = s.b_transposed != 0 ? 1 : s.columns;
    const int64_t b_column_step = s.b_transposed != 0 ? s.inner : 1;
    const auto multiply_rows = [&](int64_t begin, int64_t end) {
        for (int64_t flat_row = begin; flat_row < end; ++flat_row) {
            const int64_t batch = flat_row / s.rows;
            const int64_t row = flat_row % s.rows;
            const int64_t* a_row = a + batch * s.a_batch_stride + row * a_row_step;
            const int64_t* b_batch = b + batch * s.b_batch_stride;
            int64_t* out_row = out + flat_row * s.columns;
            std::fill_n(out_row, s.columns, int64_t{0});
            for (int64_t k = 0; k < s.inner; ++k) {
                const int64_t a_value = a_row[k * a_inner_step];
                const int64_t* b_row = b_batch + k * b_inner_step;
                for (int64_t column = 0; column < s.columns; ++column) {
                    out_row[column] = kernels::wrapping_add(
                        out_row[column],
                        kernels::wrapping_multiply(a_value, b_row[column * b_column_step]));
                }
            }
        }
    };
    const int64_t total_rows = s.batches * s.rows;
    const int64_t work = total_rows * s.inner * s.columns;
    parallel_ranges(total_rows, work >= kMinParallelWork ? 0 : INT64_MAX, multiply_rows);
}

}  // namespace

kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes) {
    return plugin::guarded("cpu.matmul", [&] {
        check_device(device);
        check_sizes(sizes);
        if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64 && dtype != KAEL_DTYPE_I64) {
            if (dtype == KAEL_DTYPE_BOOL) {
                plugin::unsupported("matmul is not supported for dtype bool");
            }
            plugin::invalid("matmul: invalid dtype " + std::to_string(dtype));
        }
        const kael_matmul_sizes& s = *sizes;
        const int64_t out_count = s.batches * s.rows * s.columns;
        if (out_count == 0) {
            return;
        }
        if (out == nullptr) {
            plugin::invalid("matmul: out is null");
        }
        if (s.inner == 0) {
            const int64_t item = dtype == KAEL_DTYPE_F32 ? 4 : 8;
            std::fill_n(static_cast<char*>(out), out_count * item, char{0});  // 0 bits = 0 and 0.0
            return;
        }
        if (a == nullptr || b == nullptr) {
            plugin::invalid("matmul: a or b is null");
        }
        switch (dtype) {
            case KAEL_DTYPE_F32:
                gemm_batches(static_cast<const float*>(a), static_cast<const float*>(b),
                             static_cast<float*>(out), s);
                break;
            case KAEL_DTYPE_F64:
                gemm_batches(static_cast<const double*>(a), static_cast<const double*>(b),
                             static_cast<double*>(out), s);
                break;
            default:
                integer_batches(static_cast<const int64_t*>(a), static_cast<const int64_t*>(b),
                                static_cast<int64_t*>(out), s);
                break;
        }
    });
}

}  // namespace kael::cpu
