// gather / scatter_add / index_select. Index bounds are checked before the kernel runs, on a GPU
// asynchronously (the error surfaces at the next synchronising call; the kernels skip a bad
// index meanwhile). As in PyTorch, these ops take indices in [0, size) only: a negative index
// is an IndexError (only advanced indexing, ops_advanced_index.cpp, wraps negative indices).
#include "autograd/record.h"
#include "dims.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "kernel_calls.h"
#include "memory_overlap.h"
#include "ops_index_internal.h"

namespace kael {

namespace {

// Validates shapes and index values against data (and source, for scatter_add_).
void check_index(const Tensor& data, std::int64_t axis, const Tensor& index, const Tensor* other,
                 const char* op) {
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
    const std::int64_t size = data.dim() == 0 ? 1 : data.shape()[axis];
    detail::check_index_range(index, size, axis, false, op);
}

Tensor checked_gather(const Tensor& data, std::int64_t axis, const Tensor& index, const char* op) {
    detail::check_same_device({data, index}, op);
    axis = detail::wrapped_dim(data, axis, op);
    check_index(data, axis, index, nullptr, op);
    return detail::gather_unchecked(data, axis, index);
}

}  // namespace

namespace detail {

void check_index_range(const Tensor& index, std::int64_t size, std::int64_t axis,
                       bool negative_wraps, const char* op, const char* what) {
    detail::check_indices(index, negative_wraps ? -size : 0, size, axis, op, what);
}

Tensor index_select_named(const Tensor& data, std::int64_t axis, const Tensor& given_index,
                          const char* op) {
    detail::check_same_device({data, given_index}, op);
    if (given_index.dtype() != DType::I64 && given_index.dtype() != DType::I32) {
        throw TypeError(std::string(op) + ": index must be i64 or i32, got " +
                        to_string(given_index.dtype()));
    }
    const Tensor index = given_index.to(DType::I64);  // i32 too, as PyTorch's index_select
    // One check of the 1-d index, not of the expanded one gather reads.
    check_index_range(index, data.dim() == 0 ? 1 : data.shape()[axis], axis, false, op);
    if (data.dim() == 0) {  // as in PyTorch: one index into a scalar, a scalar result
        if (index.numel() != 1) {
            throw IndexError(std::string(op) + ": a 0-d tensor takes exactly one index, got " +
                             std::to_string(index.numel()));
        }
        return gather_unchecked(data.unsqueeze(0), 0, index).squeeze(0);
    }
    Shape out_shape = data.shape();
    out_shape[axis] = index.size(0);
    Shape index_view(data.shape().size(), 1);
    index_view[axis] = index.size(0);
    return gather_unchecked(data, axis, index.reshape(index_view).expand(out_shape));
}

Tensor gather_unchecked(const Tensor& data, std::int64_t axis, const Tensor& index) {
    const autograd::Recording recording({data, index});
    Tensor out = empty(index.shape(), data.dtype(), data.device());
    if (data.numel() == 0) {
        // Every index is out of range (the check reports it, maybe later): the kernels' zeros,
        // without handing a kernel data that has no memory.
        detail::fill(out, detail::no_params());
    } else {
        detail::gather(out, data, index, index_layout(data, axis, index, out));
    }
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "GatherBackward", autograd::gather_backward(data, axis, index));
}

void scatter_add_unchecked(Tensor& data, std::int64_t axis, const Tensor& index,
                           const Tensor& source) {
    {
        const NoGradGuard no_grad;
        const Tensor values = source.to(data.dtype());
        if (data.numel() > 0) {  // else every index is out of range: nothing to add
            detail::scatter_add(data, index, values, index_layout(data, axis, index, values));
        }
    }
    if (is_grad_enabled()) {
        autograd::record_in_place(data, {index, source}, "ScatterAddBackward",
                                  autograd::scatter_add_backward(source, axis, index));
    }
}

}  // namespace detail

Tensor gather(const Tensor& data, std::int64_t axis, const Tensor& index) {
    return checked_gather(data, axis, index, "gather");
}

Tensor& scatter_add_(Tensor& data, std::int64_t axis, const Tensor& index, const Tensor& source) {
    detail::check_same_device({data, index, source}, "scatter_add_");
    detail::check_no_internal_overlap(data, "scatter_add_");
    autograd::check_in_place(data, "scatter_add_");
    axis = detail::wrapped_dim(data, axis, "scatter_add_");
    if (source.dim() != index.dim()) {
        throw ValueError("scatter_add_: source shape " + to_string(source.shape()) +
                         " and index shape " + to_string(index.shape()) +
                         " must have the same number of dimensions");
    }
    check_index(data, axis, index, &source, "scatter_add_");
    detail::scatter_add_unchecked(data, axis, index, source);
    return data;
}

Tensor index_select(const Tensor& data, std::int64_t axis, const Tensor& index) {
    if (index.dim() != 1) {
        throw ValueError("index_select: index must be 1-d, got shape " + to_string(index.shape()));
    }
    axis = detail::wrapped_dim(data, axis, "index_select");
    return detail::index_select_named(data, axis, index, "index_select");
}

}  // namespace kael
