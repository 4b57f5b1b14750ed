// Shape ops composed from views (slice, permute, reshape, expand), index_select, cat and where,
// so every device runs them and autograd records the ops they are made of.
#include <algorithm>
#include <numeric>
#include <string>

#include "kael/ops.h"
#include "tensor_internal.h"

namespace kael {

using detail::wrap_dim;
using detail::wrap_existing_dim;

namespace {

// Wrapped, distinct dims (ValueError naming op for a repeat).
Shape wrapped_dims(const Shape& dims, std::int64_t rank, const char* op) {
    Shape out;
    for (const std::int64_t d : dims) {
        const std::int64_t w = wrap_dim(d, rank, op);
        if (std::find(out.begin(), out.end(), w) != out.end()) {
            throw ValueError(std::string(op) + ": dim " + std::to_string(w) +
                             " appears more than once in " + to_string(dims));
        }
        out.push_back(w);
    }
    return out;
}

Tensor reversed_positions(std::int64_t size, const Device& device) {
    return arange_int(size - 1, -1, -1, DType::I64, device);
}

// Keeps where column - row (of the last two dims) compares with diagonal as wanted.
Tensor triangle(const Tensor& input, std::int64_t diagonal, bool lower, const char* op) {
    if (input.dim() < 2) {
        throw ValueError(std::string(op) + ": expected a tensor with at least 2 dimensions, got "
                         "shape " + to_string(input.shape()));
    }
    const Device& device = input.device();
    const Tensor rows = arange_int(0, input.size(-2), 1, DType::I64, device).unsqueeze(1);
    const Tensor cols = arange_int(0, input.size(-1), 1, DType::I64, device).unsqueeze(0);
    const Tensor offset = cols - rows;
    const Tensor bound = full_int({}, diagonal, DType::I64, device);
    const Tensor keep = lower ? le(offset, bound) : ge(offset, bound);
    return where(keep, input, zeros({}, input.dtype(), device));
}

}  // namespace

Tensor narrow(const Tensor& input, std::int64_t dim, std::int64_t start, std::int64_t length) {
    dim = wrap_existing_dim(dim, input.dim(), "narrow");
    const std::int64_t size = input.size(dim);
    if (start < -size || start > size) {
        throw IndexError("narrow: start " + std::to_string(start) + " is out of range for dim " +
                         std::to_string(dim) + " of size " + std::to_string(size));
    }
    start = start < 0 ? start + size : start;
    if (length < 0 || start + length > size) {
        throw ValueError("narrow: start (" + std::to_string(start) + ") + length (" +
                         std::to_string(length) + ") exceeds dimension size (" +
                         std::to_string(size) + ")");
    }
    return input.slice(dim, start, start + length);
}

Tensor movedim(const Tensor& input, const Shape& source, const Shape& destination) {
    if (source.size() != destination.size()) {
        throw ValueError("movedim: source " + to_string(source) + " and destination " +
                         to_string(destination) + " must have the same number of dims");
    }
    const std::int64_t rank = input.dim();
    const Shape from = wrapped_dims(source, rank, "movedim");
    const Shape to = wrapped_dims(destination, rank, "movedim");
    if (rank == 0) {
        return input;
    }
    Shape order(static_cast<std::size_t>(rank), -1);
    for (std::size_t i = 0; i < from.size(); ++i) {
        order[static_cast<std::size_t>(to[i])] = from[i];
    }
    // The dims that do not move keep their order in the free places.
    std::int64_t next = 0;
    for (std::int64_t& slot : order) {
        while (slot == -1 && std::find(from.begin(), from.end(), next) != from.end()) {
            ++next;
        }
        if (slot == -1) {
            slot = next++;
        }
    }
    return input.permute(order);
}

Tensor flatten(const Tensor& input, std::int64_t start_dim, std::int64_t end_dim) {
    if (input.dim() == 0) {
        (void)wrap_dim(start_dim, 0, "flatten");
        (void)wrap_dim(end_dim, 0, "flatten");
        return input.reshape({1});
    }
    start_dim = wrap_dim(start_dim, input.dim(), "flatten");
    end_dim = wrap_dim(end_dim, input.dim(), "flatten");
    if (start_dim > end_dim) {
        throw ValueError("flatten: start_dim " + std::to_string(start_dim) +
                         " comes after end_dim " + std::to_string(end_dim));
    }
    const Shape& shape = input.shape();
    Shape out(shape.begin(), shape.begin() + start_dim);
    out.push_back(std::accumulate(shape.begin() + start_dim, shape.begin() + end_dim + 1,
                                  std::int64_t{1}, std::multiplies<>()));
    out.insert(out.end(), shape.begin() + end_dim + 1, shape.end());
    return input.reshape(out);
}

Tensor unflatten(const Tensor& input, std::int64_t dim, const Shape& sizes) {
    dim = wrap_existing_dim(dim, input.dim(), "unflatten");
    if (sizes.empty()) {
        throw ValueError("unflatten: sizes must be non-empty");
    }
    // One -1 is resolved against this dim's size (not the whole tensor's, which is ambiguous
    // when another dim is 0); a product that differs from it must fail.
    Shape resolved = sizes;
    const auto unknown = std::find(resolved.begin(), resolved.end(), -1);
    if (unknown != resolved.end() && std::find(unknown + 1, resolved.end(), -1) == resolved.end()) {
        *unknown = 1;
        const std::int64_t known = detail::product(resolved);
        *unknown = known == 0 ? -1 : input.size(dim) / known;  // -1 left: any size would do
    }
    Shape out(input.shape().begin(), input.shape().begin() + dim);
    out.insert(out.end(), resolved.begin(), resolved.end());
    out.insert(out.end(), input.shape().begin() + dim + 1, input.shape().end());
    if (std::any_of(resolved.begin(), resolved.end(), [](std::int64_t s) { return s < 0; }) ||
        detail::product(resolved) != input.size(dim)) {
        throw ValueError("unflatten: sizes " + to_string(sizes) + " don't multiply up to the "
                         "size of dim " + std::to_string(dim) + " (" +
                         std::to_string(input.size(dim)) + ")");
    }
    return input.reshape(out);
}

Tensor reversed_dims(const Tensor& input) {
    Shape order(static_cast<std::size_t>(input.dim()));
    std::iota(order.rbegin(), order.rend(), 0);
    return input.permute(order);
}

Tensor matrix_transpose(const Tensor& input) {
    if (input.dim() < 2) {
        throw ValueError("mT: expected a tensor with at least 2 dimensions, got shape " +
                         to_string(input.shape()));
    }
    return input.transpose(-2, -1);
}

Tensor squeeze(const Tensor& input, const Shape& dims) {
    Shape wrapped = wrapped_dims(dims, input.dim(), "squeeze");
    std::sort(wrapped.rbegin(), wrapped.rend());
    Tensor out = input;
    for (const std::int64_t d : wrapped) {
        if (input.dim() > 0 && input.size(d) == 1) {
            out = out.squeeze(d);
        }
    }
    return out;
}

std::vector<Tensor> unbind(const Tensor& input, std::int64_t dim) {
    dim = wrap_existing_dim(dim, input.dim(), "unbind");
    if (input.size(dim) == 0) {
        return {};
    }
    // One split node records every piece; squeezing them is a view each.
    std::vector<Tensor> pieces = split(input, 1, dim);
    for (Tensor& piece : pieces) {
        piece = piece.squeeze(dim);
    }
    return pieces;
}

Tensor view_as(const Tensor& input, const Tensor& other) { return input.view(other.shape()); }
Tensor reshape_as(const Tensor& input, const Tensor& other) {
    return input.reshape(other.shape());
}
Tensor expand_as(const Tensor& input, const Tensor& other) {
    return input.expand(other.shape());
}

Tensor flip(const Tensor& input, const Shape& dims) {
    Tensor out = input;
    for (const std::int64_t d : wrapped_dims(dims, input.dim(), "flip")) {
        if (input.dim() > 0) {
            out = index_select(out, d, reversed_positions(input.size(d), input.device()));
        }
    }
    return out.same_impl(input) ? input.clone() : out;
}

Tensor fliplr(const Tensor& input) {
    if (input.dim() < 2) {
        throw ValueError("fliplr: expected a tensor with at least 2 dimensions, got shape " +
                         to_string(input.shape()));
    }
    return flip(input, {1});
}

Tensor flipud(const Tensor& input) {
    if (input.dim() < 1) {
        throw ValueError("flipud: expected a tensor with at least 1 dimension, got a 0-d one");
    }
    return flip(input, {0});
}

Tensor roll(const Tensor& input, const Shape& shifts, const Shape& dims) {
    if (dims.empty()) {
        if (shifts.size() != 1) {
            throw ValueError("roll: without dims, shifts must be one number, got " +
                             to_string(shifts));
        }
        return roll(input.reshape({-1}), shifts, {0}).view(input.shape());
    }
    if (shifts.size() != dims.size()) {
        throw ValueError("roll: shifts " + to_string(shifts) + " and dims " + to_string(dims) +
                         " must have the same length");
    }
    Tensor out = input;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        const std::int64_t d = wrap_existing_dim(dims[i], input.dim(), "roll");
        const std::int64_t n = input.size(d);
        const std::int64_t shift = n == 0 ? 0 : ((shifts[i] % n) + n) % n;
        if (shift != 0) {
            out = cat({out.slice(d, n - shift, n), out.slice(d, 0, n - shift)}, d);
        }
    }
    return out.same_impl(input) ? input.clone() : out;
}

Tensor repeat(const Tensor& input, const Shape& repeats) {
    const auto rank = static_cast<std::size_t>(input.dim());
    if (repeats.size() < rank) {
        throw ValueError("repeat: the number of repeats " + to_string(repeats) +
                         " can not be smaller than the number of dimensions of the tensor (" +
                         std::to_string(rank) + ")");
    }
    // [a, b] repeated (r, s) is [1, a, 1, b] expanded to [r, a, s, b], then merged pairwise.
    Shape padded(repeats.size() - rank, 1);
    padded.insert(padded.end(), input.shape().begin(), input.shape().end());
    Shape interleaved;
    Shape expanded;
    Shape result;
    for (std::size_t i = 0; i < repeats.size(); ++i) {
        if (repeats[i] < 0) {
            throw ValueError("repeat: repeats must be non-negative, got " + to_string(repeats));
        }
        interleaved.insert(interleaved.end(), {1, padded[i]});
        expanded.insert(expanded.end(), {repeats[i], padded[i]});
        result.push_back(repeats[i] * padded[i]);
    }
    return input.reshape(interleaved).expand(expanded).contiguous().view(result);
}

Tensor tile(const Tensor& input, const Shape& repeats) {
    Shape padded(std::max<std::size_t>(static_cast<std::size_t>(input.dim()), repeats.size()) -
                     repeats.size(),
                 1);
    padded.insert(padded.end(), repeats.begin(), repeats.end());
    return repeat(input, padded);
}

Tensor repeat_interleave(const Tensor& input, std::int64_t repeats,
                         std::optional<std::int64_t> dim) {
    if (repeats < 0) {
        throw ValueError("repeat_interleave: repeats must be non-negative, got " +
                         std::to_string(repeats));
    }
    const Tensor source = dim ? input : input.reshape({-1});
    const std::int64_t d = dim ? wrap_existing_dim(*dim, input.dim(), "repeat_interleave") : 0;
    Shape expanded = source.shape();
    expanded.insert(expanded.begin() + d + 1, repeats);
    Shape result = source.shape();
    result[static_cast<std::size_t>(d)] *= repeats;
    return source.unsqueeze(d + 1).expand(expanded).reshape(result);
}

Tensor repeat_interleave(const Tensor& input, const Tensor& repeats,
                         std::optional<std::int64_t> dim) {
    if (repeats.dtype() != DType::I64 || repeats.dim() > 1) {
        throw TypeError("repeat_interleave: repeats must be an int64 tensor of at most one "
                        "dimension, got " + to_string(repeats.dtype()) + " of shape " +
                        to_string(repeats.shape()));
    }
    const Tensor source = dim ? input : input.reshape({-1});
    const std::int64_t d = dim ? wrap_existing_dim(*dim, input.dim(), "repeat_interleave") : 0;
    const Tensor counts = repeats.to(input.device()).reshape({-1});
    if (counts.numel() == 1) {
        return repeat_interleave(input, counts.item<std::int64_t>(), dim);
    }
    if (counts.numel() != source.size(d)) {
        throw ValueError("repeat_interleave: repeats must have the same size as input along "
                         "dim (" + std::to_string(source.size(d)) + "), got " +
                         std::to_string(counts.numel()));
    }
    if (counts.numel() > 0 && min(counts).item<std::int64_t>() < 0) {
        throw ValueError("repeat_interleave: repeats can not be negative");
    }
    // Output position j takes the element whose run ends after j: a 1 at each run's end,
    // prefix-summed, counts the runs that ended at or before j.
    const std::int64_t total = sum(counts).item<std::int64_t>();
    Tensor marks = zeros({total + 1}, DType::I64, input.device());
    scatter_add_(marks, 0, cumsum(counts, 0), ones({counts.numel()}, DType::I64, input.device()));
    const Tensor positions = cumsum(marks, 0).slice(0, 0, total);
    return index_select(source, d, positions);
}

Tensor tril(const Tensor& input, std::int64_t diagonal) {
    return triangle(input, diagonal, true, "tril");
}
Tensor triu(const Tensor& input, std::int64_t diagonal) {
    return triangle(input, diagonal, false, "triu");
}

}  // namespace kael
