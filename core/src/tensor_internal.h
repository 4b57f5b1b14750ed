#pragma once
// Shape arithmetic and view construction shared by tensor.cpp (copies, factories) and
// tensor_views.cpp (views), private to the core.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>

#include "autograd/record.h"
#include "kael/tensor.h"

namespace kael::detail {

// Unsigned, so that a valid empty shape passing 2^63 on its way to 0 ([2^62, 2, 0]) does not
// overflow; check_shape has made sure every shape's count fits int64.
inline std::int64_t product(const Shape& shape) {
    std::uint64_t total = 1;
    for (const std::int64_t size : shape) {
        total *= static_cast<std::uint64_t>(size);
    }
    return static_cast<std::int64_t>(total);
}

inline bool shape_has_zero(const Shape& shape) {
    return std::find(shape.begin(), shape.end(), 0) != shape.end();
}

// Unsigned for the same reason: an empty shape's strides may pass 2^63 ([0, 2^61, 2^32 + 1]);
// they never address memory, since the tensor has no element.
inline Shape contiguous_strides(const Shape& shape) {
    Shape strides(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;) {
        strides[i - 1] = static_cast<std::int64_t>(
            static_cast<std::uint64_t>(strides[i]) *
            static_cast<std::uint64_t>(std::max<std::int64_t>(shape[i], 1)));
    }
    return strides;
}

inline std::int64_t wrap_dim(std::int64_t dim, std::int64_t rank, const char* op) {
    const std::int64_t bound = std::max<std::int64_t>(rank, 1);
    if (dim < -bound || dim >= bound) {
        throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) +
                         " is out of range for a tensor with " + std::to_string(rank) +
                         " dimension(s)");
    }
    return dim < 0 ? dim + bound : dim;
}

// Views that address one element along a dimension (size, select, slice) need a real one: a 0-d
// tensor has none, unlike reductions, which accept dim 0 of a 0-d tensor.
inline std::int64_t wrap_existing_dim(std::int64_t dim, std::int64_t rank, const char* op) {
    if (rank == 0) {
        throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) +
                         " was given, but the tensor is 0-d (it has no dimensions)");
    }
    return wrap_dim(dim, rank, op);
}

inline void check_rank(const Shape& shape, const char* op) {
    if (static_cast<std::int64_t>(shape.size()) > kMaxRank) {
        throw ValueError(std::string(op) + ": " + std::to_string(shape.size()) +
                         " dimensions exceed the limit of " + std::to_string(kMaxRank));
    }
}

// The element count of a shape of sizes >= 0, checked: the sizes multiply in order as unsigned
// 64-bit numbers, as PyTorch's, so [2^62, 2, 0] is a valid empty shape but [2^62, 4] is not;
// the count must fit int64. Every path that makes a shape goes through check_shape.
inline std::int64_t checked_numel(const Shape& shape, const char* op) {
    std::uint64_t count = 1;
    bool fits = true;
    for (const std::int64_t size : shape) {
        fits = fits && !__builtin_mul_overflow(count, static_cast<std::uint64_t>(size), &count);
    }
    if (!fits || count > static_cast<std::uint64_t>(INT64_MAX)) {
        throw ValueError(std::string(op) + ": shape " + to_string(shape) +
                         " is invalid: its number of elements overflows int64");
    }
    return static_cast<std::int64_t>(count);
}

// A real scalar written into an integer or bool tensor, as PyTorch converts one: bool is
// value != 0 (NaN too), int64 truncates, and a value int64 cannot hold (NaN, inf, 1e20) is a
// ValueError naming op rather than a wrapped or saturated number.
inline std::int64_t integer_of(double value, DType dtype, const char* op) {
    if (dtype == DType::Bool) {
        return value != 0 ? 1 : 0;
    }
    // [-2^63, 2^63): exactly the doubles that truncate to an int64.
    if (!(value >= -0x1p63 && value < 0x1p63)) {
        throw ValueError(std::string(op) + ": value " + std::to_string(value) + " of type float "
                         "cannot be converted to type int64 without overflow");
    }
    const auto integer = static_cast<std::int64_t>(value);
    if (is_narrow_int(dtype)) {  // as PyTorch's full: a narrow integer must hold the value
        const auto [low, high] = integer_range(dtype);
        if (integer < low || integer > high) {
            throw ValueError(std::string(op) + ": value " + std::to_string(integer) +
                             " cannot be converted to type " + to_string(dtype) +
                             " without overflow");
        }
    }
    return integer;
}

// Checks shape (rank, sizes >= 0, count) and returns its element count.
inline std::int64_t check_shape(const Shape& shape, const char* op) {
    check_rank(shape, op);
    for (const std::int64_t size : shape) {
        if (size < 0) {
            throw ValueError(std::string(op) + ": negative dimension in shape " +
                             to_string(shape));
        }
    }
    return checked_numel(shape, op);
}

// The in-place history of a view base (0 when it never took part in autograd).
std::uint64_t base_history_of(const TensorImpl& base);

inline Tensor with_view(const Tensor& base, Shape shape, Shape strides, std::int64_t offset,
                        const char* op = "view") {
    check_shape(shape, op);
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = base.impl().storage;
    impl->shape = std::move(shape);
    impl->strides = std::move(strides);
    impl->offset = offset;
    impl->dtype = base.dtype();
    impl->view_base = base.impl().view_base ? base.impl().view_base : base.impl_ptr();
    impl->base_history = base_history_of(*impl->view_base);
    return Tensor(impl);
}

// Gives out a backward node when input takes part in autograd; backward maps the output's
// gradient to input's.
template <typename Backward>
Tensor recorded(const Tensor& input, Tensor out, const char* name, Backward&& backward) {
    if (!is_grad_enabled() || !input.requires_grad()) {
        return out;
    }
    const autograd::Recording recording({input});
    return recording.finish(std::move(out), name,
                            [backward = std::forward<Backward>(backward)](const Tensor& grad) {
                                return std::vector<Tensor>{backward(grad)};
                            });
}

inline Tensor reshaped(const Tensor& input, Tensor out, const char* name) {
    return recorded(input, std::move(out), name,
                    [shape = input.shape()](const Tensor& grad) { return grad.reshape(shape); });
}

// Whether no two elements of a strided layout share memory, judged as for a permuted dense
// layout: sorted by stride, each dimension starts past everything the smaller ones span.
inline bool non_overlapping(const Shape& shape, const Shape& strides) {
    std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size) of sizes > 1
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] > 1) {
            dims.emplace_back(strides[d], shape[d]);
        }
    }
    std::sort(dims.begin(), dims.end());
    std::int64_t reach = 1;  // elements spanned by the dims sorted so far
    for (const auto& [stride, size] : dims) {
        if (stride < reach) {
            return false;
        }
        reach = stride * size;
    }
    return true;
}

// An uninitialized tensor of shape with these strides, over a block just long enough for them
// (a gradient laid out as its input, an f32 twin laid out as its low-precision original).
inline Tensor empty_with_strides(const Shape& shape, const Shape& strides, DType dtype,
                                 const Device& device) {
    std::int64_t extent = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0) {
            return empty(shape, dtype, device);
        }
        extent += (shape[d] - 1) * strides[d];
    }
    return empty({extent}, dtype, device).as_strided(shape, strides, 0);
}

}  // namespace kael::detail
