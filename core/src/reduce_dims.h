#pragma once
// Reductions over any set of dims in memory order, through the reduce_dims slot.
#include <vector>

#include "kael/plugin_api.h"
#include "kael/tensor.h"

namespace kael::detail {

// The dtype op writes for input of dtype (sum and prod of integers and bool widen to int64).
DType reduced_dtype(kael_reduce_op op, DType dtype);

// op over the dims of a flagged in `reduced` (one flag per dim), kept dims in order and the
// result contiguous. A tensor laid out as a permutation of a dense block (contiguous, a
// transpose, a permute) is read where it lies, reduced dims adjacent in memory in one pass and
// separate runs one after the other; other layouts are copied contiguous first. Arg ops reduce
// one dim, or all dims of a contiguous copy (their index is the logical flat index); variance
// one dim or all.
Tensor reduce_over(kael_reduce_op op, const Tensor& a, const std::vector<bool>& reduced);

}  // namespace kael::detail
