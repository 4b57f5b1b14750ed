#pragma once
// Walking the rows of a strided element layout on the GPU: the outer coordinates of a row by
// division with divisors fixed at launch (kernels::IntDivider), operand offsets in 32-bit
// arithmetic wherever every offset fits (index32_limit), else in 64-bit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kael/kernels/int_divider.h"
#include "kael/plugin_api.h"

namespace kael::cuda {

using kernels::IntDivider;

// Largest byte offset and element count an int32 layout may have. Half of INT32_MAX, so loop
// counters stepping by a grid (at most 2^27 past the end) cannot overflow either. Lowered by
// KAEL_CUDA_INDEX32_LIMIT (bytes), which lets the conformance suite reach the 64-bit kernels.
inline std::int64_t index32_limit() {
    static const std::int64_t limit = [] {
        const char* text = std::getenv("KAEL_CUDA_INDEX32_LIMIT");
        const std::int64_t fallback = std::int64_t{1} << 30;
        return text != nullptr && *text != '\0' ? std::min<std::int64_t>(fallback, std::atoll(text))
                                                : fallback;
    }();
    return limit;
}

// Whether every operand offset and the element count stay within index32_limit().
inline bool fits_index32(const kael_element_layout& layout) {
    const std::int64_t limit = index32_limit();
    if (layout.count > limit) {
        return false;
    }
    for (int operand = 0; operand < layout.operands; ++operand) {
        std::int64_t reach = 0;
        for (int dim = 0; dim < layout.dims; ++dim) {
            const std::int64_t stride = layout.strides[operand][dim];
            reach += (layout.shape[dim] - 1) * (stride < 0 ? -stride : stride);
        }
        if (reach > limit) {
            return false;
        }
    }
    return true;
}

// Rows of the layout (every dimension but the innermost) and their operand offsets in Index.
template <typename Index>
struct RowWalk {
    using Unsigned = std::make_unsigned_t<Index>;

    int outer_dims = 0;
    std::int64_t rows = 1;
    Index columns = 1;
    IntDivider<Unsigned> sizes[KAEL_MAX_DIMS];
    Index outer_strides[KAEL_MAX_OPERANDS][KAEL_MAX_DIMS] = {};
    Index inner_strides[KAEL_MAX_OPERANDS] = {};
    std::byte* base[KAEL_MAX_OPERANDS] = {};

    // A 0-d layout is one row of one column.
    explicit RowWalk(const kael_element_layout& layout) {
        const int dims = layout.dims;
        if (dims > 0) {
            outer_dims = dims - 1;
            columns = static_cast<Index>(layout.shape[dims - 1]);
            rows = layout.count / layout.shape[dims - 1];
        }
        for (int dim = 0; dim < outer_dims; ++dim) {
            sizes[dim] = IntDivider<Unsigned>(static_cast<Unsigned>(layout.shape[dim]));
        }
        for (int operand = 0; operand < layout.operands; ++operand) {
            for (int dim = 0; dim < outer_dims; ++dim) {
                outer_strides[operand][dim] = static_cast<Index>(layout.strides[operand][dim]);
            }
            inner_strides[operand] =
                dims > 0 ? static_cast<Index>(layout.strides[operand][dims - 1]) : Index{0};
            base[operand] = static_cast<std::byte*>(layout.base[operand]);
        }
    }

    // Addresses of the first element of `row` for the kOperands operands.
    template <int kOperands>
    __device__ void row_pointers(std::int64_t row, std::byte** pointers) const {
        Index offsets[kOperands] = {};
        auto remaining = static_cast<Unsigned>(row);
        for (int dim = outer_dims - 1; dim >= 0; --dim) {
            const Unsigned quotient = sizes[dim].divide(remaining);
            const auto position = static_cast<Index>(remaining - quotient * sizes[dim].divisor);
            remaining = quotient;
#pragma unroll
            for (int operand = 0; operand < kOperands; ++operand) {
                offsets[operand] += position * outer_strides[operand][dim];
            }
        }
#pragma unroll
        for (int operand = 0; operand < kOperands; ++operand) {
            pointers[operand] = base[operand] + offsets[operand];
        }
    }
};

}  // namespace kael::cuda
