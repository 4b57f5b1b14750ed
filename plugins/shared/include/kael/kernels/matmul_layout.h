#pragma once
// How a matmul slot's operands lie in memory, for the libraries that take leading dimensions
// (BLAS, cuBLAS, cuBLASLt): each operand is a row-major matrix of stored_rows x leading.
#include <cstdint>

#include "kael/plugin_api.h"

namespace kael::kernels {

struct StoredMatrix {
    std::int64_t stored_rows;  // rows as stored: the logical ones, or columns when transposed
    std::int64_t leading;      // elements from one stored row to the next
};

// a is rows x inner, stored inner x rows when a_transposed.
inline StoredMatrix stored_a(const kael_matmul_sizes& s) {
    return s.a_transposed != 0 ? StoredMatrix{s.inner, s.rows} : StoredMatrix{s.rows, s.inner};
}

// b is inner x columns, stored columns x inner when b_transposed.
inline StoredMatrix stored_b(const kael_matmul_sizes& s) {
    return s.b_transposed != 0 ? StoredMatrix{s.columns, s.inner}
                               : StoredMatrix{s.inner, s.columns};
}

}  // namespace kael::kernels
