#pragma once
// Reductions, scans and sorting along dims: the reduce, reduce_dims, reduce_indexed, scan and
// sort kernels, and the ops composed from them. dim may be negative; keepdim keeps a reduced
// dimension with size 1.
#include <cstdint>
#include <optional>
#include <utility>

#include "kael/tensor.h"

namespace kael {

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

// Reductions; dim may be negative; no dim reduces over every element.
// var/stddev divide by max(n - correction, 0) (NaN for too few elements); floating only.
[[nodiscard]] Tensor var(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         std::int64_t correction = 1, bool keepdim = false);
[[nodiscard]] Tensor stddev(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                            std::int64_t correction = 1, bool keepdim = false);
// Euclidean norm of all elements; floating only.
[[nodiscard]] Tensor norm(const Tensor& a);
// Truth of every / any element (non-zero is true); bool result; empty: all true, any false.
[[nodiscard]] Tensor all(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         bool keepdim = false);
[[nodiscard]] Tensor any(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         bool keepdim = false);
// log(sum(exp(a), dim)) without overflow; integers compute in f32; an empty dim gives -inf.
[[nodiscard]] Tensor logsumexp(const Tensor& a, std::int64_t dim, bool keepdim = false);
// Over several dims (an empty list: every dim), as torch.logsumexp with a tuple.
[[nodiscard]] Tensor logsumexp(const Tensor& a, const Shape& dims, bool keepdim = false);

// Reductions over a set of dims (empty: every dim). amax/amin split the gradient evenly among
// ties, as PyTorch.
[[nodiscard]] Tensor amax(const Tensor& input, const Shape& dims = {}, bool keepdim = false);
[[nodiscard]] Tensor amin(const Tensor& input, const Shape& dims = {}, bool keepdim = false);
// (values, indices) along dim: PyTorch's max(dim) / min(dim).
[[nodiscard]] std::pair<Tensor, Tensor> max_with_indices(const Tensor& input, std::int64_t dim,
                                                         bool keepdim = false);
[[nodiscard]] std::pair<Tensor, Tensor> min_with_indices(const Tensor& input, std::int64_t dim,
                                                         bool keepdim = false);
// torch.linalg.vector_norm: ord 0 (count of non-zeros), inf, -inf or any other p; floating only.
[[nodiscard]] Tensor vector_norm(const Tensor& input, double ord = 2,
                                 std::optional<Shape> dims = std::nullopt, bool keepdim = false);
// torch.norm with a numeric p (its "fro" is p = 2 over the dims).
[[nodiscard]] Tensor norm(const Tensor& input, double p, std::optional<Shape> dims,
                          bool keepdim = false);
// var / std over several dims at once (empty: every dim).
[[nodiscard]] Tensor var(const Tensor& input, const Shape& dims, std::int64_t correction,
                         bool keepdim = false);
[[nodiscard]] Tensor stddev(const Tensor& input, const Shape& dims, std::int64_t correction,
                            bool keepdim = false);
// Inclusive prefix products along dim (integers and bool give int64), exact with zeros and
// negatives: log2(n) rounds of products of shifted slices, so its gradient is theirs.
[[nodiscard]] Tensor cumprod(const Tensor& input, std::int64_t dim);

// Sequence family over one dimension. sort is stable and puts NaN after every number (first
// when descending); returns (values, i64 indices into dim).
[[nodiscard]] std::pair<Tensor, Tensor> sort(const Tensor& a, std::int64_t dim = -1,
                                             bool descending = false);
[[nodiscard]] Tensor argsort(const Tensor& a, std::int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along dim, in sorted order; values are gathered from a.
[[nodiscard]] std::pair<Tensor, Tensor> topk(const Tensor& a, std::int64_t k,
                                             std::int64_t dim = -1, bool largest = true);
// Inclusive prefix sums along dim; floats keep their dtype (double accumulation), integers
// and bool give i64.
[[nodiscard]] Tensor cumsum(const Tensor& a, std::int64_t dim);

// Lower median; NaN when the row holds one (its index then that NaN's), as PyTorch.
[[nodiscard]] Tensor median(const Tensor& input);
[[nodiscard]] std::pair<Tensor, Tensor> median(const Tensor& input, std::int64_t dim,
                                               bool keepdim = false);
// The k-th smallest (1-based) along dim, with its index.
[[nodiscard]] std::pair<Tensor, Tensor> kthvalue(const Tensor& input, std::int64_t k,
                                                 std::int64_t dim = -1, bool keepdim = false);

// True when every element of a and b (broadcast together) is within tolerance, as PyTorch's:
// NaN equals NaN only with equal_nan; different dtypes are a TypeError.
[[nodiscard]] bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                            double atol = 1e-8, bool equal_nan = false);

}  // namespace kael
