#pragma once
// Shape, joins, indexing, selection and factories: views where PyTorch gives views, copies
// otherwise; the gather, scatter and index kernels behind the indexing ops.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kael/tensor.h"

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

// Joins. Every tensor has the same rank and the same sizes outside dim (cat; 1-d empty tensors
// are skipped as in torch) or the same shape (stack); the result has the promoted dtype.
[[nodiscard]] Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
[[nodiscard]] Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);

// Consecutive views along dim: of the given sizes (which add up to its size), of split_size
// each (the last may be shorter), or `chunks` pieces of ceil(size / chunks). One autograd node
// records them all; its backward writes no copy when their gradients tile one buffer.
[[nodiscard]] std::vector<Tensor> split(const Tensor& input,
                                        const std::vector<std::int64_t>& sizes,
                                        std::int64_t dim = 0);
[[nodiscard]] std::vector<Tensor> split(const Tensor& input, std::int64_t split_size,
                                        std::int64_t dim = 0);
[[nodiscard]] std::vector<Tensor> chunk(const Tensor& input, std::int64_t chunks,
                                        std::int64_t dim = 0);

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

// In-place indexing (write_into's rules: castable result, no leaf that requires grad).
Tensor& index_add_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& source,
                   double alpha = 1);
Tensor& index_fill_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& value);
// a[index[i][j]][j] = src[i][j] (dim 0; src a tensor or a 0-d value); reduce "add" adds.
Tensor& scatter_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce = "");

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
// Where values would be inserted into the last dim of sorted to keep it sorted: sorted is 1-d
// or has values' leading dims. right: after equal elements.
[[nodiscard]] Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right = false);

// Factories. m defaults to n. linspace has PyTorch's symmetric rounding (exact end points).
[[nodiscard]] Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt,
                         DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor linspace(double start, double end, std::int64_t steps,
                              DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor logspace(double start, double end, std::int64_t steps, double base = 10,
                              DType dtype = DType::F32, Device device = kCPU);

}  // namespace kael
