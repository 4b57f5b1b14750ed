#include "reduce_dims.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael::detail {

namespace {

// A stretch of memory order whose dims are all reduced or all kept.
struct Run {
    std::int64_t size;
    bool reduced;
};

// a's dims of size > 1 from the largest stride to the smallest, when they tile one dense block
// of memory starting at a's first element; nullopt for gaps, overlaps or negative strides.
std::optional<std::vector<std::size_t>> memory_order(const Tensor& a) {
    std::vector<std::size_t> dims;
    for (std::size_t d = 0; d < a.shape().size(); ++d) {
        if (a.shape()[d] != 1) {
            dims.push_back(d);
        }
    }
    std::stable_sort(dims.begin(), dims.end(),
                     [&](std::size_t x, std::size_t y) { return a.strides()[x] > a.strides()[y]; });
    std::int64_t expected = 1;
    for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
        if (a.strides()[*d] != expected) {
            return std::nullopt;
        }
        expected *= a.shape()[*d];
    }
    return dims;
}

// The runs of input's dims in memory order (order, from memory_order): adjacent dims alike in
// `reduced` merged into one run of their product.
std::vector<Run> memory_runs(const Tensor& input, const std::vector<std::size_t>& order,
                             const std::vector<bool>& reduced) {
    std::vector<Run> runs;
    for (const std::size_t d : order) {
        if (!runs.empty() && runs.back().reduced == reduced[d]) {
            runs.back().size *= input.shape()[d];
        } else {
            runs.push_back({input.shape()[d], reduced[d]});
        }
    }
    return runs;
}

bool is_arg(kael_reduce_op op) {
    return op == KAEL_REDUCE_ARGMAX || op == KAEL_REDUCE_ARGMIN;
}

std::int64_t product(const std::vector<Run>& runs, std::size_t begin, std::size_t end) {
    std::int64_t total = 1;
    for (std::size_t k = begin; k < end; ++k) {
        total *= runs[k].size;
    }
    return total;
}

// A reduction's result, whose kept dims lie in memory order, as a contiguous tensor of
// kept_shape: a view when that is their logical order, else a copy (small next to the input).
Tensor in_logical_order(const Tensor& current, const Tensor& input,
                        const std::vector<bool>& reduced, const Shape& kept_shape,
                        const std::vector<std::size_t>& kept_in_memory_order) {
    if (std::is_sorted(kept_in_memory_order.begin(), kept_in_memory_order.end())) {
        return current.view(kept_shape);
    }
    std::vector<std::int64_t> kept_position(reduced.size(), 0);
    for (std::size_t d = 0, position = 0; d < reduced.size(); ++d) {
        if (!reduced[d]) {
            kept_position[d] = static_cast<std::int64_t>(position++);
        }
    }
    Shape strides(kept_shape.size(), 1);
    std::int64_t stride = 1;
    for (auto d = kept_in_memory_order.rbegin(); d != kept_in_memory_order.rend(); ++d) {
        strides[static_cast<std::size_t>(kept_position[*d])] = stride;
        stride *= input.shape()[*d];
    }
    return current.as_strided(kept_shape, strides, 0).contiguous();
}

}  // namespace

// The out column of plugin_api.h's reduce op table.
DType reduced_dtype(kael_reduce_op op, DType dtype) {
    int writes = KAEL_REDUCE_WRITES_SAME;
    switch (op) {
#define KAEL_REDUCE_OP_WRITES(op, value, name, in, out, empty, since) \
    case KAEL_REDUCE_##op: writes = KAEL_REDUCE_WRITES_##out; break;
        KAEL_REDUCE_OPS(KAEL_REDUCE_OP_WRITES)
#undef KAEL_REDUCE_OP_WRITES
        default: break;
    }
    switch (writes) {
        case KAEL_REDUCE_WRITES_WIDE: return is_floating(dtype) ? dtype : DType::I64;
        case KAEL_REDUCE_WRITES_I64: return DType::I64;
        case KAEL_REDUCE_WRITES_F64: return DType::F64;
        default: return dtype;
    }
}

namespace {

// The results of a plugin without reduce_dims_finished, finished as that slot does.
Tensor finished_by_ops(Tensor result, DType dtype, const Finish& finish) {
    if (finish.scale != 1.0) {
        result = result * finish.scale;
    }
    if (finish.root) {
        result = sqrt(result);
    }
    return result.to(dtype);
}

// One pass: the plain op, or the finished one on the last pass where the plugin has it.
void reduce_pass(kael_reduce_op op, const Tensor& out, const Tensor& block, std::int64_t outer,
                 std::int64_t size, std::int64_t inner, const Finish* finish) {
    if (finish != nullptr) {
        reduce_dims_finished(op, out, block, outer, size, inner, finish->scale, finish->root);
    } else {
        reduce_dims(op, out, block, outer, size, inner);
    }
}

Tensor reduce_over_impl(kael_reduce_op op, const Tensor& a, const std::vector<bool>& reduced,
                        const Finish* finish) {
    Shape kept_shape;
    for (std::size_t d = 0; d < reduced.size(); ++d) {
        if (!reduced[d]) {
            kept_shape.push_back(a.shape()[d]);
        }
    }
    const DType out_dtype = finish != nullptr ? a.dtype() : reduced_dtype(op, a.dtype());
    if (a.numel() == 0) {  // identities (sum, prod) or nothing to write
        Tensor out = empty(kept_shape, out_dtype, a.device());
        reduce_pass(op, out, a, out.numel(), 0, 1, finish);
        return out;
    }
    const bool all_reduced = std::all_of(reduced.begin(), reduced.end(), [](bool r) { return r; });
    if (all_reduced && a.is_contiguous()) {  // the commonest call (a loss, a mean) in one pass
        Tensor out = empty({}, out_dtype, a.device());
        reduce_pass(op, out, a, 1, a.numel(), 1, finish);
        return out;
    }
    Tensor input = a;
    std::optional<std::vector<std::size_t>> order = memory_order(input);
    if (!order || (is_arg(op) && all_reduced && !input.is_contiguous())) {
        input = a.contiguous();
        order = memory_order(input);
    }
    std::vector<Run> runs = memory_runs(input, *order, reduced);
    if (std::none_of(runs.begin(), runs.end(), [](const Run& run) { return run.reduced; })) {
        runs.push_back({1, true});  // only dims of size 1 are reduced
    }
    // Runs reduce one after the other, which a variance cannot (a variance of variances is not
    // the variance); its callers reduce one dim or all, always one run.
    if (op == KAEL_REDUCE_VARIANCE &&
        std::count_if(runs.begin(), runs.end(), [](const Run& run) { return run.reduced; }) > 1) {
        throw std::logic_error("reduce_over: variance over separate runs of memory");
    }
    // Innermost reduced run first; the result keeps the other runs in memory order.
    Tensor current = input.as_strided({input.numel()}, {1}, input.offset());
    for (;;) {
        const auto last =
            std::find_if(runs.rbegin(), runs.rend(), [](const Run& run) { return run.reduced; });
        if (last == runs.rend()) {
            break;
        }
        const auto k = static_cast<std::size_t>(runs.rend() - last - 1);
        const std::int64_t outer = product(runs, 0, k);
        const std::int64_t inner = product(runs, k + 1, runs.size());
        const bool last_pass = std::count_if(runs.begin(), runs.end(),
                                             [](const Run& run) { return run.reduced; }) == 1;
        const Finish* pass_finish = last_pass ? finish : nullptr;
        DType pass_dtype =
            pass_finish != nullptr ? current.dtype() : reduced_dtype(op, current.dtype());
        // bf16/f16 sums, products, norms and logsumexps keep their partial results in f32
        // between passes and are rounded once: by the last pass where the plugin can (ABI 1.20's
        // LAST_PASS; run() widens the call for one that cannot), else below (finished ones).
        if (is_low_precision(a.dtype()) &&
            (op == KAEL_REDUCE_SUM || op == KAEL_REDUCE_PROD || op == KAEL_REDUCE_NORM2 ||
             op == KAEL_REDUCE_LOGSUMEXP)) {
            if (!last_pass) {
                pass_dtype = DType::F32;
            } else if (pass_finish == nullptr) {
                pass_dtype = a.dtype();
            }
        }
        Tensor next = empty({outer * inner}, pass_dtype, a.device());
        reduce_pass(op, next, current, outer, runs[k].size, inner, pass_finish);
        current = next;
        runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(k));
        if (k > 0 && k < runs.size() && !runs[k - 1].reduced && !runs[k].reduced) {
            runs[k - 1].size *= runs[k].size;
            runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(k));
        }
    }
    if (current.dtype() != out_dtype) {
        current = current.to(out_dtype);
    }
    return kept_in_logical_order(current, input, reduced);
}

}  // namespace

Tensor reduce_over(kael_reduce_op op, const Tensor& a, const std::vector<bool>& reduced) {
    const NoGradGuard no_grad;  // callers record the reduction as one node
    return reduce_over_impl(op, a, reduced, nullptr);
}

Tensor reduce_over(kael_reduce_op op, const Tensor& a, const std::vector<bool>& reduced,
                   Finish finish) {
    const NoGradGuard no_grad;
    if (has_reduce_dims_finished(a)) {
        return reduce_over_impl(op, a, reduced, &finish);
    }
    return finished_by_ops(reduce_over_impl(op, a, reduced, nullptr), a.dtype(), finish);
}

bool reads_in_place(const Tensor& a) {
    return memory_order(a).has_value();
}

std::optional<std::vector<bool>> lowest_reduced_run(const Tensor& a,
                                                    const std::vector<bool>& reduced) {
    const std::optional<std::vector<std::size_t>> order = memory_order(a);
    if (!order) {
        throw std::logic_error("lowest_reduced_run: a tensor reduce_over copies first");
    }
    std::vector<bool> lowest(reduced.size(), false);
    auto d = order->rbegin();
    for (; d != order->rend() && !reduced[*d]; ++d) {
    }
    for (; d != order->rend() && reduced[*d]; ++d) {
        lowest[*d] = true;
    }
    if (std::none_of(d, order->rend(), [&](std::size_t dim) { return reduced[dim]; })) {
        return std::nullopt;
    }
    return lowest;
}

std::optional<AroundKept> around_kept_run(const Tensor& a, const std::vector<bool>& reduced) {
    const std::optional<std::vector<std::size_t>> order = memory_order(a);
    if (!order) {
        return std::nullopt;
    }
    const std::vector<Run> runs = memory_runs(a, *order, reduced);
    if (runs.size() != 3 || !runs[0].reduced) {
        return std::nullopt;
    }
    return AroundKept{runs[0].size, runs[1].size, runs[2].size};
}

Tensor kept_in_logical_order(const Tensor& results, const Tensor& a,
                             const std::vector<bool>& reduced) {
    Shape kept_shape;
    for (std::size_t d = 0; d < reduced.size(); ++d) {
        if (!reduced[d]) {
            kept_shape.push_back(a.shape()[d]);
        }
    }
    const std::vector<std::size_t> order = memory_order(a).value();
    std::vector<std::size_t> kept_in_memory_order;
    for (const std::size_t d : order) {
        if (!reduced[d]) {
            kept_in_memory_order.push_back(d);
        }
    }
    return in_logical_order(results, a, reduced, kept_shape, kept_in_memory_order);
}

std::pair<Tensor, Tensor> reduce_indexed_over(kael_reduce_op op, const Tensor& a, std::size_t dim) {
    const NoGradGuard no_grad;
    std::vector<bool> reduced(a.shape().size(), false);
    reduced[dim] = true;
    Shape kept_shape = a.shape();
    kept_shape.erase(kept_shape.begin() + static_cast<std::ptrdiff_t>(dim));
    Tensor input = a;
    std::optional<std::vector<std::size_t>> order = memory_order(input);
    if (!order || a.shape()[dim] == 1) {  // a dim of size 1 has no place in memory order
        input = a.contiguous();
        order = std::vector<std::size_t>(a.shape().size());
        std::iota(order->begin(), order->end(), std::size_t{0});
    }
    // One reduced dim: outer is what lies above it in memory, inner what lies below.
    std::int64_t outer = 1;
    std::int64_t inner = 1;
    bool below = false;
    std::vector<std::size_t> kept_in_memory_order;
    for (const std::size_t d : *order) {
        if (d == dim) {
            below = true;
            continue;
        }
        kept_in_memory_order.push_back(d);
        (below ? inner : outer) *= input.shape()[d];
    }
    Tensor values = empty({outer * inner}, a.dtype(), a.device());
    Tensor indices = empty({outer * inner}, DType::I64, a.device());
    reduce_indexed(op, values, indices, input.as_strided({input.numel()}, {1}, input.offset()),
                   outer, a.shape()[dim], inner);
    return {in_logical_order(values, input, reduced, kept_shape, kept_in_memory_order),
            in_logical_order(indices, input, reduced, kept_shape, kept_in_memory_order)};
}

}  // namespace kael::detail
