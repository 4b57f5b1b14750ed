#pragma once
// Index kernels for callers that validated their indices already (gather, scatter_add_,
// index_select and advanced indexing share them); each records autograd like the public op.
#include "kael/tensor.h"

namespace kael::detail {

// IndexError "<op>: <what> V is out of bounds for dimension axis with size S" unless every
// index lies in [0, size), or in [-size, size) when negative_wraps. Returns the smallest index
// (0 for an empty one); one host sync for min and max.
std::int64_t check_index_range(const Tensor& index, std::int64_t size, std::int64_t axis,
                               bool negative_wraps, const char* op, const char* what = "index");
// gather(data, axis, index) for an index already known to be in range.
[[nodiscard]] Tensor gather_unchecked(const Tensor& data, std::int64_t axis, const Tensor& index);
// scatter_add_(data, axis, index, source) for an index already known to be in range.
void scatter_add_unchecked(Tensor& data, std::int64_t axis, const Tensor& index,
                           const Tensor& source);

}  // namespace kael::detail
