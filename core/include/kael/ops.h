#pragma once
// Operations. All operands must live on one device; scalars follow the tensor's device.
// Every op runs through a plugin kernel; nothing here touches tensor data on the host.
#include <optional>

#include "kael/ops_math.h"
#include "kael/tensor.h"

namespace kael {

// Elementwise, with broadcasting and type promotion.
[[nodiscard]] Tensor add(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor sub(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor mul(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor div(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor pow(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor maximum(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor minimum(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor eq(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor ne(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor lt(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor le(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor gt(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor ge(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor logical_and(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor logical_or(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor logical_not(const Tensor& a);
[[nodiscard]] Tensor neg(const Tensor& a);
[[nodiscard]] Tensor abs(const Tensor& a);
[[nodiscard]] Tensor sign(const Tensor& a);
[[nodiscard]] Tensor exp(const Tensor& a);
[[nodiscard]] Tensor log(const Tensor& a);
[[nodiscard]] Tensor sqrt(const Tensor& a);
[[nodiscard]] Tensor rsqrt(const Tensor& a);
[[nodiscard]] Tensor sin(const Tensor& a);
[[nodiscard]] Tensor cos(const Tensor& a);
[[nodiscard]] Tensor tanh(const Tensor& a);
[[nodiscard]] Tensor sigmoid(const Tensor& a);
[[nodiscard]] Tensor relu(const Tensor& a);
[[nodiscard]] Tensor gelu(const Tensor& a, bool tanh_approximation = false);
[[nodiscard]] Tensor square(const Tensor& a);
[[nodiscard]] Tensor reciprocal(const Tensor& a);
[[nodiscard]] Tensor relu_backward(const Tensor& input, const Tensor& grad);
[[nodiscard]] Tensor sigmoid_backward(const Tensor& input, const Tensor& grad);
// grad * d/dx gelu(input), one fused kernel (tanh_approximation as in gelu).
[[nodiscard]] Tensor gelu_backward(const Tensor& input, const Tensor& grad,
                                   bool tanh_approximation = false);
[[nodiscard]] Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor clamp(const Tensor& a, double low, double high);
[[nodiscard]] Tensor clamp_int(const Tensor& a, std::int64_t low, std::int64_t high);
[[nodiscard]] Tensor masked_fill(const Tensor& a, const Tensor& mask, double value);
[[nodiscard]] Tensor masked_fill_int(const Tensor& a, const Tensor& mask, std::int64_t value);

// In-place forms (PyTorch's add_, +=, ...): the result is written into a's elements. It must be
// castable to a's dtype (no float into an integer tensor: TypeError); a may not be expanded.
// op names the operation in errors ("+=" from Python).
Tensor& add_(Tensor& a, const Tensor& b, const char* op = "add_");
Tensor& sub_(Tensor& a, const Tensor& b, const char* op = "sub_");
Tensor& mul_(Tensor& a, const Tensor& b, const char* op = "mul_");
Tensor& div_(Tensor& a, const Tensor& b, const char* op = "div_");
// Writes value (one element) where mask (broadcast to a's shape) is true.
Tensor& masked_fill_(Tensor& a, const Tensor& mask, const Tensor& value);

// Reductions; dim may be negative. keepdim keeps the reduced dimension with size 1.
[[nodiscard]] Tensor sum(const Tensor& a);
[[nodiscard]] Tensor sum(const Tensor& a, std::int64_t dim, bool keepdim = false);
[[nodiscard]] Tensor mean(const Tensor& a);
[[nodiscard]] Tensor mean(const Tensor& a, std::int64_t dim, bool keepdim = false);
// Over several dims at once; a repeated dim is a ValueError, an empty list reduces all.
[[nodiscard]] Tensor sum(const Tensor& a, const Shape& dims, bool keepdim = false);
[[nodiscard]] Tensor mean(const Tensor& a, const Shape& dims, bool keepdim = false);
[[nodiscard]] Tensor prod(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                          bool keepdim = false);
[[nodiscard]] Tensor max(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         bool keepdim = false);
[[nodiscard]] Tensor min(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         bool keepdim = false);
[[nodiscard]] Tensor argmax(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                            bool keepdim = false);
[[nodiscard]] Tensor argmin(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                            bool keepdim = false);

// Matrix products: 1-d operands as in numpy, batch dimensions broadcast.
[[nodiscard]] Tensor matmul(const Tensor& a, const Tensor& b);

// out[i][j] = data[i][index[i][j]] (for axis 1); index is i64, checked on the host first.
[[nodiscard]] Tensor gather(const Tensor& data, std::int64_t axis, const Tensor& index);
// data[i][index[i][j]] += source[i][j] (for axis 1), in place.
Tensor& scatter_add_(Tensor& data, std::int64_t axis, const Tensor& index, const Tensor& source);
[[nodiscard]] Tensor index_select(const Tensor& data, std::int64_t axis, const Tensor& index);
// gather, scatter_add_ and index_select take indices in [0, size): negative ones are an
// IndexError, as in PyTorch. Advanced indexing below wraps them.

// Advanced indexing, self[indices] in numpy and PyTorch (at::index): each entry of indices, in
// order, is undefined (all of one dimension), i64 (one dimension; negative indices wrap) or
// bool (a mask over as many dimensions as it has, standing for its true positions); dimensions
// past the list are kept whole. The index tensors broadcast together to a shape B that replaces
// the dimensions they consume: in place when those are adjacent, first otherwise. Indices may
// live on cpu or on self's device. Always a copy; gradients flow to self.
[[nodiscard]] Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
// self[indices] = values in place, values broadcast to the shape index() would give. With
// accumulate, values at repeated positions add up (bool: or); otherwise one of them is written.
Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate = false);

// Operators.
[[nodiscard]] Tensor operator+(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator-(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator*(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator/(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator-(const Tensor& a);
[[nodiscard]] Tensor operator+(const Tensor& a, double b);
[[nodiscard]] Tensor operator-(const Tensor& a, double b);
[[nodiscard]] Tensor operator*(const Tensor& a, double b);
[[nodiscard]] Tensor operator/(const Tensor& a, double b);
[[nodiscard]] Tensor operator+(double a, const Tensor& b);
[[nodiscard]] Tensor operator*(double a, const Tensor& b);

// True when every element of a and b (broadcast together) is within tolerance, as PyTorch's:
// NaN equals NaN only with equal_nan; different dtypes are a TypeError.
[[nodiscard]] bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                            double atol = 1e-8, bool equal_nan = false);

}  // namespace kael
