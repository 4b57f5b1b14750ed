// Conformance, part two: reductions, matmul, gather / scatter_add_ / index_select, sort and
// cumsum, each in every dtype over every layout, on the device against cpu.
#include <cmath>
#include <optional>

#include "conformance.h"
#include "kael/autograd.h"

using namespace conformance;

namespace {

using Dim = std::optional<std::int64_t>;
using ReduceFn = Tensor (*)(const Tensor&, Dim, bool);

Tensor sum_of(const Tensor& a, Dim dim, bool keepdim) {
    if (!dim) {
        const Tensor total = kael::sum(a);
        return keepdim ? total.view(Shape(a.shape().size(), 1)) : total;
    }
    return kael::sum(a, *dim, keepdim);
}

// Every way of reducing a tensor of rank dims: all elements, then each dimension, +-keepdim.
std::vector<std::pair<Dim, bool>> reductions(std::int64_t dims) {
    std::vector<std::pair<Dim, bool>> all = {{std::nullopt, false}, {std::nullopt, true}};
    for (std::int64_t d = -1; d < std::max<std::int64_t>(dims, 1); ++d) {
        for (const bool keepdim : {false, true}) {
            all.emplace_back(d, keepdim);
        }
    }
    return all;
}

std::string dim_name(Dim dim) {
    return dim ? std::to_string(*dim) : "all";
}

Operand laid_out(const Layout& layout, Tensor base, std::size_t operand = 0) {
    return {std::move(base),
            [&layout, operand](const Tensor& t) { return layout.view(t, operand); }};
}

// A view on top of a base, built by a lambda; also the base shape it needs.
struct View {
    std::string name;
    Shape base;
    std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
};

}  // namespace

BOOST_AUTO_TEST_CASE(reduce_every_op_dtype_layout_dim) {
    kael::manual_seed(21);
    const std::pair<const char*, ReduceFn> ops[] = {
        {"sum", sum_of},    {"prod", kael::prod},     {"max", kael::max},
        {"min", kael::min}, {"argmax", kael::argmax}, {"argmin", kael::argmin}};
    for (const auto& [name, op] : ops) {
        // Sums may be reordered by a device; their result can cancel to near zero.
        const bool sums = std::string(name) == "sum" || std::string(name) == "prod";
        const Tolerance tolerance{sums ? 1.0 : 0.0, !sums};
        for (const DType dtype : kAllDTypes) {
            for (const Layout& layout : reduce_layouts()) {
                const Operand input = laid_out(layout, values(dtype, layout.base(0)));
                const auto rank = static_cast<std::int64_t>(layout.view(input.base, 0).dim());
                for (const auto& [dim, keepdim] : reductions(rank)) {
                    BOOST_TEST_CONTEXT("op " << name << ", dtype " << dtype_name(dtype)
                                             << ", layout " << layout.name << ", dim "
                                             << dim_name(dim) << ", keepdim " << keepdim) {
                        run_and_compare(
                            {input},
                            [&, op = op, dim = dim, keepdim = keepdim](const Tensors& x) {
                                return Tensors{op(x[0], dim, keepdim)};
                            },
                            tolerance);
                    }
                }
            }
        }
    }
}

namespace {

// Sets of dims of a rank-`rank` tensor: adjacent, apart, unordered, all, and the empty list.
std::vector<Shape> dim_sets(std::int64_t rank) {
    if (rank == 0) {
        return {{}, {0}};
    }
    if (rank == 2) {
        return {{}, {0, 1}, {1, 0}, {-1}};
    }
    return {{}, {0, 1}, {1, 2}, {0, 2}, {2, 0}, {0, 1, 2}, {-1, 0}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(reduce_several_dims_and_composed_reductions_every_layout) {
    kael::manual_seed(23);
    using DimsFn = Tensor (*)(const Tensor&, const Shape&, bool);
    const std::pair<const char*, DimsFn> dims_ops[] = {{"sum", kael::sum}, {"mean", kael::mean}};
    using DimFn = std::function<Tensor(const Tensor&, std::int64_t, bool)>;
    const std::pair<const char*, DimFn> composed[] = {
        {"var", [](const Tensor& t, std::int64_t d, bool k) { return kael::var(t, d, 1, k); }},
        {"std", [](const Tensor& t, std::int64_t d, bool k) { return kael::stddev(t, d, 0, k); }},
        {"logsumexp", [](const Tensor& t, std::int64_t d, bool k) {
             return kael::logsumexp(t, d, k);
         }},
        {"any", [](const Tensor& t, std::int64_t d, bool k) { return kael::any(t, d, k); }},
        {"all", [](const Tensor& t, std::int64_t d, bool k) { return kael::all(t, d, k); }},
    };
    for (const DType dtype : kAllDTypes) {
        for (const Layout& layout : reduce_layouts()) {
            const Operand input = laid_out(layout, values(dtype, layout.base(0)));
            const auto rank = static_cast<std::int64_t>(layout.view(input.base, 0).dim());
            for (const bool keepdim : {false, true}) {
                for (const auto& [name, op] : dims_ops) {
                    for (const Shape& dims : dim_sets(rank)) {
                        BOOST_TEST_CONTEXT("op " << name << ", dtype " << dtype_name(dtype)
                                                 << ", layout " << layout.name << ", dims "
                                                 << kael::to_string(dims) << ", keepdim "
                                                 << keepdim) {
                            run_and_compare(
                                {input},
                                [&, op = op, dims = dims](const Tensors& x) {
                                    return Tensors{op(x[0], dims, keepdim)};
                                },
                                {1.0, false});
                        }
                    }
                }
                for (const auto& [name, op] : composed) {
                    for (std::int64_t d = -1; d < std::max<std::int64_t>(rank, 1); ++d) {
                        BOOST_TEST_CONTEXT("op " << name << ", dtype " << dtype_name(dtype)
                                                 << ", layout " << layout.name << ", dim " << d
                                                 << ", keepdim " << keepdim) {
                            run_and_compare(
                                {input},
                                [&, op = op, d = d](const Tensors& x) {
                                    return Tensors{op(x[0], d, keepdim)};
                                },
                                {1.0, false});
                        }
                    }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(matmul_shapes_layouts_dtypes) {
    kael::manual_seed(22);
    using ViewFn = std::function<Tensor(const Tensor&)>;
    const ViewFn T = [](const Tensor& t) { return t.transpose(-1, -2); };
    const auto expand = [](const Shape& shape) -> ViewFn {
        return [shape](const Tensor& t) { return t.expand(shape); };
    };
    const ViewFn stepped = [](const Tensor& t) { return t.slice(0, 0, 6, 2).slice(1, 1, 8, 2); };
    const ViewFn stepped_b = [](const Tensor& t) { return t.slice(0, 0, 8, 2).slice(1, 0, 10, 2); };
    const ViewFn swap_batch = [](const Tensor& t) { return t.permute({1, 0, 2}); };
    const std::vector<std::pair<View, View>> cases = {
        {{"plain", {3, 4}}, {"plain", {4, 5}}},
        {{"transposed", {4, 3}, T}, {"plain", {4, 5}}},
        {{"plain", {3, 4}}, {"transposed", {5, 4}, T}},
        {{"transposed", {4, 3}, T}, {"transposed", {5, 4}, T}},
        {{"strided", {6, 8}, stepped}, {"plain", {4, 5}}},
        {{"plain", {3, 4}}, {"strided", {8, 10}, stepped_b}},
        {{"expanded", {1, 4}, expand({3, 4})}, {"expanded", {4, 1}, expand({4, 5})}},
        {{"batch", {2, 3, 4}}, {"batch", {2, 4, 5}}},
        {{"batch", {2, 3, 4}}, {"broadcast_matrix", {4, 5}}},
        {{"broadcast_matrix", {3, 4}}, {"batch_transposed", {2, 5, 4}, T}},
        {{"batch_4d", {2, 1, 3, 4}}, {"batch", {3, 4, 2}}},
        {{"batch_expanded", {1, 3, 4}, expand({2, 3, 4})}, {"batch", {2, 4, 5}}},
        {{"batch_permuted", {3, 2, 4}, swap_batch}, {"batch_transposed", {2, 5, 4}, T}},
        {{"vector", {4}}, {"plain", {4, 5}}},
        {{"row", {1, 8}}, {"transposed", {6, 8}, T}},  // the one-row kernel, no bias
        {{"plain", {3, 4}}, {"vector", {4}}},
        {{"vector", {4}}, {"vector", {4}}},
        {{"vector", {4}}, {"batch", {2, 4, 5}}},
        {{"batch", {2, 3, 4}}, {"vector", {4}}},
        {{"empty_inner", {3, 0}}, {"empty_inner", {0, 5}}},
        {{"empty_rows", {0, 4}}, {"plain", {4, 5}}},
        {{"empty_batch", {0, 3, 4}}, {"plain", {4, 5}}},
        {{"large", {33, 65}}, {"large_transposed", {17, 65}, T}},
        {{"mismatched", {3, 4}}, {"mismatched", {5, 4}}},
    };
    for (const auto& [a, b] : cases) {
        for (const DType dtype : kAllDTypes) {
            const std::int64_t inner = a.view(kael::empty(a.base)).shape().back();
            BOOST_TEST_CONTEXT("op matmul, dtype " << dtype_name(dtype) << ", layout " << a.name
                                                   << kael::to_string(a.base) << " x " << b.name
                                                   << kael::to_string(b.base)) {
                // Specials would test BLAS more than the device: inf * 0 sums are unordered.
                run_and_compare({{values(dtype, a.base, false), a.view},
                                 {values(dtype, b.base, false), b.view}},
                                [](const Tensors& x) { return Tensors{kael::matmul(x[0], x[1])}; },
                                {10.0 * static_cast<double>(inner), false});
            }
        }
    }
    for (const auto& [first, second] :
         {std::pair{DType::I64, DType::F32}, std::pair{DType::F32, DType::F64},
          std::pair{DType::Bool, DType::F64}}) {
        BOOST_TEST_CONTEXT("op matmul, dtype " << dtype_name(first) << "/" << dtype_name(second)
                                               << ", layout batch x transposed") {
            run_and_compare({{values(first, {2, 3, 4}, false)}, {values(second, {5, 4}, false), T}},
                            [](const Tensors& x) { return Tensors{kael::matmul(x[0], x[1])}; },
                            {40.0, false});
        }
    }
}

// kael::linear with a bias runs matmul_bias: one GEMM over the rows of x, bias in the GEMM.
BOOST_AUTO_TEST_CASE(linear_with_bias_shapes_layouts_dtypes) {
    kael::manual_seed(24);
    using ViewFn = std::function<Tensor(const Tensor&)>;
    const ViewFn same = [](const Tensor& t) { return t; };
    const ViewFn T = [](const Tensor& t) { return t.transpose(-1, -2); };
    const ViewFn stepped = [](const Tensor& t) { return t.slice(0, 0, 10, 2); };
    const ViewFn swap_batch = [](const Tensor& t) { return t.permute({1, 0, 2}); };
    struct Case {
        std::string name;
        Shape x, weight, bias;
        ViewFn x_view, weight_view, bias_view;
    };
    const std::vector<Case> cases = {
        {"plain", {3, 4}, {5, 4}, {5}, same, same, same},
        {"batched", {2, 3, 4}, {5, 4}, {5}, same, same, same},
        {"batched_4d", {2, 1, 3, 4}, {5, 4}, {5}, same, same, same},
        {"transposed_x", {4, 3}, {5, 4}, {5}, T, same, same},
        {"transposed_weight", {3, 4}, {4, 5}, {5}, same, T, same},
        {"strided_bias", {3, 4}, {5, 4}, {10}, same, same, stepped},
        {"permuted_batch", {3, 2, 4}, {5, 4}, {5}, swap_batch, same, same},
        {"large", {33, 65}, {17, 65}, {17}, same, same, same},
        // One row against the weight as stored: the one-row kernel (inner a multiple of 4).
        {"one_row", {1, 768}, {2305, 768}, {2305}, same, same, same},
        {"one_row_batched", {1, 1, 64}, {33, 64}, {33}, same, same, same},
        {"one_row_column", {64, 1}, {9, 64}, {9}, T, same, same},
        {"one_row_ragged_inner", {1, 66}, {7, 66}, {7}, same, same, same},
        {"empty_rows", {0, 4}, {5, 4}, {5}, same, same, same},
        {"empty_out", {3, 4}, {0, 4}, {0}, same, same, same},
        {"empty_inner", {3, 0}, {5, 0}, {5}, same, same, same},
    };
    for (const Case& c : cases) {
        for (const DType dtype : kNumeric) {
            BOOST_TEST_CONTEXT("op linear, dtype " << dtype_name(dtype) << ", layout " << c.name) {
                run_and_compare({{values(dtype, c.x, false), c.x_view},
                                 {values(dtype, c.weight, false), c.weight_view},
                                 {values(dtype, c.bias, false), c.bias_view}},
                                [](const Tensors& x) {
                                    return Tensors{kael::linear(x[0], x[1], x[2])};
                                },
                                {700.0, false});
            }
        }
    }
}

// linear with its epilogue (gelu, a residual add) against the cpu's composed ops: one row (the
// one-row kernel's fused epilogue), many rows (the product, then the epilogue), strided x.
BOOST_AUTO_TEST_CASE(linear_with_an_epilogue) {
    kael::manual_seed(25);
    using ViewFn = std::function<Tensor(const Tensor&)>;
    const ViewFn same = [](const Tensor& t) { return t; };
    const ViewFn T = [](const Tensor& t) { return t.transpose(-1, -2); };
    struct Case {
        std::string name;
        Shape x, weight;
        ViewFn x_view;
    };
    const std::vector<Case> cases = {{"one_row", {1, 1, 768}, {2304, 768}, same},
                                     {"one_row_long", {1, 3072}, {70, 3072}, same},
                                     {"rows", {2, 5, 64}, {33, 64}, same},
                                     {"transposed_x", {64, 7}, {9, 64}, T},
                                     {"ragged_inner", {1, 66}, {7, 66}, same}};
    for (const Case& c : cases) {
        Shape out = c.x_view(Tensor(kael::empty(c.x))).shape();
        out.back() = c.weight[0];
        for (const DType dtype : {DType::F32, DType::F64}) {
            for (const bool gelu : {false, true}) {
                for (const bool with_bias : {false, true}) {
                    BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", " << c.name << ", gelu "
                                                << gelu << ", bias " << with_bias) {
                        run_and_compare(
                            {{values(dtype, c.x, false), c.x_view},
                             {values(dtype, c.weight, false)},
                             {values(dtype, {c.weight[0]}, false)},
                             {values(dtype, out, false)}},
                            [&](const Tensors& x) {
                                const kael::NoGradGuard no_grad;
                                return Tensors{kael::linear(
                                    x[0], x[1], with_bias ? x[2] : Tensor(),
                                    gelu ? kael::Activation::GeluTanh : kael::Activation::None,
                                    x[3])};
                            },
                            {700.0, false});
                    }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(gather_scatter_index_select) {
    kael::manual_seed(23);
    // Data {4, 6} through these views; indices may be negative (wrapped by the core).
    const std::vector<View> data_views = {
        {"contiguous", {4, 6}},
        {"transposed", {6, 4}, [](const Tensor& t) { return t.T(); }},
        {"strided",
         {8, 13},
         [](const Tensor& t) { return t.slice(0, 1, 8, 2).slice(1, 0, 12, 2); }},
        {"broadcast",
         {1, 6},
         [](const Tensor& t) {
             return t.expand({4, 6});
         }},
    };
    for (const DType dtype : kAllDTypes) {
        for (const View& data : data_views) {
            for (const std::int64_t axis : {0, 1, -1}) {
                const std::int64_t size = axis == 0 ? 4 : 6;
                const std::int64_t across = axis == 0 ? 6 : 4;
                const auto index_shape = [&](std::int64_t along, std::int64_t other) {
                    return axis == 0 ? Shape{along, other} : Shape{other, along};
                };
                const std::vector<View> index_views = {
                    {"contiguous", index_shape(9, across)},
                    {"transposed", index_shape(across, 9), [](const Tensor& t) { return t.T(); }},
                    {"narrower", index_shape(5, across - 1)},
                    {"broadcast", index_shape(9, 1),
                     [&](const Tensor& t) { return t.expand(index_shape(9, across)); }},
                    {"empty", index_shape(0, across)},
                };
                for (const View& index : index_views) {
                    BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", data " << data.name
                                                << ", index " << index.name << ", axis " << axis) {
                        const Operand data_operand{values(dtype, data.base), data.view};
                        const Operand index_operand{kael::randint(0, size, index.base),
                                                    index.view};
                        BOOST_TEST_CONTEXT("op gather") {
                            run_and_compare({data_operand, index_operand}, [&](const Tensors& x) {
                                return Tensors{kael::gather(x[0], axis, x[1])};
                            });
                        }
                        // scatter_add_ writes through the data view (not a broadcast one); the
                        // whole base is compared afterwards.
                        const View& target = data.name == "broadcast" ? data_views[0] : data;
                        const Shape source_shape = index.view(kael::empty(index.base)).shape();
                        BOOST_TEST_CONTEXT("op scatter_add_, target " << target.name) {
                            run_and_compare({{values(dtype, target.base)},
                                             index_operand,
                                             {values(dtype, source_shape)}},
                                            [&](const Tensors& x) {
                                                Tensor viewed = target.view(x[0]);
                                                kael::scatter_add_(viewed, axis, x[1], x[2]);
                                                return Tensors{viewed};
                                            },
                                            {10.0, false});
                        }
                    }
                }
                for (const std::int64_t count : {7, 0}) {
                    BOOST_TEST_CONTEXT("op index_select, dtype " << dtype_name(dtype) << ", data "
                                                                 << data.name << ", index " << count
                                                                 << ", axis " << axis) {
                        // A strided index: every other element of a longer one.
                        const Operand index{
                            kael::randint(0, size, {2 * count}),
                            [](const Tensor& t) { return t.slice(0, 0, t.size(0), 2); }};
                        run_and_compare({{values(dtype, data.base), data.view}, index},
                                        [&](const Tensors& x) {
                                            return Tensors{kael::index_select(x[0], axis, x[1])};
                                        });
                    }
                }
            }
        }
        BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", layout scalar / 3-d") {
            run_and_compare(
                {{values(dtype, {})}, {kael::tensor(std::vector<std::int64_t>{0, 0, 0})}},
                [](const Tensors& x) { return Tensors{kael::index_select(x[0], 0, x[1])}; });
            run_and_compare({{values(dtype, {2, 5, 3})}, {kael::randint(0, 5, {2, 7, 3})}},
                            [](const Tensors& x) {
                                return Tensors{kael::gather(x[0].permute({0, 1, 2}), 1, x[1])};
                            });
            run_and_compare({{values(dtype, {2, 5, 3})},
                             {kael::randint(0, 3, {2, 4, 8})},
                             {values(dtype, {2, 4, 8})}},
                            [](const Tensors& x) {
                                Tensor data = x[0];
                                kael::scatter_add_(data, 2, x[1], x[2]);
                                return Tensors{data};
                            },
                            {10.0, false});
        }
    }
}

BOOST_AUTO_TEST_CASE(sort_and_cumsum_every_dim) {
    kael::manual_seed(24);
    std::vector<Layout> layouts = element_layouts();
    layouts.push_back(reduce_layouts().back());  // rows of 12289 elements
    for (const DType dtype : kAllDTypes) {
        for (const Layout& layout : layouts) {
            // Few distinct values, so stability decides the indices.
            Tensor base = values(dtype, layout.base(0));
            if (dtype != DType::Bool) {
                base = kael::where(kael::bernoulli_mask(base.shape(), 0.3),
                                   kael::randint(0, 3, base.shape()).to(dtype), base);
            }
            const Operand input = laid_out(layout, base);
            const auto rank = layout.view(base, 0).dim();
            for (std::int64_t dim = -1; dim < std::max<std::int64_t>(rank, 1); ++dim) {
                for (const bool descending : {false, true}) {
                    BOOST_TEST_CONTEXT("op sort, dtype " << dtype_name(dtype) << ", layout "
                                                         << layout.name << ", dim " << dim
                                                         << ", descending " << descending) {
                        run_and_compare({input}, [&](const Tensors& x) {
                            const auto [sorted, indices] = kael::sort(x[0], dim, descending);
                            return Tensors{sorted, indices};
                        });
                    }
                }
                BOOST_TEST_CONTEXT("op cumsum, dtype " << dtype_name(dtype) << ", layout "
                                                       << layout.name << ", dim " << dim) {
                    run_and_compare(
                        {input}, [&](const Tensors& x) { return Tensors{kael::cumsum(x[0], dim)}; },
                        {1.0, false});
                }
            }
        }
    }
}
