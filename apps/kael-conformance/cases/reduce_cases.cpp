// Conformance of the reductions (sum, prod, max, min, argmax, argmin, over one dim, several or
// all, and those composed of them: mean, var, std, logsumexp, any, all, norm), each in every
// dtype over every reduce layout, on the device against cpu.
#include <optional>

#include "conformance.h"

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
        {"logsumexp",
         [](const Tensor& t, std::int64_t d, bool k) { return kael::logsumexp(t, d, k); }},
        {"any", [](const Tensor& t, std::int64_t d, bool k) { return kael::any(t, d, k); }},
        {"all", [](const Tensor& t, std::int64_t d, bool k) { return kael::all(t, d, k); }},
    };
    for (const DType dtype : kAllDTypes) {
        for (const Layout& layout : reduce_layouts()) {
            const Operand input = laid_out(layout, values(dtype, layout.base(0)));
            const auto rank = static_cast<std::int64_t>(layout.view(input.base, 0).dim());
            BOOST_TEST_CONTEXT("op norm, dtype " << dtype_name(dtype) << ", layout "
                                                 << layout.name) {
                run_and_compare({input}, [](const Tensors& x) { return Tensors{kael::norm(x[0])}; },
                                {1.0, false});
            }
            for (const bool keepdim : {false, true}) {
                for (const auto& [name, op] : dims_ops) {
                    for (const Shape& dims : dim_sets(rank)) {
                        BOOST_TEST_CONTEXT("op " << name << ", dtype " << dtype_name(dtype)
                                                 << ", layout " << layout.name << ", dims "
                                                 << kael::to_string(dims) << ", keepdim "
                                                 << keepdim) {
                            run_and_compare({input},
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
                            run_and_compare({input},
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

// One long row whose length is no multiple of a 16-byte pack (a vocabulary's logits): the
// device folds whole packs, then the elements after them one by one; the extreme sits in that
// tail, in the packs, or at the start.
BOOST_AUTO_TEST_CASE(reduce_one_long_row_of_odd_length) {
    kael::manual_seed(53);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::I64}) {
        for (const std::int64_t length :
             {std::int64_t{50257}, std::int64_t{8195}, std::int64_t{2051}}) {
            for (const std::int64_t peak : {length - 1, length - 70, std::int64_t{0}}) {
                const Tensor base = values(dtype, {length}, false);
                const Tensor peaked = kael::where(
                    kael::eq(kael::arange(0, static_cast<double>(length), 1, DType::I64),
                             kael::full({}, static_cast<double>(peak), DType::I64)),
                    kael::full({}, 1000, dtype), base);
                for (const bool row : {false, true}) {  // [length] and [1, length]
                    const Operand input{row ? peaked.reshape({1, length}) : peaked};
                    BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", length " << length
                                                << ", peak at " << peak << ", rank "
                                                << (row ? 2 : 1)) {
                        run_and_compare(
                            {input},
                            [](const Tensors& x) {
                                const auto [largest, at] = kael::max_with_indices(x[0], -1);
                                const auto [smallest, where] = kael::min_with_indices(x[0], -1);
                                return Tensors{largest,
                                               at,
                                               smallest,
                                               where,
                                               kael::argmax(x[0], -1),
                                               kael::max(x[0]),
                                               kael::amax(x[0], {-1}),
                                               kael::sum(x[0], -1)};
                            },
                            {1.0, false});
                    }
                }
            }
        }
    }
}
