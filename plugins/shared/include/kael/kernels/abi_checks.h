#pragma once
// Validation of the flat structs a plugin receives, shared by every plugin so they reject the
// same malformed calls with the same INVALID_ARGUMENT messages.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kael/kernels/plugin_support.h"
#include "kael/plugin_api.h"

namespace kael::kernels {

inline void check_element_layout(const kael_element_layout* layout) {
    if (layout == nullptr || layout->struct_size < KAEL_ELEMENT_LAYOUT_SIZE_1_0) {
        plugin::invalid("kael_element_layout is null or its struct_size too small");
    }
    if (layout->dims < 0 || layout->dims > KAEL_MAX_DIMS) {
        plugin::invalid("layout dims " + std::to_string(layout->dims) + " outside 0.." +
                        std::to_string(KAEL_MAX_DIMS));
    }
    if (layout->operands < 1 || layout->operands > KAEL_MAX_OPERANDS) {
        plugin::invalid("layout operands " + std::to_string(layout->operands) + " outside 1.." +
                        std::to_string(KAEL_MAX_OPERANDS));
    }
    std::int64_t product = 1;
    for (int dim = 0; dim < layout->dims; ++dim) {
        if (layout->shape[dim] < 0) {
            plugin::invalid("negative layout extent " + std::to_string(layout->shape[dim]));
        }
        product *= layout->shape[dim];
    }
    if (product != layout->count) {
        plugin::invalid("layout count " + std::to_string(layout->count) +
                        " is not the product of its shape (" + std::to_string(product) + ")");
    }
    for (int operand = 0; layout->count > 0 && operand < layout->operands; ++operand) {
        if (layout->base[operand] == nullptr) {
            plugin::invalid("layout operand " + std::to_string(operand) + " is null");
        }
    }
}

// The bound of valid index values: axis_size, or no bound from a pre-1.2 core (which checked
// every index on the host before the call).
inline std::int64_t index_bound(const kael_index_layout& layout) {
    return layout.struct_size >= KAEL_SIZE_THROUGH(kael_index_layout, axis_size) ? layout.axis_size
                                                                                : INT64_MAX;
}

inline void check_index_layout(const kael_index_layout* layout, const char* entry) {
    if (layout == nullptr || layout->struct_size < KAEL_INDEX_LAYOUT_SIZE_1_0) {
        plugin::invalid(std::string(entry) + ": kael_index_layout is null or too small");
    }
    if (layout->dims < 1 || layout->dims > KAEL_MAX_DIMS) {
        plugin::invalid(std::string(entry) + ": dims " + std::to_string(layout->dims) +
                        " outside 1.." + std::to_string(KAEL_MAX_DIMS));
    }
    if (layout->axis < 0 || layout->axis >= layout->dims) {
        plugin::invalid(std::string(entry) + ": axis " + std::to_string(layout->axis) +
                        " outside 0.." + std::to_string(layout->dims - 1));
    }
    std::int64_t product = 1;
    for (int dim = 0; dim < layout->dims; ++dim) {
        if (layout->shape[dim] < 0) {
            plugin::invalid(std::string(entry) + ": negative extent");
        }
        product *= layout->shape[dim];
    }
    if (product != layout->count) {
        plugin::invalid(std::string(entry) + ": count " + std::to_string(layout->count) +
                        " is not the product of the shape (" + std::to_string(product) + ")");
    }
}

inline void check_matmul_sizes(const kael_matmul_sizes* sizes) {
    if (sizes == nullptr || sizes->struct_size < KAEL_MATMUL_SIZES_SIZE_1_0) {
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


// kael_matmul_sizes.precision, or KAEL_MATMUL_PRECISION_HIGHEST from a core older than 1.12.
inline std::int32_t matmul_precision(const kael_matmul_sizes& sizes) {
    return sizes.struct_size >= KAEL_SIZE_THROUGH(kael_matmul_sizes, precision)
               ? sizes.precision
               : KAEL_MATMUL_PRECISION_HIGHEST;
}

// Validates a whole matmul call (sizes, dtype, pointers); false when the output is empty and
// there is nothing to do.
// low_precision: the plugin multiplies bf16 and f16 itself (KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL).
inline bool check_matmul_call(kael_dtype dtype, const void* a, const void* b, const void* out,
                              const kael_matmul_sizes* sizes, bool low_precision = false) {
    check_matmul_sizes(sizes);
    if (dtype == KAEL_DTYPE_BOOL) {
        plugin::unsupported("matmul is not supported for dtype bool");
    }
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    if (low && !low_precision) {
        plugin::unsupported("matmul of bfloat16 or float16 (this plugin computes them in f32)");
    }
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64 && dtype != KAEL_DTYPE_I64 && !low) {
        plugin::invalid("matmul: invalid dtype " + std::to_string(dtype));
    }
    if (sizes->batches * sizes->rows * sizes->columns == 0) {
        return false;
    }
    if (out == nullptr || (sizes->inner > 0 && (a == nullptr || b == nullptr))) {
        plugin::invalid("matmul: null a, b or out");
    }
    return true;
}

}  // namespace kael::kernels
