#pragma once
// Aliasing between the tensors of one kernel call, so that every device gives the answer a
// sequential read-then-write would: partial overlap is copied away, self-overlapping outputs refused.
#include "kael/tensor.h"

namespace kael::detail {

// True when some element of a and b may share bytes (same storage, intersecting extents).
[[nodiscard]] bool may_overlap(const Tensor& a, const Tensor& b);
// True when input, broadcast to out's shape, addresses exactly out's elements in out's order:
// an elementwise kernel may then read and write in place.
[[nodiscard]] bool same_elements(const Tensor& out, const Tensor& input);
// Throws ValueError naming op when two elements of out share memory (an expanded tensor).
void check_no_internal_overlap(const Tensor& out, const char* op);

}  // namespace kael::detail
