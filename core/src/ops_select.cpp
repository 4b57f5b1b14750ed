// Factories (eye, linspace, logspace) and data-dependent selections (nonzero, unique, bincount,
// median, kthvalue, searchsorted) composed from comparisons, sort, cumsum, boolean-mask
// indexing and scatter_add_. A size that depends on the data is read back once, as PyTorch does.
#include <cmath>
#include <limits>
#include <string>

#include "dims.h"
#include "kael/ops.h"

namespace kael {

namespace {

Tensor i64_scalar(std::int64_t value, const Device& device) {
    return full_int({}, value, DType::I64, device);
}

// Positions 0..n-1 of a bool 1-d mask where it is true, in order.
Tensor true_positions(const Tensor& mask) {
    return index(arange_int(0, mask.numel(), 1, DType::I64, mask.device()), {mask});
}

// Whether each row of a [n, k] tensor differs from the row before (the first always does).
Tensor starts_run(const Tensor& rows) {
    const std::int64_t n = rows.size(0);
    const Tensor first = full({1}, 1, DType::Bool, rows.device());
    if (n <= 1) {
        return first.expand({n}).contiguous();
    }
    const Tensor differs = ne(rows.slice(0, 1, n), rows.slice(0, 0, n - 1));
    return cat({first, any(differs.reshape({n - 1, -1}), 1)}, 0);
}

// Runs of equal rows of `rows` [n, k] (in the order given) as unique's results; order maps
// row i of `rows` to its position in the original input.
UniqueResult collapse_runs(const Tensor& rows, const Tensor& order, bool return_inverse,
                           bool return_counts) {
    const std::int64_t n = rows.size(0);
    const Tensor starts = starts_run(rows);
    UniqueResult result;
    result.values = index(rows, {starts});
    if (return_inverse) {
        const Tensor group = cumsum(starts, 0) - i64_scalar(1, rows.device());
        result.inverse = zeros({n}, DType::I64, rows.device());
        scatter_add_(result.inverse, 0, order, group);
    }
    if (return_counts) {
        const Tensor begin = true_positions(starts);
        const Tensor end = cat({begin.slice(0, 1, begin.numel()), i64_scalar(n, rows.device())
                                                                      .reshape({1})}, 0);
        result.counts = end - begin;
    }
    return result;
}

UniqueResult unique_impl(const Tensor& input, bool return_inverse, bool return_counts,
                         std::optional<std::int64_t> dim, bool sorted, const char* op) {
    const Device& device = input.device();
    if (dim && input.dim() == 0) {
        throw IndexError(std::string(op) + ": dimension " + std::to_string(*dim) +
                         " was given, but the tensor is 0-d (it has no dimensions)");
    }
    const Tensor moved = dim ? movedim(input, {detail::wrapped_dim(input, *dim, op)}, {0})
                             : input.reshape({-1});
    if (moved.dim() == 0) {
        return unique_impl(input.reshape({1}), return_inverse, return_counts, dim, sorted, op);
    }
    const std::int64_t n = moved.size(0);
    if (n == 0 || moved.numel() == 0) {
        // Nothing to compare: no values (or n empty slices, all equal) and no counts to read.
        const Tensor none = zeros({0}, DType::I64, device);
        const bool one_group = n > 0;
        UniqueResult result{one_group ? moved.slice(0, 0, 1) : moved, Tensor(), Tensor()};
        if (return_inverse) {
            result.inverse = zeros(dim ? Shape{n} : input.shape(), DType::I64, device);
        }
        if (return_counts) {
            result.counts = one_group ? full_int({1}, n, DType::I64, device) : none;
        }
        if (dim) {
            result.values = movedim(result.values, {0}, {detail::wrapped_dim(input, *dim, op)});
        }
        return result;
    }
    Tensor rows = moved.reshape({n, -1});
    Tensor order = arange_int(0, n, 1, DType::I64, device);
    if (sorted && n > 0) {
        // Rows in lexicographic order: stable sorts by each column, the last one first.
        for (std::int64_t column = rows.size(1) - 1; column >= 0; --column) {
            const Tensor keys = index_select(rows.select(1, column), 0, order);
            order = index_select(order, 0, argsort(keys, 0));
        }
        rows = index_select(rows, 0, order);
    }
    UniqueResult result = collapse_runs(rows, order, return_inverse, return_counts);
    Shape shape = moved.shape();
    shape[0] = result.values.size(0);
    result.values = result.values.reshape(shape);
    if (dim) {
        result.values = movedim(result.values, {0}, {detail::wrapped_dim(input, *dim, op)});
    } else if (return_inverse) {
        result.inverse = result.inverse.reshape(input.shape());
    }
    return result;
}

// Row position of the answer along dim of sorted input: pick, or the first NaN of a row
// holding one (sort puts NaN last), as PyTorch's median propagates NaN.
std::pair<Tensor, Tensor> pick_sorted(const Tensor& input, std::int64_t dim, std::int64_t pick,
                                      bool keepdim, const char* op, bool nan_wins = false) {
    if (input.dim() == 0) {
        return {input.clone(), zeros({}, DType::I64, input.device())};
    }
    dim = detail::wrapped_dim(input, dim, op);
    const std::int64_t n = input.size(dim);
    if (n == 0) {
        throw IndexError(std::string(op) + ": cannot take it over dimension " +
                         std::to_string(dim) + " of size 0");
    }
    const Tensor order = argsort(input, dim);
    Tensor position = full_int({}, pick, DType::I64, input.device());
    if (nan_wins && is_floating(input.dtype())) {  // median: a NaN is the answer, as PyTorch's
        const Tensor nan_count = sum(ne(input, input), dim, true);
        position = where(gt(nan_count, zeros({}, DType::I64, input.device())),
                         i64_scalar(n, input.device()) - nan_count, position);
    }
    Shape kept = input.shape();
    kept[static_cast<std::size_t>(dim)] = 1;
    const Tensor indices = gather(order, dim, position.expand(kept).contiguous());
    const Tensor values = gather(input, dim, indices);
    if (keepdim) {
        return {values, indices};
    }
    return {values.squeeze(dim), indices.squeeze(dim)};
}

}  // namespace

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, DType dtype, Device device) {
    const std::int64_t columns = m.value_or(n);
    if (n < 0 || columns < 0) {
        throw ValueError("eye: n and m must be non-negative, got " + std::to_string(n) + ", " +
                         std::to_string(columns));
    }
    const Tensor rows = arange_int(0, n, 1, DType::I64, device).unsqueeze(1);
    const Tensor cols = arange_int(0, columns, 1, DType::I64, device).unsqueeze(0);
    return eq(rows, cols).to(dtype);
}

Tensor linspace(double start, double end, std::int64_t steps, DType dtype, Device device) {
    if (steps < 0) {
        throw ValueError("linspace: number of steps must be non-negative, got " +
                         std::to_string(steps));
    }
    if (!is_floating(dtype)) {
        // PyTorch converts the end points to the integral dtype first (truncating), then steps
        // between them in double.
        start = std::trunc(start);
        end = std::trunc(end);
    }
    if (steps <= 1) {
        return full({steps}, start, dtype, device);
    }
    // The first half counts up from start, the second down from end, as PyTorch's kernel.
    const double step = (end - start) / static_cast<double>(steps - 1);
    const Tensor i = arange(0, static_cast<double>(steps), 1, DType::F64, device);
    const Tensor up = i * step + start;
    const Tensor down = (i - static_cast<double>(steps - 1)) * step + end;
    const Tensor first_half = lt(i, full({}, static_cast<double>(steps / 2), DType::F64, device));
    return where(first_half, up, down).to(dtype);
}

Tensor logspace(double start, double end, std::int64_t steps, double base, DType dtype,
                Device device) {
    // Integral dtypes truncate the end points first, as linspace and PyTorch do.
    const Tensor exponents = linspace(is_floating(dtype) ? start : std::trunc(start),
                                      is_floating(dtype) ? end : std::trunc(end), steps,
                                      DType::F64, device);
    return pow(full({}, base, DType::F64, device), exponents).to(dtype);
}

Tensor nonzero(const Tensor& input) {
    const Tensor mask = input.dtype() == DType::Bool
                            ? input
                            : ne(input, zeros({}, input.dtype(), input.device()));
    if (input.dim() == 0) {
        return empty({sum(mask).item<std::int64_t>(), 0}, DType::I64, input.device());
    }
    // Each dim's coordinate grid, read at the true positions of the mask.
    std::vector<Tensor> coordinates;
    for (std::int64_t d = 0; d < input.dim(); ++d) {
        Shape along(static_cast<std::size_t>(input.dim()), 1);
        along[static_cast<std::size_t>(d)] = input.size(d);
        const Tensor grid = arange_int(0, input.size(d), 1, DType::I64, input.device());
        coordinates.push_back(index(grid.view(along).expand(input.shape()), {mask}));
    }
    return stack(coordinates, 1);
}

UniqueResult unique(const Tensor& input, bool return_inverse, bool return_counts,
                    std::optional<std::int64_t> dim) {
    return unique_impl(input, return_inverse, return_counts, dim, true, "unique");
}

UniqueResult unique_consecutive(const Tensor& input, bool return_inverse, bool return_counts,
                                std::optional<std::int64_t> dim) {
    return unique_impl(input, return_inverse, return_counts, dim, false, "unique_consecutive");
}

Tensor bincount(const Tensor& input, const Tensor& weights, std::int64_t minlength) {
    if (input.dim() != 1 || (input.dtype() != DType::I64 && input.dtype() != DType::Bool)) {
        throw TypeError("bincount: expected a 1-d int64 tensor, got " +
                        to_string(input.dtype()) + " of shape " + to_string(input.shape()));
    }
    if (minlength < 0) {
        throw ValueError("bincount: minlength must be non-negative, got " +
                         std::to_string(minlength));
    }
    if (weights.defined() && weights.shape() != input.shape()) {
        throw ValueError("bincount: weights of shape " + to_string(weights.shape()) +
                         " should have the input's shape " + to_string(input.shape()));
    }
    const Tensor values = input.to(DType::I64);
    std::int64_t length = minlength;
    if (values.numel() > 0) {
        if (min(values).item<std::int64_t>() < 0) {
            throw ValueError("bincount: input must contain only non-negative values");
        }
        length = std::max(length, max(values).item<std::int64_t>() + 1);
    }
    // PyTorch counts in int64 and sums floating weights in float64.
    const DType dtype = !weights.defined()              ? DType::I64
                        : is_floating(weights.dtype()) ? weights.dtype()
                                                       : DType::F64;
    Tensor out = zeros({length}, dtype, input.device());
    scatter_add_(out, 0, values,
                 weights.defined() ? weights.to(dtype) : ones({values.numel()}, dtype,
                                                              input.device()));
    return out;
}

Tensor median(const Tensor& input) {
    if (input.numel() == 0) {
        return full({}, std::numeric_limits<double>::quiet_NaN(), input.dtype(), input.device());
    }
    return pick_sorted(input.reshape({-1}), 0, (input.numel() - 1) / 2, false, "median", true)
        .first;
}

std::pair<Tensor, Tensor> median(const Tensor& input, std::int64_t dim, bool keepdim) {
    const std::int64_t n = input.dim() == 0 ? 1 : input.size(detail::wrapped_dim(input, dim,
                                                                                 "median"));
    return pick_sorted(input, dim, (n - 1) / 2, keepdim, "median", true);
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& input, std::int64_t k, std::int64_t dim,
                                   bool keepdim) {
    const std::int64_t n =
        input.dim() == 0 ? 1 : input.size(detail::wrapped_dim(input, dim, "kthvalue"));
    if (k < 1 || k > n) {
        throw IndexError("kthvalue: k (" + std::to_string(k) + ") is out of range for a "
                         "dimension of size " + std::to_string(n));
    }
    // The k-th in sort's order, NaNs last, as PyTorch's kthvalue.
    return pick_sorted(input, dim, k - 1, keepdim, "kthvalue");
}

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right) {
    if (sorted.dim() == 0) {
        throw ValueError("searchsorted: sorted_sequence must have at least one dimension");
    }
    if (sorted.dim() > 1 && values.dim() == 0) {
        throw ValueError("searchsorted: values can be a scalar only when sorted_sequence is 1-d, "
                         "got sorted_sequence of shape " + to_string(sorted.shape()));
    }
    if (sorted.dim() > 1 &&
        Shape(sorted.shape().begin(), sorted.shape().end() - 1) !=
            Shape(values.shape().begin(), values.shape().end() - 1)) {
        throw ValueError("searchsorted: sorted_sequence of shape " + to_string(sorted.shape()) +
                         " and values of shape " + to_string(values.shape()) +
                         " must have the same leading dims");
    }
    // Counting the elements below each value (or at most it) is its insertion point.
    const Tensor sequence = sorted.unsqueeze(-2);
    const Tensor queries = (values.dim() == 0 ? values.reshape({1}) : values).unsqueeze(-1);
    Tensor below = right ? le(sequence, queries) : lt(sequence, queries);
    if (is_floating(queries.dtype())) {
        // In sort's order NaN is last: every number lies below a NaN query (and, for right,
        // every NaN too), so a NaN is inserted at the end, as PyTorch does.
        const Tensor nan_query = isnan(queries);
        below = logical_or(below, right ? nan_query : logical_and(nan_query,
                                                                  logical_not(isnan(sequence))));
    }
    const Tensor count = sum(below, -1);
    return values.dim() == 0 ? count.reshape({}) : count;
}

}  // namespace kael
