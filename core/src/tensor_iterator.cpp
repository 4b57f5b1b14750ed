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

struct MergedDims {
    std::vector<std::int64_t> sizes;
    std::vector<std::vector<std::int64_t>> strides;  // per operand, in bytes
};

// Non-trivial dimensions outermost first, neighbours merged where every operand allows it.
MergedDims merge_dims(const std::vector<Tensor>& views) {
    const int operands = static_cast<int>(views.size());
    const Shape& shape = views.front().shape();
    std::vector<std::int64_t> sizes;
    std::vector<std::vector<std::int64_t>> strides(operands);
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) {
            continue;
        }
        sizes.push_back(shape[d]);
        for (int op = 0; op < operands; ++op) {
            strides[op].push_back(views[op].strides()[d] * itemsize(views[op].dtype()));
        }
    }
    std::vector<std::int64_t> merged_sizes;
    std::vector<std::vector<std::int64_t>> merged(operands);
    for (std::size_t d = 0; d < sizes.size(); ++d) {
        bool can_merge = !merged_sizes.empty();
        for (int op = 0; op < operands && can_merge; ++op) {
            can_merge = merged[op].back() == sizes[d] * strides[op][d];
        }
        if (can_merge) {
            merged_sizes.back() *= sizes[d];
            for (int op = 0; op < operands; ++op) {
                merged[op].back() = strides[op][d];
            }
        } else {
            merged_sizes.push_back(sizes[d]);
            for (int op = 0; op < operands; ++op) {
                merged[op].push_back(strides[op][d]);
            }
        }
    }
    return {std::move(merged_sizes), std::move(merged)};
}

std::vector<Tensor> operand_views(const Tensor& out, const std::vector<Tensor>& inputs) {
    const int operands = static_cast<int>(inputs.size()) + 1;
    if (operands > KAEL_MAX_OPERANDS) {
        throw ValueError("element layout: " + std::to_string(operands) +
                         " operands exceed the limit of " + std::to_string(KAEL_MAX_OPERANDS));
    }
    std::vector<Tensor> views{out};
    for (const Tensor& input : inputs) {
        views.push_back(input.shape() == out.shape() ? input : input.expand(out.shape()));
    }
    return views;
}

}  // namespace

std::int64_t element_layout_dims(const Tensor& out, const std::vector<Tensor>& inputs) {
    if (out.numel() == 0) {
        return 1;
    }
    return static_cast<std::int64_t>(merge_dims(operand_views(out, inputs)).sizes.size());
}

kael_element_layout element_layout(const Tensor& out, const std::vector<Tensor>& inputs) {
    const std::vector<Tensor> views = operand_views(out, inputs);
    const int operands = static_cast<int>(views.size());
    kael_element_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.operands = operands;
    layout.count = out.numel();
    for (int op = 0; op < operands; ++op) {
        layout.base[op] = views[op].device_data();
    }
    if (layout.count == 0) {
        layout.dims = 1;
        layout.shape[0] = 0;
        return layout;
    }
    const MergedDims merged = merge_dims(views);
    if (merged.sizes.size() > KAEL_MAX_DIMS) {
        throw ValueError("element layout: " + std::to_string(merged.sizes.size()) +
                         " dimensions after merging exceed the limit of " +
                         std::to_string(KAEL_MAX_DIMS) + " (shape " + to_string(out.shape()) +
                         ")");
    }
    layout.dims = static_cast<std::int32_t>(merged.sizes.size());
    for (int d = 0; d < layout.dims; ++d) {
        layout.shape[d] = merged.sizes[d];
        for (int op = 0; op < operands; ++op) {
            layout.strides[op][d] = merged.strides[op][d];
        }
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
