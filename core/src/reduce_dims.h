#pragma once
// Reductions over any set of dims in memory order, through the reduce_dims slot.
#include <optional>
#include <utility>
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

// What a reduction's results become before they are stored: r * scale, then its square root
// when root is set, in the input's dtype (mean: sum with scale 1 / n; var: variance with
// n / (n - correction); std: that and root).
struct Finish {
    double scale = 1.0;
    bool root = false;
};

// reduce_over() of a float tensor (op SUM, VARIANCE, NORM2 or LOGSUMEXP) with its results
// finished: in the last pass's own store where the plugin has reduce_dims_finished, else by
// elementwise ops on the results.
Tensor reduce_over(kael_reduce_op op, const Tensor& a, const std::vector<bool>& reduced,
                   Finish finish);

// Whether reduce_over reads a where it lies: a is laid out as a permutation of a dense block.
bool reads_in_place(const Tensor& a);

// The reduced dims of a (flagged in `reduced`; a read in place) that lie lowest in its memory
// when the reduced dims form several runs there (a variance covers one run a pass); nullopt
// when they form one run.
std::optional<std::vector<bool>> lowest_reduced_run(const Tensor& a,
                                                    const std::vector<bool>& reduced);

// The sizes {outer, kept, inner} when a's dims (a read in place) lie in memory as a run of
// reduced dims, a run of kept dims and a run of reduced dims (flagged in `reduced`), the
// layout of a per-channel reduction; nullopt for any other.
struct AroundKept {
    std::int64_t outer;
    std::int64_t kept;
    std::int64_t inner;
};
std::optional<AroundKept> around_kept_run(const Tensor& a, const std::vector<bool>& reduced);

// [kept] results of a in the memory order of its kept dims, as a contiguous tensor of the kept
// dims in logical order.
Tensor kept_in_logical_order(const Tensor& results, const Tensor& a,
                             const std::vector<bool>& reduced);

// max(dim)/min(dim) (op ARGMAX/ARGMIN) of a over dim (wrapped, of size > 0) in one pass of the
// reduce_indexed slot, read where a lies as reduce_over does: values and int64 indices, the dim
// dropped. Only for plugins with the slot (has_reduce_indexed).
std::pair<Tensor, Tensor> reduce_indexed_over(kael_reduce_op op, const Tensor& a, std::size_t dim);

}  // namespace kael::detail
