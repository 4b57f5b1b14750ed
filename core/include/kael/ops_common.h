#pragma once
// Ops PyTorch users reach for, composed from the kernels behind ops.h and ops_more.h (views,
// elementwise ops, reductions, sort, gather/scatter, matmul), so they run on every device and
// their gradients come from the ops they are made of. Names and semantics are PyTorch's.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kael/ops_more.h"

namespace kael {

// Shape. Views where PyTorch gives views (narrow, movedim, flatten and unflatten when the
// layout allows, mT, unbind); the others are copies.
[[nodiscard]] Tensor narrow(const Tensor& input, std::int64_t dim, std::int64_t start,
                            std::int64_t length);
[[nodiscard]] Tensor movedim(const Tensor& input, const Shape& source, const Shape& destination);
[[nodiscard]] Tensor flatten(const Tensor& input, std::int64_t start_dim = 0,
                             std::int64_t end_dim = -1);
[[nodiscard]] Tensor unflatten(const Tensor& input, std::int64_t dim, const Shape& sizes);
// Every dimension reversed (PyTorch's .T on any rank) / the last two swapped (.mT).
[[nodiscard]] Tensor reversed_dims(const Tensor& input);
[[nodiscard]] Tensor matrix_transpose(const Tensor& input);
// Only the listed dims of size 1 are removed (others are kept, as PyTorch).
[[nodiscard]] Tensor squeeze(const Tensor& input, const Shape& dims);
[[nodiscard]] std::vector<Tensor> unbind(const Tensor& input, std::int64_t dim = 0);
[[nodiscard]] Tensor view_as(const Tensor& input, const Tensor& other);
[[nodiscard]] Tensor reshape_as(const Tensor& input, const Tensor& other);
[[nodiscard]] Tensor expand_as(const Tensor& input, const Tensor& other);
[[nodiscard]] Tensor flip(const Tensor& input, const Shape& dims);
[[nodiscard]] Tensor fliplr(const Tensor& input);
[[nodiscard]] Tensor flipud(const Tensor& input);
// Without dims the tensor is rolled as if flattened, then given its shape back.
[[nodiscard]] Tensor roll(const Tensor& input, const Shape& shifts, const Shape& dims = {});
[[nodiscard]] Tensor repeat(const Tensor& input, const Shape& repeats);
[[nodiscard]] Tensor tile(const Tensor& input, const Shape& repeats);
// Each element repeated along dim (no dim: over the flattened input); repeats is one count
// for all, or an int64 tensor of one count per element of dim (synchronises for the total).
[[nodiscard]] Tensor repeat_interleave(const Tensor& input, std::int64_t repeats,
                                       std::optional<std::int64_t> dim = std::nullopt);
[[nodiscard]] Tensor repeat_interleave(const Tensor& input, const Tensor& repeats,
                                       std::optional<std::int64_t> dim = std::nullopt);
// Elements on and below (tril) or above (triu) the diagonal-th diagonal of the last two dims.
[[nodiscard]] Tensor tril(const Tensor& input, std::int64_t diagonal = 0);
[[nodiscard]] Tensor triu(const Tensor& input, std::int64_t diagonal = 0);

// Factories. m defaults to n. linspace has PyTorch's symmetric rounding (exact end points).
[[nodiscard]] Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt,
                         DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor linspace(double start, double end, std::int64_t steps,
                              DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor logspace(double start, double end, std::int64_t steps, double base = 10,
                              DType dtype = DType::F32, Device device = kCPU);

// Selection. Output sizes depend on the data, so these synchronise with the device once.
// nonzero: int64 [count, rank] coordinates of the non-zero elements in row-major order.
[[nodiscard]] Tensor nonzero(const Tensor& input);
struct UniqueResult {
    Tensor values;
    Tensor inverse;  // int64, input's shape (dim: [size of dim]); defined when asked
    Tensor counts;   // int64; defined when asked
};
// Sorted unique elements (or slices along dim); consecutive: only runs of equal neighbours
// collapse, without sorting.
[[nodiscard]] UniqueResult unique(const Tensor& input, bool return_inverse = false,
                                  bool return_counts = false,
                                  std::optional<std::int64_t> dim = std::nullopt);
[[nodiscard]] UniqueResult unique_consecutive(const Tensor& input, bool return_inverse = false,
                                              bool return_counts = false,
                                              std::optional<std::int64_t> dim = std::nullopt);
// Counts of each value of a 1-d non-negative int64 input (or sums of weights at them).
[[nodiscard]] Tensor bincount(const Tensor& input, const Tensor& weights = Tensor(),
                              std::int64_t minlength = 0);
// Lower median; NaN when the row holds one (its index then that NaN's), as PyTorch.
[[nodiscard]] Tensor median(const Tensor& input);
[[nodiscard]] std::pair<Tensor, Tensor> median(const Tensor& input, std::int64_t dim,
                                               bool keepdim = false);
// The k-th smallest (1-based) along dim, with its index.
[[nodiscard]] std::pair<Tensor, Tensor> kthvalue(const Tensor& input, std::int64_t k,
                                                 std::int64_t dim = -1, bool keepdim = false);
// Where values would be inserted into the last dim of sorted to keep it sorted: sorted is 1-d
// or has values' leading dims. right: after equal elements.
[[nodiscard]] Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right = false);

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

// einsum over any number of operands, contracted left to right through matmul. Labels are
// letters; '...' stands for broadcast dims; without '->' the output is the labels used once,
// sorted; a label repeated in one operand takes its diagonal.
[[nodiscard]] Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

// In-place forms (write_into's rules: castable result, no leaf that requires grad).
Tensor& add_(Tensor& a, const Tensor& b, double alpha, const char* op);
Tensor& sub_(Tensor& a, const Tensor& b, double alpha, const char* op);
Tensor& pow_(Tensor& a, const Tensor& exponent);
// The unary in-place forms; name is PyTorch's ("neg_", "abs_", "exp_", "log_", "sqrt_",
// "sigmoid_", "tanh_", "relu_"), ValueError for any other.
Tensor& unary_(Tensor& a, const std::string& name);
// Undefined bounds are absent; bounds broadcast to a's shape.
Tensor& clamp_(Tensor& a, const Tensor& min, const Tensor& max);
Tensor& index_add_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& source,
                   double alpha = 1);
Tensor& index_fill_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& value);
// a[index[i][j]][j] = src[i][j] (dim 0; src a tensor or a 0-d value); reduce "add" adds.
Tensor& scatter_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce = "");
[[nodiscard]] Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor& lerp_(Tensor& start, const Tensor& end, const Tensor& weight);
[[nodiscard]] Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, double value);
[[nodiscard]] Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, double value);
Tensor& addcmul_(Tensor& a, const Tensor& t1, const Tensor& t2, double value);
Tensor& addcdiv_(Tensor& a, const Tensor& t1, const Tensor& t2, double value);

}  // namespace kael
