// Conformance of the composite shape and selection ops and factories (ops_shape.h): each one
// in every dtype over the composite views (contiguous, transposed, strided, broadcast, 3-d,
// 1-d, empty, 0-d), on the device against cpu; where an op refuses a dtype or a rank, both
// sides must throw the same error.
#include <cmath>
#include <limits>

#include "composite_support.h"

using namespace conformance;

namespace {

// Counts for repeat_interleave along dim 0: one per element of it (0 among them).
Tensor counts_for(const Tensor& x) {
    const std::int64_t n = x.dim() == 0 ? 1 : x.size(0);
    std::vector<std::int64_t> counts;
    for (std::int64_t i = 0; i < n; ++i) {
        counts.push_back((i * 2 + 1) % 4);
    }
    return kael::tensor(counts, {n}).to(x.device());
}

std::vector<CompositeCase> shape_cases() {
    namespace k = kael;
    const auto on = [](const Tensor& x, Shape shape) {
        return k::empty(std::move(shape), x.dtype(), x.device());
    };
    std::vector<CompositeCase> cases = {
        {"narrow", [](const Tensor& x) { return Tensors{k::narrow(x, -1, 1, 2)}; }},
        {"narrow_negative_start", [](const Tensor& x) { return Tensors{k::narrow(x, 0, -2, 1)}; }},
        {"movedim", [](const Tensor& x) { return Tensors{k::movedim(x, {0}, {-1})}; }},
        {"flatten", [](const Tensor& x) { return Tensors{k::flatten(x)}; }},
        {"flatten_from_1", [](const Tensor& x) { return Tensors{k::flatten(x, 1)}; }},
        {"unflatten",
         [](const Tensor& x) {
             return Tensors{k::unflatten(x, -1, {2, -1})};
         }},
        {"T", [](const Tensor& x) { return Tensors{k::reversed_dims(x)}; }},
        {"mT", [](const Tensor& x) { return Tensors{k::matrix_transpose(x)}; }},
        {"squeeze_dims",
         [](const Tensor& x) {
             return Tensors{k::squeeze(x.unsqueeze(0).unsqueeze(-1), {0, -1, 1})};
         }},
        {"unbind", [](const Tensor& x) { return k::unbind(x, 0); }},
        {"unbind_last", [](const Tensor& x) { return k::unbind(x, -1); }},
        {"view_as", [=](const Tensor& x) { return Tensors{k::view_as(x, on(x, {x.numel()}))}; }},
        {"reshape_as",
         [=](const Tensor& x) {
             return Tensors{k::reshape_as(x, on(x, {x.numel(), 1}))};
         }},
        {"expand_as",
         [=](const Tensor& x) {
             Shape shape = x.shape();
             shape.insert(shape.begin(), 2);
             return Tensors{k::expand_as(x, on(x, shape))};
         }},
        {"flip", [](const Tensor& x) { return Tensors{k::flip(x, {0})}; }},
        {"flip_two",
         [](const Tensor& x) {
             return Tensors{k::flip(x, {0, -1})};
         }},
        {"fliplr", [](const Tensor& x) { return Tensors{k::fliplr(x)}; }},
        {"flipud", [](const Tensor& x) { return Tensors{k::flipud(x)}; }},
        {"roll_flat", [](const Tensor& x) { return Tensors{k::roll(x, {5})}; }},
        {"roll_dims",
         [](const Tensor& x) {
             return Tensors{k::roll(x, {1, -3}, {0, -1})};
         }},
        {"repeat",
         [](const Tensor& x) {
             return Tensors{k::repeat(x, {2, 1, 3, 1})};
         }},
        {"tile", [](const Tensor& x) { return Tensors{k::tile(x, {2})}; }},
        {"repeat_interleave_dim",
         [](const Tensor& x) { return Tensors{k::repeat_interleave(x, 2, -1)}; }},
        {"repeat_interleave_flat",
         [](const Tensor& x) { return Tensors{k::repeat_interleave(x, 3)}; }},
        {"repeat_interleave_counts",
         [](const Tensor& x) { return Tensors{k::repeat_interleave(x, counts_for(x), 0)}; }},
    };
    for (const std::int64_t diagonal : {-1, 0, 2}) {
        // (append, not +: GCC 12 warns falsely on "literal" + std::string here)
        const std::string suffix = std::string("_").append(std::to_string(diagonal));
        cases.push_back({std::string("tril").append(suffix),
                         [=](const Tensor& x) { return Tensors{k::tril(x, diagonal)}; }});
        cases.push_back({std::string("triu").append(suffix),
                         [=](const Tensor& x) { return Tensors{k::triu(x, diagonal)}; }});
    }
    return cases;
}

Tensors unique_parts(const kael::UniqueResult& r) {
    return {r.values, r.inverse, r.counts};
}

std::vector<CompositeCase> selection_cases() {
    namespace k = kael;
    return {
        {"nonzero", [](const Tensor& x) { return Tensors{k::nonzero(x)}; }},
        {"unique", [](const Tensor& x) { return unique_parts(k::unique(x, true, true)); }},
        {"unique_dim0", [](const Tensor& x) { return unique_parts(k::unique(x, true, true, 0)); }},
        {"unique_dim_last",
         [](const Tensor& x) { return unique_parts(k::unique(x, true, true, -1)); }},
        {"unique_consecutive",
         [](const Tensor& x) { return unique_parts(k::unique_consecutive(x, true, true)); }},
        {"unique_consecutive_dim0",
         [](const Tensor& x) { return unique_parts(k::unique_consecutive(x, true, true, 0)); }},
        {"median_all", [](const Tensor& x) { return Tensors{k::median(x)}; }},
        {"median_dim",
         [](const Tensor& x) {
             const auto [values, indices] = k::median(x, -1, false);
             return Tensors{values, indices};
         }},
        {"median_dim0_keepdim",
         [](const Tensor& x) {
             const auto [values, indices] = k::median(x, 0, true);
             return Tensors{values, indices};
         }},
        {"kthvalue",
         [](const Tensor& x) {
             const auto [values, indices] = k::kthvalue(x, 2, 0, false);
             return Tensors{values, indices};
         }},
        {"kthvalue_last_keepdim",
         [](const Tensor& x) {
             const auto [values, indices] = k::kthvalue(x, 1, -1, true);
             return Tensors{values, indices};
         }},
    };
}

// Values with few distinct numbers, so unique, median and kthvalue meet ties.
Tensor tied(DType dtype, const Shape& shape) {
    const Tensor base = values(dtype, shape);
    if (dtype == DType::Bool) {
        return base;
    }
    return kael::where(kael::bernoulli_mask(shape, 0.5), kael::randint(0, 3, shape).to(dtype),
                       base);
}

}  // namespace

BOOST_AUTO_TEST_CASE(composite_shape_ops_every_dtype_and_view) {
    kael::manual_seed(61);
    run_composite_cases(shape_cases(),
                        [](DType dtype, const Shape& shape) { return values(dtype, shape); });
}

BOOST_AUTO_TEST_CASE(composite_selection_ops_every_dtype_and_view) {
    kael::manual_seed(62);
    run_composite_cases(selection_cases(), tied);
}

BOOST_AUTO_TEST_CASE(searchsorted_every_dtype_sorted_and_value_view) {
    kael::manual_seed(63);
    // Sorted along the last dim after the view: a 1-d sequence or rows of the values' leading dims.
    const auto sorted_rows = [](const Tensor& t) { return kael::sort(t, 0).first; };
    const std::vector<View> sequences = {
        {"vector", {6}},
        {"strided_vector", {12}, [](const Tensor& t) { return t.slice(0, 1, 12, 2); }},
        {"transposed_rows", {6, 3}, [](const Tensor& t) { return t.T(); }},
        {"empty", {0}},
    };
    for (const DType dtype : kNumeric) {
        for (const View& sequence : sequences) {
            const Tensor base = sequence.base.size() == 1
                                    ? kael::sort(tied(dtype, sequence.base), 0).first
                                    : sorted_rows(tied(dtype, sequence.base));
            for (const View& queries : composite_views()) {
                for (const bool right : {false, true}) {
                    BOOST_TEST_CONTEXT("op searchsorted, dtype "
                                       << dtype_name(dtype) << ", sorted " << sequence.name
                                       << ", values " << queries.name << ", right " << right) {
                        run_and_compare(
                            {{base, sequence.view}, {tied(dtype, queries.base), queries.view}},
                            [&](const Tensors& x) {
                                return Tensors{kael::searchsorted(x[0], x[1], right)};
                            });
                    }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(bincount_every_weight_dtype_and_view) {
    kael::manual_seed(64);
    const std::vector<View> inputs = {
        {"vector", {9}},
        {"strided", {18}, [](const Tensor& t) { return t.slice(0, 0, 18, 2); }},
        {"empty", {0}},
        {"matrix", {3, 3}},  // refused: bincount takes 1-d input
    };
    for (const View& input : inputs) {
        for (const std::int64_t minlength : {0, 8}) {
            for (const DType weights : kAllDTypes) {
                BOOST_TEST_CONTEXT("op bincount, input " << input.name << ", weights "
                                                         << dtype_name(weights) << ", minlength "
                                                         << minlength) {
                    const Operand counted{kael::randint(0, 6, input.base), input.view};
                    run_and_compare({counted}, [&](const Tensors& x) {
                        return Tensors{kael::bincount(x[0], Tensor(), minlength)};
                    });
                    run_and_compare({counted, {values(weights, input.base), input.view}},
                                    [&](const Tensors& x) {
                                        return Tensors{kael::bincount(x[0], x[1], minlength)};
                                    },
                                    {1.0, false});
                }
            }
        }
    }
    for (const DType dtype : {DType::Bool, DType::F32}) {  // bool is counted, floats refused
        BOOST_TEST_CONTEXT("op bincount, input dtype " << dtype_name(dtype)) {
            run_and_compare({{values(dtype, {7})}},
                            [](const Tensors& x) { return Tensors{kael::bincount(x[0])}; });
        }
    }
}

BOOST_AUTO_TEST_CASE(eye_linspace_logspace_every_dtype) {
    const double inf = std::numeric_limits<double>::infinity();
    for (const DType dtype : kAllDTypes) {
        BOOST_TEST_CONTEXT("factories, dtype " << dtype_name(dtype)) {
            for (const auto& [n, m] : {std::pair<std::int64_t, std::optional<std::int64_t>>{3, {}},
                                       {2, 5},
                                       {0, 3},
                                       {4, 0},
                                       {-1, {}}}) {
                compare_factory(
                    [&](const kael::Device& d) { return Tensors{kael::eye(n, m, dtype, d)}; });
            }
            for (const auto& [start, end, steps] : {std::tuple{0.0, 1.0, 5},
                                                    {-3.5, 10.0, 7},
                                                    {2.0, 2.0, 1},
                                                    {0.0, 1.0, 0},
                                                    {1.0, -1.0, 100},
                                                    {0.0, 1e30, 3},
                                                    {0.0, inf, 4},
                                                    {0.0, 1.0, -1}}) {
                compare_factory([&](const kael::Device& d) {
                    return Tensors{kael::linspace(start, end, steps, dtype, d)};
                });
                compare_factory([&](const kael::Device& d) {
                    return Tensors{kael::logspace(start / 4, end / 4, steps, 2, dtype, d),
                                   kael::logspace(-start, end / 8, steps, 10, dtype, d)};
                });
            }
        }
    }
}
