#include "kael/tensor_iterator.h"

#include <algorithm>

namespace kael {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
    const std::size_t rank = std::max(a.size(), b.size());
    Shape result(rank, 1);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1) {
            throw ValueError(std::string(op) + ": shapes " + to_string(a) + " and " +
                             to_string(b) + " cannot be broadcast together");
        }
        result[i] = da == 1 ? db : da;
    }
    return result;
}

namespace {

// Byte stride of input along out's dim d once broadcast to out's shape (expand's rule: 0 for a
// new or a size-1 dim), or throws as expand would.
std::int64_t broadcast_stride(const Tensor& input, const Shape& out_shape, std::size_t d) {
    const std::size_t lead = out_shape.size() - input.shape().size();
    if (d < lead) {
        return 0;
    }
    const std::int64_t have = input.shape()[d - lead];
    if (have == out_shape[d]) {
        return input.strides()[d - lead] * itemsize(input.dtype());
    }
    if (have != 1) {
        throw ValueError("expand: cannot expand shape " + to_string(input.shape()) + " to " +
                         to_string(out_shape));
    }
    return 0;
}

// Non-trivial dimensions of out = f(inputs...) outermost first in out's memory order (its strides
// descending; a contiguous out keeps logical order), neighbours merged where every operand allows
// it, written into layout (up to KAEL_MAX_DIMS of them); returns how many there are. A result laid
// out as its transposed input (preserve_format) so walks memory in order, as one run. One pass
// without heap allocation: every elementwise call builds its layout here.
std::int64_t merge_dims(const Tensor& out, std::span<const Tensor> inputs,
                        kael_element_layout* layout) {
    const int operands = static_cast<int>(inputs.size()) + 1;
    if (operands > KAEL_MAX_OPERANDS) {
        throw ValueError("element layout: " + std::to_string(operands) +
                         " operands exceed the limit of " + std::to_string(KAEL_MAX_OPERANDS));
    }
    const Shape& shape = out.shape();
    for (const Tensor& input : inputs) {
        if (input.shape().size() > shape.size()) {
            throw ValueError("expand: cannot expand shape " + to_string(input.shape()) + " to " +
                             to_string(shape));
        }
    }
    std::size_t order[kMaxRank];
    for (std::size_t d = 0; d < shape.size(); ++d) {
        order[d] = d;
    }
    if (!out.is_contiguous()) {  // a stable insertion sort: ranks are small
        for (std::size_t k = 1; k < shape.size(); ++k) {
            const std::size_t d = order[k];
            std::size_t j = k;
            for (; j > 0 && out.strides()[order[j - 1]] < out.strides()[d]; --j) {
                order[j] = order[j - 1];
            }
            order[j] = d;
        }
    }
    std::int64_t last_size = 0;
    std::int64_t last_strides[KAEL_MAX_OPERANDS] = {};
    std::int64_t dims = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const std::size_t d = order[k];
        if (shape[d] == 1) {
            continue;
        }
        std::int64_t strides[KAEL_MAX_OPERANDS];
        strides[0] = out.strides()[d] * itemsize(out.dtype());
        for (int op = 1; op < operands; ++op) {
            strides[op] = broadcast_stride(inputs[op - 1], shape, d);
        }
        bool can_merge = dims > 0;
        for (int op = 0; op < operands && can_merge; ++op) {
            can_merge = last_strides[op] == shape[d] * strides[op];
        }
        if (can_merge) {
            last_size *= shape[d];
        } else {
            last_size = shape[d];
            ++dims;
        }
        for (int op = 0; op < operands; ++op) {
            last_strides[op] = strides[op];
        }
        if (layout != nullptr && dims <= KAEL_MAX_DIMS) {
            layout->shape[dims - 1] = last_size;
            for (int op = 0; op < operands; ++op) {
                layout->strides[op][dims - 1] = strides[op];
            }
        }
    }
    return dims;
}

}  // namespace

std::int64_t element_layout_dims(const Tensor& out, std::span<const Tensor> inputs) {
    if (out.numel() == 0) {
        return 1;
    }
    return merge_dims(out, inputs, nullptr);
}

kael_element_layout element_layout(const Tensor& out, std::span<const Tensor> inputs) {
    kael_element_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.operands = static_cast<std::int32_t>(inputs.size()) + 1;
    layout.count = out.numel();
    if (layout.count == 0) {
        if (layout.operands > KAEL_MAX_OPERANDS) {
            throw ValueError("element layout: " + std::to_string(layout.operands) +
                             " operands exceed the limit of " + std::to_string(KAEL_MAX_OPERANDS));
        }
        layout.dims = 1;
    } else {
        const std::int64_t dims = merge_dims(out, inputs, &layout);
        if (dims > KAEL_MAX_DIMS) {
            throw ValueError("element layout: " + std::to_string(dims) +
                             " dimensions after merging exceed the limit of " +
                             std::to_string(KAEL_MAX_DIMS) + " (shape " + to_string(out.shape()) +
                             ")");
        }
        layout.dims = static_cast<std::int32_t>(dims);
    }
    layout.base[0] = out.device_data();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        layout.base[i + 1] = inputs[i].device_data();
    }
    return layout;
}

kael_index_layout index_layout(const Tensor& data, std::int64_t axis, const Tensor& index,
                               const Tensor& source_or_out) {
    const std::int64_t dims = index.dim();
    if (dims > KAEL_MAX_DIMS) {
        throw ValueError("index layout: index tensor has " + std::to_string(dims) +
                         " dimensions, more than " + std::to_string(KAEL_MAX_DIMS));
    }
    kael_index_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.dims = static_cast<std::int32_t>(std::max<std::int64_t>(dims, 1));
    layout.axis = static_cast<std::int32_t>(axis);
    layout.count = index.numel();
    layout.axis_size = data.dim() == 0 ? 1 : data.shape()[axis];
    if (dims == 0) {
        layout.shape[0] = 1;
        return layout;
    }
    for (std::int64_t d = 0; d < dims; ++d) {
        layout.shape[d] = index.shape()[d];
        layout.data_strides[d] = data.strides()[d];
        layout.index_strides[d] = index.strides()[d];
        layout.source_strides[d] = source_or_out.strides()[d];
    }
    return layout;
}

}  // namespace kael
