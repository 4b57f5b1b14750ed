#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <numeric>

#include "kael/ops.h"
#include "composite_ops_test_support.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using namespace kael_test;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(cat_joins_any_layout_and_promotes) {
    const Tensor a = iota({2, 3});
    const Tensor b = iota({3, 2}).T() + 10.0;  // [[10, 12, 14], [11, 13, 15]]
    BOOST_TEST(v<float>(kael::cat({a, b}, 0)) ==
                   (std::vector<float>{0, 1, 2, 3, 4, 5, 10, 12, 14, 11, 13, 15}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::cat({a, b}, -1)) ==
                   (std::vector<float>{0, 1, 2, 10, 12, 14, 3, 4, 5, 11, 13, 15}),
               tt::per_element());
    const Tensor stepped = iota({2, 6}, DType::I64).slice(1, 0, 6, 3);  // [[0, 3], [6, 9]]
    const Tensor joined = kael::cat({stepped, a, kael::zeros({2, 0})}, 1);
    BOOST_TEST(joined.dtype() == DType::F32);
    BOOST_TEST((joined.shape() == Shape{2, 5}));
    BOOST_TEST(v<float>(joined) == (std::vector<float>{0, 3, 0, 1, 2, 6, 9, 3, 4, 5}),
               tt::per_element());
    const Tensor broadcast = kael::tensor(std::vector<double>{7, 8, 9}).expand({2, 3});
    BOOST_TEST(kael::cat({a, broadcast}, 0).dtype() == DType::F64);
    BOOST_TEST(v<double>(kael::cat({broadcast, a}, 0)).front() == 7.0);
    BOOST_TEST(v<bool>(kael::cat({kael::tensor_bool({true}), kael::tensor_bool({false, true})})) ==
                   (std::vector<bool>{true, false, true}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::cat({kael::zeros({0}), a}, 0)) == v<float>(a), tt::per_element());
    BOOST_TEST((kael::cat({kael::zeros({0}), kael::zeros({0})}).shape() == Shape{0}));
    BOOST_TEST((kael::cat({kael::zeros({0, 3}), kael::zeros({0, 3})}, 0).shape() == Shape{0, 3}));
    BOOST_TEST((kael::cat({a}, 1).shape() == Shape{2, 3}));
    BOOST_CHECK_THROW((void)kael::cat({}, 0), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cat({a, iota({2, 4})}, 0), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cat({a, iota({6})}, 0), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cat({kael::ones({}), kael::ones({})}, 0), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cat({a, b}, 2), kael::IndexError);
    try {
        (void)kael::cat({a, iota({3, 4})}, 0);
        BOOST_ERROR("cat accepted mismatched shapes");
    } catch (const kael::ValueError& error) {
        BOOST_TEST(std::string(error.what()).find("[3, 4]") != std::string::npos, error.what());
    }
}

BOOST_AUTO_TEST_CASE(stack_adds_a_dimension) {
    const Tensor a = iota({2, 2});
    const Tensor b = iota({2, 2}).T();
    const Tensor c = iota({2, 4}).slice(1, 0, 4, 2);  // [[0, 2], [4, 6]]
    BOOST_TEST((kael::stack({a, b, c}).shape() == Shape{3, 2, 2}));
    BOOST_TEST(v<float>(kael::stack({a, b, c})) ==
                   (std::vector<float>{0, 1, 2, 3, 0, 2, 1, 3, 0, 2, 4, 6}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::stack({a, b}, 1)) == (std::vector<float>{0, 1, 0, 2, 2, 3, 1, 3}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::stack({a, b}, -1)) == (std::vector<float>{0, 0, 1, 2, 2, 1, 3, 3}),
               tt::per_element());
    const Tensor scalars = kael::stack({kael::full({}, 1), kael::full_int({}, 2, DType::I64)});
    BOOST_TEST((scalars.shape() == Shape{2}));
    BOOST_TEST(v<float>(scalars) == (std::vector<float>{1, 2}), tt::per_element());
    BOOST_TEST((kael::stack({kael::zeros({0}), kael::zeros({0})}, 1).shape() == Shape{0, 2}));
    BOOST_CHECK_THROW((void)kael::stack({a, iota({4})}), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::stack({}), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::stack({a, b}, 3), kael::IndexError);
}

namespace {

bool before_with_nan_last(double a, double b) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
}

// std::stable_sort of one line; returns positions.
std::vector<std::int64_t> stable_order(const std::vector<double>& line, bool descending) {
    std::vector<std::int64_t> order(line.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
        const double a = line[static_cast<std::size_t>(x)];
        const double b = line[static_cast<std::size_t>(y)];
        return descending ? before_with_nan_last(b, a) : before_with_nan_last(a, b);
    });
    return order;
}

void check_sort_of(const Tensor& x, int dim, bool descending) {
    const Grid grid(x);
    const auto expected_indices = map_lines(grid, dim, [&](const auto& line) {
        const auto order = stable_order(line, descending);
        return std::vector<double>(order.begin(), order.end());
    });
    const auto expected_values = map_lines(grid, dim, [&](const auto& line) {
        std::vector<double> sorted;
        for (const std::int64_t i : stable_order(line, descending)) {
            sorted.push_back(line[static_cast<std::size_t>(i)]);
        }
        return sorted;
    });
    const auto [values, indices] = kael::sort(x, dim, descending);
    BOOST_TEST(values.dtype() == x.dtype());
    BOOST_TEST(indices.dtype() == DType::I64);
    BOOST_TEST((values.shape() == x.shape()));
    check_close(v<double>(values), expected_values, 0);
    check_close(v<double>(indices), expected_indices, 0);
    check_close(v<double>(kael::argsort(x, dim, descending)), expected_indices, 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(sort_matches_std_stable_sort) {
    for (const DType dtype : {DType::F64, DType::F32, DType::I64, DType::Bool}) {
        for (const Tensor& x : layouts(dtype)) {
            for (const int dim : {0, 1}) {
                for (const bool descending : {false, true}) {
                    check_sort_of(x, dim, descending);
                }
            }
        }
    }
    const Tensor with_nan =
        kael::tensor(std::vector<double>{3, kNaN, -1, 3, -kInf, kNaN, kInf, 0}, {2, 4})
            .to(DType::F32);
    for (const bool descending : {false, true}) {
        check_sort_of(with_nan, 1, descending);
        check_sort_of(with_nan, 0, descending);
    }
    const auto [ascending, order] = kael::sort(with_nan.view({8}));
    const auto sorted = v<float>(ascending);
    BOOST_TEST(sorted[0] == -kInf);
    BOOST_TEST(sorted[5] == kInf);
    BOOST_TEST((std::isnan(sorted[6]) && std::isnan(sorted[7])));
    BOOST_TEST(v<std::int64_t>(order) == (std::vector<std::int64_t>{4, 2, 7, 0, 3, 6, 1, 5}),
               tt::per_element());
    const auto [big, big_order] = kael::sort(kael::tensor(std::vector<std::int64_t>{
        std::numeric_limits<std::int64_t>::max(), -5, std::numeric_limits<std::int64_t>::min()}));
    BOOST_TEST(v<std::int64_t>(big).front() == std::numeric_limits<std::int64_t>::min());
    BOOST_TEST(v<std::int64_t>(big_order) == (std::vector<std::int64_t>{2, 1, 0}),
               tt::per_element());
    const Tensor batch = mixed({2, 3, 5});
    const auto [middle, middle_order] = kael::sort(batch, 1, true);
    BOOST_TEST((middle.shape() == Shape{2, 3, 5}));
    BOOST_TEST(kael::allclose(middle, kael::gather(batch, 1, middle_order)));
    const auto [single, zero] = kael::sort(kael::full({}, 4.0));
    BOOST_TEST((single.shape() == Shape{}));
    BOOST_TEST(single.item<float>() == 4.0f);
    BOOST_TEST(zero.item<std::int64_t>() == 0);
    BOOST_TEST((kael::sort(kael::zeros({3, 0}), 1).first.shape() == Shape{3, 0}));
    BOOST_TEST((kael::argsort(kael::zeros({0, 4}), 1).shape() == Shape{0, 4}));
    BOOST_CHECK_THROW((void)kael::sort(batch, 3), kael::IndexError);
}

BOOST_AUTO_TEST_CASE(topk_takes_the_first_k_of_a_stable_sort) {
    for (const Tensor& x : layouts()) {
        const Grid grid(x);
        for (const int dim : {0, 1}) {
            for (const bool largest : {true, false}) {
                const std::int64_t k = 3;
                const auto [values, indices] = kael::topk(x, k, dim, largest);
                Shape expected_shape = x.shape();
                expected_shape[static_cast<std::size_t>(dim)] = k;
                BOOST_TEST((values.shape() == expected_shape));
                const Tensor full_order = kael::argsort(x, dim, largest);
                BOOST_TEST(v<std::int64_t>(indices) == v<std::int64_t>(full_order.slice(dim, 0, k)),
                           tt::per_element());
                for (std::int64_t line = 0; line < grid.lines(dim); ++line) {
                    auto values_line = grid.line(dim, line);
                    const auto order = stable_order(values_line, largest);
                    const Tensor picked = values.select(1 - dim, line);
                    std::vector<double> expected;
                    for (std::int64_t i = 0; i < k; ++i) {
                        expected.push_back(values_line[static_cast<std::size_t>(order[i])]);
                    }
                    check_close(v<double>(picked), expected, 0);
                }
            }
        }
    }
    const Tensor row = kael::tensor(std::vector<std::int64_t>{5, 1, 9, 1, 7});
    const auto [top, where] = kael::topk(row, 2);
    BOOST_TEST(v<std::int64_t>(top) == (std::vector<std::int64_t>{9, 7}), tt::per_element());
    BOOST_TEST(v<std::int64_t>(where) == (std::vector<std::int64_t>{2, 4}), tt::per_element());
    const auto [bottom, bottom_where] = kael::topk(row, 2, 0, false);
    BOOST_TEST(v<std::int64_t>(bottom) == (std::vector<std::int64_t>{1, 1}), tt::per_element());
    BOOST_TEST(v<std::int64_t>(bottom_where) == (std::vector<std::int64_t>{1, 3}),
               tt::per_element());
    BOOST_TEST(kael::topk(row, 0).first.numel() == 0);
    BOOST_TEST((kael::topk(kael::zeros({2, 0}), 0, 1).first.shape() == Shape{2, 0}));
    BOOST_CHECK_THROW((void)kael::topk(row, 6), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::topk(row, -1), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::topk(row, 1, 1), kael::IndexError);
}

BOOST_AUTO_TEST_CASE(cumsum_matches_std_partial_sum) {
    const LineMap prefix = [](const std::vector<double>& line) {
        std::vector<double> sums(line.size());
        std::partial_sum(line.begin(), line.end(), sums.begin());
        return sums;
    };
    for (const DType dtype : {DType::F64, DType::F32, DType::I64, DType::Bool}) {
        for (const Tensor& x : layouts(dtype)) {
            for (const int dim : {0, 1}) {
                const Tensor sums = kael::cumsum(x, dim);
                BOOST_TEST(sums.dtype() == (is_floating(dtype) ? dtype : DType::I64));
                check_close(v<double>(sums), map_lines(Grid(x), dim, prefix), 1e-6);
            }
        }
    }
    // f32 accumulates in double: 2^24 + 1 + 1 stays exact where float steps would lose the ones.
    const Tensor big = kael::tensor(std::vector<float>{16777216.0f, 1, 1});
    BOOST_TEST(v<float>(kael::cumsum(big, 0)).back() == 16777218.0f);
    const std::int64_t top = std::numeric_limits<std::int64_t>::max();
    BOOST_TEST(
        v<std::int64_t>(kael::cumsum(kael::tensor(std::vector<std::int64_t>{top, 1}), 0)).back() ==
        std::numeric_limits<std::int64_t>::min());
    const Tensor broadcast = kael::tensor(std::vector<double>{1, 2, 3}).expand({2, 3});
    BOOST_TEST(v<double>(kael::cumsum(broadcast, 0)) == (std::vector<double>{1, 2, 3, 2, 4, 6}),
               tt::per_element());
    BOOST_TEST(kael::cumsum(kael::full({}, 5.0), 0).item<float>() == 5.0f);
    BOOST_TEST((kael::cumsum(kael::zeros({0, 3}), 1).shape() == Shape{0, 3}));
    BOOST_TEST((kael::cumsum(kael::zeros({3, 0}, DType::Bool), 1).shape() == Shape{3, 0}));
    BOOST_CHECK_THROW((void)kael::cumsum(big, 1), kael::IndexError);
}
