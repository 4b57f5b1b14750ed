// Views: new shape, strides and offset over the same storage, each with its backward.
#include <optional>
#include <string>

#include "tensor_internal.h"

namespace kael {

using detail::contiguous_strides;
using detail::product;
using detail::recorded;
using detail::reshaped;
using detail::with_view;
using detail::wrap_dim;
using detail::wrap_existing_dim;

namespace {

// requested with its one -1 resolved; ValueError (naming op) when it cannot hold numel elements.
Shape resolved_shape(const Shape& requested, std::int64_t numel, const Shape& from,
                     const char* op) {
    detail::check_rank(requested, op);
    Shape shape = requested;
    std::int64_t known = 1;
    int inferred = -1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
            if (inferred >= 0) {
                throw ValueError(std::string(op) + ": only one dimension can be -1, got " +
                                 to_string(shape));
            }
            inferred = static_cast<int>(i);
        } else if (shape[i] < 0) {
            throw ValueError(std::string(op) + ": invalid shape " + to_string(shape));
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            static_cast<void>(detail::checked_numel(requested, op));  // throws
        }
    }
    if (inferred >= 0) {
        if (known == 0 || numel % known != 0) {
            throw ValueError(std::string(op) + ": shape " + to_string(requested) +
                             " is invalid for " + std::to_string(numel) + " elements");
        }
        shape[inferred] = numel / known;
    }
    if (detail::checked_numel(shape, op) != numel) {
        throw ValueError(std::string(op) + ": shape " + to_string(requested) +
                         " is invalid for a tensor of shape " + to_string(from));
    }
    return shape;
}

// Strides that give shape over the same elements as (old_shape, old_strides) in the same
// order, when they exist. Runs of old dims that are contiguous with each other (a "chunk")
// may be split or merged freely; a new dim may not straddle two chunks.
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides,
                                  const Shape& shape) {
    if (product(shape) == 0 || old_shape.empty()) {
        return contiguous_strides(shape);  // no element to place, or one element
    }
    Shape strides(shape.size(), 1);
    auto next = static_cast<std::int64_t>(shape.size()) - 1;  // new dim being placed
    for (auto end = static_cast<std::int64_t>(old_shape.size()); end > 0;) {
        // The chunk old dims [begin, end): each stride is the next one times its size.
        std::int64_t begin = end - 1;
        std::int64_t chunk_elements = old_shape[static_cast<std::size_t>(begin)];
        const std::int64_t unit = old_strides[static_cast<std::size_t>(begin)];
        while (begin > 0 && (old_shape[static_cast<std::size_t>(begin - 1)] == 1 ||
                             old_strides[static_cast<std::size_t>(begin - 1)] ==
                                 chunk_elements * unit)) {
            --begin;
            chunk_elements *= old_shape[static_cast<std::size_t>(begin)];
        }
        std::int64_t placed = 1;
        while (next >= 0 && (placed < chunk_elements || shape[static_cast<std::size_t>(next)] == 1)) {
            strides[static_cast<std::size_t>(next)] = placed * unit;
            placed *= shape[static_cast<std::size_t>(next)];
            --next;
        }
        if (placed != chunk_elements) {
            return std::nullopt;
        }
        end = begin;
    }
    if (next != -1) {
        return std::nullopt;
    }
    return strides;
}

}  // namespace

Tensor Tensor::view(const Shape& requested) const {
    const Shape shape = resolved_shape(requested, numel(), this->shape(), "view");
    if (is_contiguous()) {
        return reshaped(*this, with_view(*this, shape, contiguous_strides(shape), offset()),
                        "ViewBackward");
    }
    // As PyTorch: any view the strides allow (splitting the last dim of a slice, say).
    const std::optional<Shape> strides = view_strides(this->shape(), this->strides(), shape);
    if (!strides) {
        throw ValueError("view: shape " + to_string(shape) + " is not compatible with the " +
                         "size " + to_string(this->shape()) + " and strides " +
                         to_string(this->strides()) + " of the tensor (a dimension spans two " +
                         "contiguous subspaces); use reshape()");
    }
    return reshaped(*this, with_view(*this, shape, *strides, offset()), "ViewBackward");
}

// A view whenever the strides allow one (splitting the last dim of a slice, merging dims that
// are contiguous with each other), as PyTorch does; a copy only when none exists.
Tensor Tensor::reshape(const Shape& requested) const {
    const Shape shape = resolved_shape(requested, numel(), this->shape(), "reshape");
    if (is_contiguous()) {
        return view(shape);
    }
    if (const std::optional<Shape> strides = view_strides(this->shape(), this->strides(), shape)) {
        return reshaped(*this, with_view(*this, shape, *strides, offset()), "ViewBackward");
    }
    return contiguous().view(shape);
}

Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
    dim0 = wrap_dim(dim0, dim(), "transpose");
    dim1 = wrap_dim(dim1, dim(), "transpose");
    if (dim0 == dim1) {
        return reshaped(*this, with_view(*this, shape(), strides(), offset()), "ViewBackward");
    }
    Shape shape = this->shape();
    Shape strides = this->strides();
    std::swap(shape[dim0], shape[dim1]);
    std::swap(strides[dim0], strides[dim1]);
    return recorded(*this, with_view(*this, shape, strides, offset()), "TransposeBackward",
                    [dim0, dim1](const Tensor& grad) { return grad.transpose(dim0, dim1); });
}

Tensor Tensor::T() const {
    if (dim() > 2) {
        throw ValueError("T: expected a tensor with at most 2 dimensions, got shape " +
                         to_string(shape()));
    }
    return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::permute(const Shape& order) const {
    if (static_cast<std::int64_t>(order.size()) != dim()) {
        throw ValueError("permute: order " + to_string(order) + " does not match shape " +
                         to_string(shape()));
    }
    Shape shape(order.size());
    Shape strides(order.size());
    Shape inverse(order.size());
    std::vector<bool> seen(order.size(), false);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::int64_t d = wrap_dim(order[i], dim(), "permute");
        if (seen[d]) {
            throw ValueError("permute: repeated dimension in " + to_string(order));
        }
        seen[d] = true;
        shape[i] = this->shape()[d];
        strides[i] = this->strides()[d];
        inverse[d] = static_cast<std::int64_t>(i);
    }
    return recorded(*this, with_view(*this, shape, strides, offset()), "PermuteBackward",
                    [inverse](const Tensor& grad) { return grad.permute(inverse); });
}

Tensor Tensor::slice(std::int64_t d, std::int64_t start, std::int64_t stop,
                     std::int64_t step) const {
    d = wrap_existing_dim(d, dim(), "slice");
    if (step <= 0) {
        throw ValueError("slice: step must be positive, got " + std::to_string(step));
    }
    const std::int64_t size = shape()[d];
    auto clampi = [size](std::int64_t v) {
        v = v < 0 ? v + size : v;
        return std::min(std::max<std::int64_t>(v, 0), size);
    };
    start = clampi(start);
    stop = std::max(clampi(stop), start);
    Shape shape = this->shape();
    Shape strides = this->strides();
    shape[d] = (stop - start + step - 1) / step;
    const std::int64_t new_offset = offset() + start * strides[d];
    strides[d] *= step;
    return recorded(*this, with_view(*this, shape, strides, new_offset), "SliceBackward",
                    [input_shape = this->shape(), d, start, stop, step](const Tensor& grad) {
                        Tensor whole = zeros(input_shape, grad.dtype(), grad.device());
                        whole.slice(d, start, stop, step).copy_(grad);
                        return whole;
                    });
}

Tensor Tensor::select(std::int64_t d, std::int64_t index) const {
    d = wrap_existing_dim(d, dim(), "select");
    const std::int64_t size = shape()[d];
    if (index < -size || index >= size) {
        throw IndexError("select: index " + std::to_string(index) +
                         " is out of range for dimension " + std::to_string(d) + " of size " +
                         std::to_string(size));
    }
    index = index < 0 ? index + size : index;
    Shape shape = this->shape();
    Shape strides = this->strides();
    const std::int64_t new_offset = offset() + index * strides[d];
    shape.erase(shape.begin() + d);
    strides.erase(strides.begin() + d);
    return recorded(*this, with_view(*this, shape, strides, new_offset), "SelectBackward",
                    [input_shape = this->shape(), d, index](const Tensor& grad) {
                        Tensor whole = zeros(input_shape, grad.dtype(), grad.device());
                        whole.select(d, index).copy_(grad);
                        return whole;
                    });
}

Tensor Tensor::unsqueeze(std::int64_t d) const {
    d = wrap_dim(d, dim() + 1, "unsqueeze");
    Shape shape = this->shape();
    Shape strides = this->strides();
    const std::int64_t stride =
        d < dim() ? shape[d] * strides[d] : 1;
    shape.insert(shape.begin() + d, 1);
    strides.insert(strides.begin() + d, stride);
    return reshaped(*this, with_view(*this, shape, strides, offset()), "UnsqueezeBackward");
}

Tensor Tensor::squeeze(std::int64_t d) const {
    if (dim() == 0) {
        return *this;
    }
    d = wrap_dim(d, dim(), "squeeze");
    if (shape()[d] != 1) {
        return reshaped(*this, with_view(*this, shape(), strides(), offset()), "SqueezeBackward");
    }
    Shape shape = this->shape();
    Shape strides = this->strides();
    shape.erase(shape.begin() + d);
    strides.erase(strides.begin() + d);
    return reshaped(*this, with_view(*this, shape, strides, offset()), "SqueezeBackward");
}

Tensor Tensor::squeeze() const {
    Shape shape;
    Shape strides;
    for (std::size_t i = 0; i < this->shape().size(); ++i) {
        if (this->shape()[i] != 1) {
            shape.push_back(this->shape()[i]);
            strides.push_back(this->strides()[i]);
        }
    }
    return reshaped(*this, with_view(*this, shape, strides, offset()), "SqueezeBackward");
}

Tensor Tensor::expand(const Shape& target) const {
    if (target.size() < shape().size()) {
        throw ValueError("expand: cannot expand shape " + to_string(shape()) + " to " +
                         to_string(target));
    }
    const std::size_t lead = target.size() - shape().size();
    Shape shape(target.size());
    Shape strides(target.size(), 0);
    for (std::size_t i = 0; i < target.size(); ++i) {
        const std::int64_t wanted = target[i];
        if (i < lead) {
            if (wanted < 0) {
                throw ValueError("expand: -1 is not allowed for a new dimension in " +
                                 to_string(target));
            }
            shape[i] = wanted;
            continue;
        }
        const std::int64_t have = this->shape()[i - lead];
        if (wanted == -1 || wanted == have) {
            shape[i] = have;
            strides[i] = this->strides()[i - lead];
        } else if (have == 1 && wanted >= 0) {
            shape[i] = wanted;
        } else {
            throw ValueError("expand: cannot expand shape " + to_string(this->shape()) + " to " +
                             to_string(target));
        }
    }
    return recorded(*this, with_view(*this, shape, strides, offset(), "expand"), "ExpandBackward",
                    [input_shape = this->shape()](const Tensor& grad) {
                        return autograd::sum_to(grad, input_shape);
                    });
}

namespace {

// Every element of the view lies inside the storage: the lowest and highest offsets over all
// dims, computed without overflow.
void check_strided_extent(const Shape& shape, const Shape& strides, std::int64_t offset,
                          std::int64_t storage_elements, const char* op) {
    // Spelled out only for an error: every view passes here.
    const auto view = [&] {
        return std::string(op) + ": view of shape " + to_string(shape) + " with strides " +
               to_string(strides) + " and offset " + std::to_string(offset);
    };
    bool empty_view = false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 0) {
            throw ValueError(view() + ": negative size");
        }
        if (strides[i] < 0) {
            throw ValueError(view() + ": negative strides are not supported");
        }
        empty_view = empty_view || shape[i] == 0;
    }
    if (offset < 0) {
        throw ValueError(view() + ": negative offset");
    }
    if (empty_view) {
        return;
    }
    std::int64_t last = offset;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        std::int64_t reach = 0;
        if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
            __builtin_add_overflow(last, reach, &last)) {
            throw ValueError(view() + ": offsets overflow 64 bits");
        }
    }
    if (last >= storage_elements) {
        throw IndexError(view() + " reaches element " + std::to_string(last) +
                         ", outside a storage of " + std::to_string(storage_elements) +
                         " elements");
    }
}

}  // namespace

Tensor Tensor::as_strided(const Shape& shape, const Shape& strides, std::int64_t new_offset) const {
    if (is_grad_enabled() && requires_grad()) {
        throw ValueError("as_strided: not differentiable; call it on detach() or under "
                         "NoGradGuard");
    }
    if (shape.size() != strides.size()) {
        throw ValueError("as_strided: shape " + to_string(shape) + " and strides " +
                         to_string(strides) + " differ in length");
    }
    detail::check_rank(shape, "as_strided");
    check_strided_extent(shape, strides, new_offset, impl().storage->nbytes() / itemsize(dtype()),
                         "as_strided");
    return with_view(*this, shape, strides, new_offset, "as_strided");
}

}  // namespace kael
