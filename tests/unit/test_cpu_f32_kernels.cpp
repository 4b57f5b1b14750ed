// The cpu plugin's own f32 kernels (layer_norm_f32.cpp, softmax_f32.cpp, sort_f32.cpp and the
// tiled gather of elementwise.cpp) against the f64 paths they stand beside; part of unit_cpu_ops,
// so the ctest variants run them again at every vector ISA and thread count.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "kael/autograd.h"
#include "kael/ops.h"

using kael::DType;
using kael::Tensor;

// f32 layer_norm, forward and backward, takes the cpu plugin's own vectorized loops (each ISA
// in the ctest variants): it matches the same computed in f64, with and without weight and
// bias, on rows whose length is not a multiple of the lanes.
BOOST_AUTO_TEST_CASE(f32_layer_norm_matches_f64) {
    kael::manual_seed(13);
    const Tensor x64 = kael::randn({150, 771}, DType::F64) * 3.0 + 1.0;
    const Tensor w64 = kael::randn({771}, DType::F64);
    const Tensor b64 = kael::randn({771}, DType::F64);
    const Tensor g64 = kael::randn({150, 771}, DType::F64);
    // 150 rows: three row pieces of the fused backward; x without grad: the column pass alone.
    for (const auto& [affine, x_grad] :
         {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
        std::vector<std::vector<double>> results[2];
        for (const DType dtype : {DType::F64, DType::F32}) {
            const Tensor x = x64.to(dtype).detach().set_requires_grad(x_grad);
            const Tensor w = w64.to(dtype).detach().set_requires_grad(true);
            const Tensor b = b64.to(dtype).detach().set_requires_grad(true);
            const Tensor out = affine ? kael::layer_norm(x, w, b) : kael::layer_norm(x);
            out.backward(g64.to(dtype));
            auto& mine = results[dtype == DType::F32 ? 1 : 0];
            mine.push_back(out.to(DType::F64).to_vector<double>());
            if (x_grad) {
                mine.push_back(x.grad().to(DType::F64).to_vector<double>());
            }
            if (affine) {
                mine.push_back(w.grad().to(DType::F64).to_vector<double>());
                mine.push_back(b.grad().to(DType::F64).to_vector<double>());
            }
        }
        for (std::size_t k = 0; k < results[0].size(); ++k) {
            double worst = 0;
            for (std::size_t i = 0; i < results[0][k].size(); ++i) {
                const double want = results[0][k][i];
                worst = std::max(worst,
                                 std::abs(results[1][k][i] - want) / std::max(1.0, std::abs(want)));
            }
            BOOST_TEST(worst < 2e-5, "affine " << affine << ", x grad " << x_grad << ", result "
                                               << k << ": " << worst);
        }
    }
}

// The f32 softmax forward is the plugin's own vector loop (rows in chunks of 256, other dims in
// blocks of 64 columns): it matches the f64 shared task on ragged sizes along every dim, with a
// NaN row, an all -inf row and a +inf element keeping the task's rules.
BOOST_AUTO_TEST_CASE(f32_softmax_matches_the_f64_task_along_every_dim) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<std::pair<kael::Shape, std::int64_t>> cases = {
        {{7, 1000}, 1}, {{37, 1030}, 0}, {{3, 5, 70}, 1}, {{4, 3}, 0}, {{1, 1}, 1}};
    for (const auto& [shape, dim] : cases) {
        Tensor x64 = kael::randn(shape, DType::F64) * 3.0;
        std::vector<double> values = x64.to_vector<double>();
        if (values.size() > 20) {
            values[2] = nan;  // a NaN in the first line of either layout
            values[values.size() - 1] = -inf;
            values[values.size() / 2] = inf;
        }
        x64 = kael::tensor(values).reshape(shape);
        for (const bool log : {false, true}) {
            const auto run = [&](const Tensor& x) {
                return (log ? kael::log_softmax(x, dim) : kael::softmax(x, dim))
                    .to(DType::F64)
                    .to_vector<double>();
            };
            const std::vector<double> want = run(x64);
            const std::vector<double> got = run(x64.to(DType::F32));
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < want.size(); ++i) {
                const bool same =
                    std::isnan(want[i]) ? std::isnan(got[i])
                    : std::isinf(want[i])
                        ? got[i] == want[i]
                        : std::abs(got[i] - want[i]) <=
                              5e-6 * (log ? std::max(1.0, std::abs(want[i])) : std::abs(want[i])) +
                                  1e-37;
                wrong += same ? 0 : 1;
            }
            BOOST_TEST(wrong == 0U, "shape dims " << shape.size() << ", dim " << dim << ", log "
                                                  << log << ": " << wrong << " differ");
        }
    }
}

// The f32 cross_entropy, forward and backward, is the plugin's own chunked loop: it matches the
// f64 shared task on rows longer than a chunk, with a weight per row in the gradient.
BOOST_AUTO_TEST_CASE(f32_cross_entropy_matches_the_f64_task) {
    const Tensor x64 = kael::randn({6, 1000}, DType::F64) * 5.0;
    const Tensor targets = kael::tensor(std::vector<std::int64_t>{0, 999, 257, 512, 3, 768});
    const Tensor weight = kael::tensor(std::vector<double>{1, -2, 0.5, 3, 0, 1});
    std::vector<double> results[2][2];
    for (const DType dtype : {DType::F64, DType::F32}) {
        const Tensor x = x64.to(dtype).detach().set_requires_grad(true);
        const Tensor losses = kael::cross_entropy(x, targets, kael::Reduction::None);
        kael::sum(losses * weight.to(dtype)).backward();
        auto& mine = results[dtype == DType::F32 ? 1 : 0];
        mine[0] = losses.to(DType::F64).to_vector<double>();
        mine[1] = x.grad().to(DType::F64).to_vector<double>();
    }
    for (int k = 0; k < 2; ++k) {
        double worst = 0;
        for (std::size_t i = 0; i < results[0][k].size(); ++i) {
            const double want = results[0][k][i];
            worst = std::max(worst,
                             std::abs(results[1][k][i] - want) /
                                 (k == 0 ? std::max(1.0, std::abs(want)) : std::abs(want) + 1e-30));
        }
        BOOST_TEST(worst < 5e-6, (k == 0 ? "losses" : "gradient") << ": " << worst);
    }
}

// f32 sort takes a radix sort and f32 top-k a 16-element screen ahead of its heap: both give
// the f64 path's order (std::stable_sort, the plain heap) on rows with NaNs, -0 beside +0 and
// runs of ties, ascending and descending.
BOOST_AUTO_TEST_CASE(f32_sort_and_topk_keep_the_stable_order) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::int64_t rows = 3;
    const std::int64_t columns = 2053;
    std::vector<float> values(static_cast<size_t>(rows * columns));
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<float>(static_cast<std::int64_t>(i * 7919 % 211) - 105) / 4.0F;
    }
    values[7] = nan;
    values[2100] = nan;
    values[2101] = 0.0F;  // +0 before -0: a bitwise order would swap them
    values[2102] = -0.0F;
    values[4200] = std::numeric_limits<float>::infinity();
    values[4201] = -std::numeric_limits<float>::infinity();
    for (size_t i = 5000; i < 5100; ++i) {
        values[i] = 1e30F;  // a run of ties at the top
    }
    const Tensor x32 = kael::tensor(values).view({rows, columns});
    const Tensor x64 = x32.to(DType::F64);
    const auto same = [](const Tensor& a, const Tensor& b) {
        const std::vector<double> left = a.to(DType::F64).to_vector<double>();
        const std::vector<double> right = b.to(DType::F64).to_vector<double>();
        bool equal = left.size() == right.size();
        for (size_t i = 0; equal && i < left.size(); ++i) {
            equal = (std::isnan(left[i]) && std::isnan(right[i])) || left[i] == right[i];
        }
        return equal;
    };
    for (const bool descending : {false, true}) {
        const auto [values32, order32] = kael::sort(x32, -1, descending);
        const auto [values64, order64] = kael::sort(x64, -1, descending);
        BOOST_TEST(same(order32, order64), "sort order, descending " << descending);
        BOOST_TEST(same(values32, values64), "sorted values, descending " << descending);
        for (const std::int64_t k : {1, 5, 100}) {
            const auto [top32, at32] = kael::topk(x32, k, -1, descending);
            const auto [top64, at64] = kael::topk(x64, k, -1, descending);
            BOOST_TEST(same(at32, at64), "topk " << k << " positions, largest " << descending);
            BOOST_TEST(same(top32, top64), "topk " << k << " values, largest " << descending);
        }
    }
}

// Transposing layouts walk 32 x 32 tiles, gathering a transposed input of 4- or 8-byte items
// into a buffer first: contiguous() of a transpose and a + b.T match an element-by-element
// reading in every such dtype (and in bool, which is not gathered), on ragged tiles and with a
// batch dim.
BOOST_AUTO_TEST_CASE(transposing_layouts_match_element_by_element) {
    const kael::Shape shape = {3, 70, 45};
    std::int64_t count = 1;
    for (const auto size : shape) count *= size;
    std::vector<double> values(static_cast<size_t>(count));
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<double>(static_cast<std::int64_t>(i * 7919 % 1009) - 504);
    }
    for (const DType dtype : {DType::F32, DType::F64, DType::I64, DType::Bool}) {
        const Tensor a = kael::tensor(values).reshape(shape).to(dtype);
        const Tensor b = (kael::tensor(values).reshape({3, 45, 70}) * 0.5).to(dtype);
        const std::vector<double> av = a.to(DType::F64).to_vector<double>();
        const Tensor copied = a.transpose(1, 2).contiguous().to(DType::F64);
        const Tensor summed = (a + b.transpose(1, 2)).to(DType::F64);
        const std::vector<double> cv = copied.to_vector<double>();
        const std::vector<double> sv = summed.to_vector<double>();
        const Tensor plain_sum = (a + b.transpose(1, 2).contiguous()).to(DType::F64);
        const std::vector<double> pv = plain_sum.to_vector<double>();
        std::size_t wrong = 0;
        for (std::int64_t n = 0; n < 3; ++n) {
            for (std::int64_t i = 0; i < 70; ++i) {
                for (std::int64_t j = 0; j < 45; ++j) {
                    // copied[n][j][i] = a[n][i][j]; summed[n][i][j] = a[n][i][j] + b[n][j][i].
                    wrong += cv[static_cast<size_t>((n * 45 + j) * 70 + i)] !=
                             av[static_cast<size_t>((n * 70 + i) * 45 + j)];
                    wrong += sv[static_cast<size_t>((n * 70 + i) * 45 + j)] !=
                             pv[static_cast<size_t>((n * 70 + i) * 45 + j)];
                }
            }
        }
        BOOST_TEST(wrong == 0U, "dtype " << static_cast<int>(dtype) << ": " << wrong);
    }
}

// Inputs that repeat one value along the output's run (a 0-d scalar, a broadcast mask dim) are
// spelled out in a buffer a 256-element chunk at a time: the results equal those from the same
// inputs made contiguous first, on ragged runs (1000 = 3 chunks + 232), in every dtype.
BOOST_AUTO_TEST_CASE(repeated_inputs_match_materialized_ones) {
    const kael::Shape shape = {3, 5, 1000};
    kael::manual_seed(17);
    const Tensor mask = kael::gt(kael::randn({5, 1}), kael::zeros({5, 1}));
    // Scaled by a full tensor: a scalar factor would take the path under test itself.
    const Tensor noise = kael::randn(shape) * kael::full(shape, 50.0);
    for (const DType dtype : {DType::F32, DType::F64, DType::I64, DType::Bool}) {
        const Tensor x = noise.to(dtype);
        const Tensor scalar = kael::full({}, 3.0, dtype);
        const Tensor wide_mask = mask.expand(shape).contiguous();
        const Tensor wide_scalar = scalar.expand(shape).contiguous();
        const std::pair<Tensor, Tensor> pairs[] = {
            {kael::where(mask.expand(shape), scalar, x), kael::where(wide_mask, wide_scalar, x)},
            {x * scalar, x * wide_scalar},
            {scalar - x.to(DType::F64), wide_scalar - x.to(DType::F64)},
        };
        for (const auto& [repeated, materialized] : pairs) {
            BOOST_TEST(repeated.to(DType::F64).to_vector<double>() ==
                           materialized.to(DType::F64).to_vector<double>(),
                       "dtype " << static_cast<int>(dtype));
        }
    }
}

// Up to 8 long f32/f64 rows take blocked chains (sequence.cpp), for cumsum and cumprod: each
// row's prefixes equal those of the one-chain path, which 9 copies of the row take, within an
// f32 ulp (both accumulate in double), on a row that ends in a partial block. Returns the count
// of prefixes that differ, and checks the prefixes at the special values as well.
template <typename Scan>
void check_blocked_scan(const std::vector<double>& values, Scan scan, double at_13000,
                        bool nan_at_end) {
    const auto length = static_cast<std::int64_t>(values.size());
    for (const DType dtype : {DType::F32, DType::F64}) {
        const Tensor row = kael::tensor(values).to(dtype);
        const Tensor rows = kael::stack(std::vector<Tensor>(9, row));
        const std::vector<double> blocked =
            scan(kael::stack({row, row})).to(DType::F64).template to_vector<double>();
        const std::vector<double> chained = scan(rows).to(DType::F64).template to_vector<double>();
        // f32: the double results round to the same float but for an ulp; f64: they are
        // associated differently, so they differ by rounding relative to the largest prefix.
        std::size_t wrong = 0;
        double largest = 1;
        for (std::size_t i = 0; i < blocked.size(); ++i) {
            const double want = chained[i % static_cast<std::size_t>(length)];
            largest = i % static_cast<std::size_t>(length) == 0 ? 1 : largest;
            largest = std::isfinite(want) ? std::max(largest, std::fabs(want)) : largest;
            const double tolerance =
                dtype == DType::F32 ? 2.4e-7 * std::max(1.0, std::fabs(want)) : 1e-13 * largest;
            const bool same = blocked[i] == want || (std::isnan(want) && std::isnan(blocked[i])) ||
                              std::fabs(blocked[i] - want) <= tolerance;
            wrong += same ? 0 : 1;
        }
        BOOST_TEST(wrong == 0U, "dtype " << static_cast<int>(dtype) << ": " << wrong);
        BOOST_TEST((blocked[13000] == at_13000 || (std::isinf(at_13000) && std::isinf(blocked[13000]))));
        BOOST_TEST(std::isnan(blocked[static_cast<std::size_t>(length) - 1]) == nan_at_end);
    }
}

// cumsum with an inf, then a -inf (NaN from there on, in both).
BOOST_AUTO_TEST_CASE(long_row_cumsum_matches_the_row_task) {
    constexpr std::int64_t kLength = 8 * 2048 + 777;
    kael::manual_seed(19);
    std::vector<double> values = kael::randn({kLength}, DType::F64).to_vector<double>();
    values[12000] = std::numeric_limits<double>::infinity();
    values[15000] = -std::numeric_limits<double>::infinity();
    check_blocked_scan(values, [](const Tensor& t) { return kael::cumsum(t, 1); },
                       std::numeric_limits<double>::infinity(), true);
}

// cumprod of values near one with a 0, then an inf (0 * inf: NaN from there on, in both).
BOOST_AUTO_TEST_CASE(long_row_cumprod_matches_the_row_task) {
    constexpr std::int64_t kLength = 8 * 2048 + 777;
    kael::manual_seed(23);
    std::vector<double> values =
        (kael::randn({kLength}, DType::F64) * 1e-3 + 1.0).to_vector<double>();
    values[12000] = 0.0;
    values[15000] = std::numeric_limits<double>::infinity();
    check_blocked_scan(values, [](const Tensor& t) { return kael::cumprod(t, 1); }, 0.0, true);
}

// f32 argmax/argmin (the row's extreme, then the first element equal to it or the first NaN)
// give the f64 path's in-order answer: rows short, block-sized and of several blocks, with a
// NaN, -0 before +0 at the top, and runs of ties; max(dim) returns the element at that index.
BOOST_AUTO_TEST_CASE(f32_arg_extremes_match_the_in_order_fold) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const std::int64_t columns : {64, 100, 4096, 9000}) {
        const std::int64_t rows = 4;
        std::vector<float> values(static_cast<size_t>(rows * columns));
        for (size_t i = 0; i < values.size(); ++i) {
            values[i] = static_cast<float>(static_cast<std::int64_t>(i * 7919 % 211) - 105);
        }
        const auto at = [&](std::int64_t row, std::int64_t column) -> float& {
            return values[static_cast<size_t>(row * columns + column)];
        };
        at(0, columns - 3) = nan;  // a late NaN wins
        at(0, columns - 1) = nan;
        for (std::int64_t j = 0; j < columns; ++j) {
            at(1, j) = -1.0F - static_cast<float>(j % 2);  // ties at both extremes
            at(2, j) = 5.0F;                               // one long run of ties
        }
        at(1, columns / 2) = -0.0F;  // -0 before +0 at the top: the first one wins
        at(1, columns - 1) = 0.0F;
        const Tensor x32 = kael::tensor(values).view({rows, columns});
        const Tensor x64 = x32.to(DType::F64);
        for (const bool largest : {true, false}) {
            const Tensor got = largest ? kael::argmax(x32, 1) : kael::argmin(x32, 1);
            const Tensor want = largest ? kael::argmax(x64, 1) : kael::argmin(x64, 1);
            BOOST_TEST(got.to_vector<std::int64_t>() == want.to_vector<std::int64_t>(),
                       "columns " << columns << ", largest " << largest);
            const auto [picked, indices] =
                largest ? kael::max_with_indices(x32, 1) : kael::min_with_indices(x32, 1);
            BOOST_TEST(indices.to_vector<std::int64_t>() == want.to_vector<std::int64_t>());
            const std::vector<float> picked_values = picked.to_vector<float>();
            const std::vector<std::int64_t> positions = want.to_vector<std::int64_t>();
            for (std::int64_t row = 0; row < rows; ++row) {
                const float expected = at(row, positions[static_cast<size_t>(row)]);
                const float value = picked_values[static_cast<size_t>(row)];
                BOOST_TEST((std::isnan(expected) ? std::isnan(value)
                                                 : std::signbit(value) == std::signbit(expected) &&
                                                       value == expected));
            }
        }
    }
}
