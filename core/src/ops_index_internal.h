#pragma once
// Index kernels for callers that validated their indices already (gather, scatter_add_,
// index_select and advanced indexing share them); each records autograd like the public op.
#include "kael/tensor.h"

namespace kael::detail {

// IndexError "<op>: <what> V is out of bounds for dimension axis with size S" unless every
// index lies in [0, size), or in [-size, size) when negative_wraps; V is the first offending
// index in row-major order. A device whose plugin has check_indices checks asynchronously and
// reports the error at its next synchronising call (item(), to(cpu), printing); for others
// the indices are copied to the host and checked there (one sync).
void check_index_range(const Tensor& index, std::int64_t size, std::int64_t axis,
                       bool negative_wraps, const char* op, const char* what = "index");
// index_select(data, axis, index) with errors naming op; index is 1-d and axis wrapped.
[[nodiscard]] Tensor index_select_named(const Tensor& data, std::int64_t axis, const Tensor& index,
                                        const char* op);
// gather(data, axis, index) for an index already known to be in range.
[[nodiscard]] Tensor gather_unchecked(const Tensor& data, std::int64_t axis, const Tensor& index);
// scatter_add_(data, axis, index, source) for an index already known to be in range.
void scatter_add_unchecked(Tensor& data, std::int64_t axis, const Tensor& index,
                           const Tensor& source);

}  // namespace kael::detail
