// Conformance of the sequence family (sort, argsort, topk, cumsum) on the device against cpu, on
// every layout and dim and on rows of each length a device may treat differently (one block,
// several blocks, few long rows, many short ones), with NaN of both signs, zeros of both signs
// and many ties; then stability against positions known in advance.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "conformance.h"

using namespace conformance;

namespace {

// values(dtype) with about half the elements one of three small numbers, so that ties decide
// the indices; floats also get NaNs with the sign bit set and more -0.0.
Tensor tie_heavy(DType dtype, const Shape& shape) {
    Tensor base = values(dtype, shape);
    if (dtype == DType::Bool) {
        return base;
    }
    base =
        kael::where(kael::bernoulli_mask(shape, 0.5), kael::randint(0, 3, shape).to(dtype), base);
    if (dtype == DType::F32 || dtype == DType::F64) {
        const double negative_nan = std::copysign(std::numeric_limits<double>::quiet_NaN(), -1.0);
        base = kael::where(kael::bernoulli_mask(shape, 0.05),
                           kael::full(shape, negative_nan, dtype), base);
        base = kael::where(kael::bernoulli_mask(shape, 0.05), kael::full(shape, -0.0, dtype), base);
    }
    return base;
}

// k = 0, 1, a few, the select limit of a typical device and one past it, half and all.
std::vector<std::int64_t> ks_for(std::int64_t size) {
    std::set<std::int64_t> ks;
    for (const std::int64_t k : {std::int64_t{0}, std::int64_t{1}, std::int64_t{5},
                                 std::int64_t{1024}, std::int64_t{1025}, size / 2, size}) {
        ks.insert(std::min(k, size));
    }
    return {ks.begin(), ks.end()};
}

void compare_sequence_ops(const Operand& input, std::int64_t dim,
                          const std::vector<std::int64_t>& ks) {
    for (const bool descending : {false, true}) {
        BOOST_TEST_CONTEXT("op sort, descending " << descending) {
            run_and_compare({input}, [&](const Tensors& x) {
                const auto [sorted, indices] = kael::sort(x[0], dim, descending);
                return Tensors{sorted, indices, kael::argsort(x[0], dim, descending)};
            });
        }
        for (const std::int64_t k : ks) {
            BOOST_TEST_CONTEXT("op topk, largest " << descending << ", k " << k) {
                run_and_compare({input}, [&](const Tensors& x) {
                    const auto [top, indices] = kael::topk(x[0], k, dim, descending);
                    return Tensors{top, indices};
                });
            }
        }
    }
    BOOST_TEST_CONTEXT("op cumsum") {
        run_and_compare({input}, [&](const Tensors& x) { return Tensors{kael::cumsum(x[0], dim)}; },
                        {1.0, false});
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(topk_every_dtype_layout_dim_and_k) {
    kael::manual_seed(31);
    std::vector<Layout> layouts = element_layouts();
    layouts.push_back(reduce_layouts().back());  // rows of 12289 elements
    for (const DType dtype : kAllDTypes) {
        for (const Layout& layout : layouts) {
            const Tensor base = tie_heavy(dtype, layout.base(0));
            const Operand input = laid_out(layout, base);
            const Tensor view = layout.view(base, 0);
            for (std::int64_t dim = -1; dim < std::max<std::int64_t>(view.dim(), 1); ++dim) {
                const std::int64_t size = view.dim() == 0 ? 1 : view.size(dim);
                for (const std::int64_t k : ks_for(size)) {
                    for (const bool largest : {true, false}) {
                        BOOST_TEST_CONTEXT("op topk, dtype " << dtype_name(dtype) << ", layout "
                                                             << layout.name << ", dim " << dim
                                                             << ", k " << k << ", largest "
                                                             << largest) {
                            run_and_compare({input}, [&](const Tensors& x) {
                                const auto [top, indices] = kael::topk(x[0], k, dim, largest);
                                return Tensors{top, indices};
                            });
                        }
                    }
                }
            }
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

// Rows of each length class (one small or large block, several blocks, rows of few and of many
// tiles, few and many rows), contiguous and through a transpose; constant rows are all ties.
BOOST_AUTO_TEST_CASE(sequence_ops_on_short_long_few_and_many_rows) {
    kael::manual_seed(32);
    const std::vector<Shape> shapes = {{700, 37},  {270, 1200}, {20, 5000},
                                       {2, 65539}, {1, 300007}, {1, 1}};
    for (const DType dtype : kAllDTypes) {
        for (const Shape& shape : shapes) {
            const Tensor base = tie_heavy(dtype, shape);
            // A row past 2^18 elements adds only top-k of few through a whole-row sort.
            const std::vector<std::int64_t> ks =
                shape[1] > (1 << 18) ? std::vector<std::int64_t>{5} : ks_for(shape[1]);
            BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", rows " << shape[0] << " x "
                                        << shape[1] << ", contiguous") {
                compare_sequence_ops({base}, 1, ks);
            }
            if (shape[0] * shape[1] < 100000) {
                BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", rows " << shape[0] << " x "
                                            << shape[1] << ", transposed") {
                    compare_sequence_ops(
                        {base.T().contiguous(), [](const Tensor& t) { return t.T(); }}, 1, ks);
                }
            }
        }
        BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", constant rows") {
            compare_sequence_ops({kael::ones({3, 5000}, dtype)}, 1, ks_for(5000));
            compare_sequence_ops({kael::zeros({40, 1500}, dtype)}, 1, ks_for(1500));
        }
    }
}

// cumsum alone on the few long rows that take a device-wide scan (a cuda device: up to 8 rows
// of f32/f64, cub::DeviceScan) and just past that count: small enough for racecheck.
BOOST_AUTO_TEST_CASE(cumsum_of_few_long_rows) {
    kael::manual_seed(33);
    for (const DType dtype : kAllDTypes) {
        for (const Shape& shape : {Shape{1, 300007}, Shape{8, 12289}, Shape{9, 12289}}) {
            BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", rows " << shape[0] << " x "
                                        << shape[1]) {
                const Operand input{tie_heavy(dtype, shape)};
                run_and_compare({input},
                                [](const Tensors& x) { return Tensors{kael::cumsum(x[0], 1)}; },
                                {1.0, false});
            }
        }
    }
}

namespace {

// Repeats a pattern of nine to length; its classes in ascending order are position 5 and 6
// (the zeros, or -0.0 and 0.0), then 1, 3, 8, then 0, 2, then 4, 7 (NaN, or the largest).
Tensor stability_pattern(DType dtype, std::int64_t length) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> floats = {2, 1, 2, 1, nan, -0.0, 0.0, -nan, 1};
    const std::vector<double> integers = {2, 1, 2, 1, 3, 0, 0, 3, 1};
    const std::vector<double> bools = {1, 0, 1, 0, 1, 0, 0, 1, 0};
    const std::vector<double>& pattern =
        dtype == DType::Bool ? bools : (dtype == DType::I64 ? integers : floats);
    std::vector<double> numbers(static_cast<std::size_t>(length));
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        numbers[i] = pattern[i % pattern.size()];
    }
    return kael::tensor(numbers).to(dtype);
}

// The stable order of stability_pattern: positions grouped by class, each group in position
// order (bool has two classes: false, true).
std::vector<std::int64_t> stable_order(DType dtype, std::int64_t length, bool descending) {
    std::vector<std::vector<int>> classes = {{5, 6}, {1, 3, 8}, {0, 2}, {4, 7}};
    if (dtype == DType::Bool) {
        classes = {{1, 3, 5, 6, 8}, {0, 2, 4, 7}};
    }
    if (descending) {
        std::reverse(classes.begin(), classes.end());
    }
    std::vector<std::int64_t> order;
    for (const std::vector<int>& members : classes) {
        for (std::int64_t i = 0; i < length; ++i) {
            if (std::find(members.begin(), members.end(), i % 9) != members.end()) {
                order.push_back(i);
            }
        }
    }
    return order;
}

}  // namespace

// Ties (NaN of either sign, -0.0 and 0.0 included) keep position order ascending and
// descending, in rows sorted in one block, by a segmented sort and by a sort of the whole row.
BOOST_AUTO_TEST_CASE(sort_and_topk_keep_ties_in_position_order) {
    for (const DType dtype : kAllDTypes) {
        for (const std::int64_t length : {9, 4500, 65700, 270000}) {
            const Tensor x = stability_pattern(dtype, length).to(device());
            for (const bool descending : {false, true}) {
                BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", length " << length
                                            << ", descending " << descending) {
                    const std::vector<std::int64_t> want = stable_order(dtype, length, descending);
                    const auto [sorted, indices] = kael::sort(x, 0, descending);
                    BOOST_TEST(indices.cpu().to_vector<std::int64_t>() == want);
                    for (const std::int64_t k : {std::int64_t{3}, length / 3, length}) {
                        const std::vector<std::int64_t> first(want.begin(), want.begin() + k);
                        const auto [top, where] = kael::topk(x, k, 0, descending);
                        BOOST_TEST(where.cpu().to_vector<std::int64_t>() == first);
                    }
                    if (dtype == DType::F32 && !descending) {
                        // Values are the input's own: -0.0 keeps its sign.
                        const std::vector<float> got = sorted.cpu().to_vector<float>();
                        BOOST_TEST((std::signbit(got[0]) && !std::signbit(got[1])));
                    }
                }
            }
        }
    }
}
