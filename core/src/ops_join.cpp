// cat and stack: the output is allocated once and each input copied into its slice.
#include <string>

#include "autograd/record.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

namespace {

std::string shapes_of(const std::vector<Tensor>& tensors) {
    std::string text;
    for (const Tensor& tensor : tensors) {
        text += (text.empty() ? "" : ", ") + to_string(tensor.shape());
    }
    return text;
}

void check_not_empty_list(const std::vector<Tensor>& tensors, const char* op) {
    if (tensors.empty()) {
        throw ValueError(std::string(op) + ": expected a non-empty list of tensors");
    }
    for (const Tensor& tensor : tensors) {
        if (!tensor.defined()) {
            throw ValueError(std::string(op) + ": got an undefined tensor");
        }
    }
}

// torch skips 1-d empty tensors in cat whatever the other shapes are.
bool is_legacy_empty(const Tensor& tensor) {
    return tensor.dim() == 1 && tensor.numel() == 0;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
    check_not_empty_list(tensors, "cat");
    detail::check_same_device(tensors, "cat");
    DType dtype = tensors.front().dtype();
    for (const Tensor& tensor : tensors) {
        dtype = promote(dtype, tensor.dtype());
    }
    std::vector<Tensor> parts;
    for (const Tensor& tensor : tensors) {
        if (tensor.dim() == 0) {
            throw ValueError("cat: zero-dimensional tensors cannot be concatenated (shapes " +
                             shapes_of(tensors) + ")");
        }
        if (!is_legacy_empty(tensor)) {
            parts.push_back(tensor);
        }
    }
    if (parts.empty()) {
        parts.push_back(tensors.front());
    }
    const Tensor& first = parts.front();
    const std::int64_t rank = first.dim();
    if (dim < -rank || dim >= rank) {
        throw IndexError("cat: dimension " + std::to_string(dim) +
                         " is out of range for tensors of shapes " + shapes_of(tensors));
    }
    dim = dim < 0 ? dim + rank : dim;
    Shape out_shape = first.shape();
    out_shape[dim] = 0;
    for (const Tensor& part : parts) {
        bool matches = part.dim() == rank;
        for (std::int64_t d = 0; matches && d < rank; ++d) {
            matches = d == dim || part.shape()[d] == first.shape()[d];
        }
        if (!matches) {
            throw ValueError("cat: tensors must have the same shape outside dimension " +
                             std::to_string(dim) + ", got shapes " + shapes_of(tensors));
        }
        out_shape[dim] += part.shape()[dim];
    }
    Tensor out = empty(out_shape, dtype, first.device());
    // copy_ records each part's gradient; with none to record, the copy kernel alone (out is
    // new and the shapes match, so copy_'s checks have nothing to find).
    const bool records = is_grad_enabled() && autograd::any_requires_grad(parts);
    std::int64_t start = 0;
    for (const Tensor& part : parts) {
        const std::int64_t stop = start + part.shape()[dim];
        Tensor destination = out.slice(dim, start, stop);
        if (records) {
            destination.copy_(part);
        } else {
            detail::convert(destination, part);
        }
        start = stop;
    }
    return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
    check_not_empty_list(tensors, "stack");
    const Shape& shape = tensors.front().shape();
    for (const Tensor& tensor : tensors) {
        if (tensor.shape() != shape) {
            throw ValueError("stack: expected tensors of one shape, got shapes " +
                             shapes_of(tensors));
        }
    }
    const auto rank = static_cast<std::int64_t>(shape.size()) + 1;
    if (dim < -rank || dim >= rank) {
        throw IndexError("stack: dimension " + std::to_string(dim) +
                         " is out of range for stacking tensors of shape " + to_string(shape));
    }
    dim = dim < 0 ? dim + rank : dim;
    std::vector<Tensor> expanded;
    expanded.reserve(tensors.size());
    for (const Tensor& tensor : tensors) {
        expanded.push_back(tensor.unsqueeze(dim));
    }
    return cat(expanded, dim);
}

}  // namespace kael
