// gather / scatter_add / index_select. Index bounds are checked on the host before any write.
#include "dims.h"
#include "autograd/record.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "kernel_calls.h"

namespace kael {

namespace {

// Validates shapes and index values; returns the index with negative entries wrapped.
Tensor checked_index(const Tensor& data, std::int64_t axis, const Tensor& index,
                     const Tensor* other, const char* op) {
    if (index.dtype() != DType::I64) {
        throw TypeError(std::string(op) + ": index must be i64, got " + to_string(index.dtype()));
    }
    if (index.dim() != data.dim()) {
        throw ValueError(std::string(op) + ": index shape " + to_string(index.shape()) +
                         " and data shape " + to_string(data.shape()) +
                         " must have the same number of dimensions");
    }
    for (std::int64_t d = 0; d < index.dim(); ++d) {
        if (d != axis && index.shape()[d] > data.shape()[d]) {
            throw ValueError(std::string(op) + ": index shape " + to_string(index.shape()) +
                             " is larger than data shape " + to_string(data.shape()) +
                             " in dimension " + std::to_string(d));
        }
        if (other != nullptr && index.shape()[d] > other->shape()[d]) {
            throw ValueError(std::string(op) + ": index shape " + to_string(index.shape()) +
                             " is larger than source shape " + to_string(other->shape()) +
                             " in dimension " + std::to_string(d));
        }
    }
    if (index.numel() == 0) {
        return index;
    }
    const std::int64_t size = data.dim() == 0 ? 1 : data.shape()[axis];
    const std::int64_t low = min(index).item<std::int64_t>();
    const std::int64_t high = max(index).item<std::int64_t>();
    for (const std::int64_t value : {low, high}) {
        if (value < -size || value >= size) {
            throw IndexError(std::string(op) + ": index " + std::to_string(value) +
                             " is out of bounds for dimension " + std::to_string(axis) +
                             " with size " + std::to_string(size));
        }
    }
    if (low >= 0) {
        return index;
    }
    const Tensor wrapped = index + static_cast<double>(size);
    return where(lt(index, zeros({}, DType::I64, index.device())), wrapped, index);
}

}  // namespace

Tensor gather(const Tensor& data, std::int64_t axis, const Tensor& index) {
    const autograd::Recording recording({data, index});
    detail::check_same_device({data, index}, "gather");
    axis = detail::wrapped_dim(data, axis, "gather");
    const Tensor safe = checked_index(data, axis, index, nullptr, "gather");
    Tensor out = empty(index.shape(), data.dtype(), data.device());
    detail::gather(out, data, safe, index_layout(data, axis, safe, out));
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "GatherBackward", autograd::gather_backward(data, axis, safe));
}

Tensor& scatter_add_(Tensor& data, std::int64_t axis, const Tensor& index, const Tensor& source) {
    detail::check_same_device({data, index, source}, "scatter_add_");
    autograd::check_in_place(data, "scatter_add_");
    axis = detail::wrapped_dim(data, axis, "scatter_add_");
    if (source.dim() != index.dim()) {
        throw ValueError("scatter_add_: source shape " + to_string(source.shape()) +
                         " and index shape " + to_string(index.shape()) +
                         " must have the same number of dimensions");
    }
    Tensor safe;
    {
        const NoGradGuard no_grad;
        safe = checked_index(data, axis, index, &source, "scatter_add_");
        const Tensor values = source.to(data.dtype());
        detail::scatter_add(data, safe, values, index_layout(data, axis, safe, values));
    }
    if (is_grad_enabled()) {
        autograd::record_in_place(data, {safe, source}, "ScatterAddBackward",
                                  autograd::scatter_add_backward(source, axis, safe));
    }
    return data;
}

Tensor index_select(const Tensor& data, std::int64_t axis, const Tensor& index) {
    if (index.dim() != 1) {
        throw ValueError("index_select: index must be 1-d, got shape " + to_string(index.shape()));
    }
    axis = detail::wrapped_dim(data, axis, "index_select");
    if (data.dim() == 0) {
        return gather(data.unsqueeze(0), 0, index).squeeze(0);
    }
    Shape out_shape = data.shape();
    out_shape[axis] = index.size(0);
    Shape index_view(data.shape().size(), 1);
    index_view[axis] = index.size(0);
    return gather(data, axis, index.reshape(index_view).expand(out_shape));
}

}  // namespace kael
