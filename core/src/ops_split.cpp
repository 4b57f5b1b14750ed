// split and chunk: views of consecutive pieces along one dim, recorded as one node with an
// output per piece (PyTorch's SplitBackward). Its backward is a cat of the pieces' gradients,
// and no copy at all when those gradients already tile one buffer laid out as the input
// (attention's dq, dk, dv for the thirds of one qkv projection).
#include <string>

#include "autograd/record.h"
#include "kael/ops.h"
#include "tensor_internal.h"

namespace kael {
namespace {

// The input's gradient as a view of the pieces' one buffer, when they tile it exactly: same
// storage, strides and dtype, each piece where its slice of the input starts.
Tensor tiled_gradient(const std::vector<Tensor>& grads, const Shape& shape, std::int64_t dim,
                      const std::vector<std::int64_t>& starts) {
    const Tensor& first = grads.front();
    for (std::size_t i = 0; i < grads.size(); ++i) {
        const Tensor& grad = grads[i];
        if (!grad.defined() || grad.impl().storage != first.impl().storage ||
            grad.strides() != first.strides() || grad.dtype() != first.dtype() ||
            grad.offset() != first.offset() + starts[i] * first.strides()[dim]) {
            return {};
        }
    }
    if (!detail::non_overlapping(shape, first.strides())) {
        return {};
    }
    return first.detach().as_strided(shape, first.strides(), first.offset());
}

}  // namespace

std::vector<Tensor> split(const Tensor& input, const std::vector<std::int64_t>& sizes,
                          std::int64_t dim) {
    if (input.dim() == 0) {
        throw ValueError("split: a zero-dimensional tensor cannot be split");
    }
    dim = detail::wrap_dim(dim, input.dim(), "split");
    std::int64_t total = 0;
    for (const std::int64_t size : sizes) {
        if (size < 0) {
            throw ValueError("split: sizes must be non-negative, got " + to_string(sizes));
        }
        total += size;
    }
    if (total != input.size(dim)) {
        throw ValueError("split: sizes " + to_string(sizes) + " do not add up to " +
                         std::to_string(input.size(dim)) + " (dim " + std::to_string(dim) +
                         " of shape " + to_string(input.shape()) + ")");
    }
    std::vector<Tensor> pieces;
    std::vector<std::int64_t> starts;
    {
        const NoGradGuard views_only;  // one node below records every piece
        std::int64_t start = 0;
        for (const std::int64_t size : sizes) {
            pieces.push_back(input.slice(dim, start, start + size));
            starts.push_back(start);
            start += size;
        }
    }
    autograd::record_multi_output(
        pieces, input, "SplitBackward",
        [shape = input.shape(), dim, starts, sizes](const std::vector<Tensor>& grads) {
            if (Tensor whole = tiled_gradient(grads, shape, dim, starts); whole.defined()) {
                return whole;
            }
            const Tensor* any = nullptr;
            for (const Tensor& grad : grads) {
                any = grad.defined() ? &grad : any;
            }
            Tensor whole = empty(shape, any->dtype(), any->device());
            for (std::size_t i = 0; i < grads.size(); ++i) {
                Tensor region = whole.slice(dim, starts[i], starts[i] + sizes[i]);
                if (grads[i].defined()) {
                    region.copy_(grads[i]);
                } else {
                    region.fill_(0);
                }
            }
            return whole;
        });
    return pieces;
}

std::vector<Tensor> split(const Tensor& input, std::int64_t split_size, std::int64_t dim) {
    if (input.dim() == 0) {
        throw ValueError("split: a zero-dimensional tensor cannot be split");
    }
    const std::int64_t length = input.size(detail::wrap_dim(dim, input.dim(), "split"));
    if (split_size <= 0 && !(split_size == 0 && length == 0)) {
        throw ValueError("split: split_size must be positive, got " + std::to_string(split_size));
    }
    std::vector<std::int64_t> sizes;
    for (std::int64_t start = 0; start < length; start += split_size) {
        sizes.push_back(std::min(split_size, length - start));
    }
    if (sizes.empty()) {
        sizes.push_back(0);
    }
    return split(input, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& input, std::int64_t chunks, std::int64_t dim) {
    if (chunks <= 0) {
        throw ValueError("chunk: chunks must be positive, got " + std::to_string(chunks));
    }
    if (input.dim() == 0) {
        throw ValueError("chunk: a zero-dimensional tensor cannot be chunked");
    }
    const std::int64_t length = input.size(detail::wrap_dim(dim, input.dim(), "chunk"));
    return split(input, std::max<std::int64_t>(1, (length + chunks - 1) / chunks), dim);
}

}  // namespace kael
