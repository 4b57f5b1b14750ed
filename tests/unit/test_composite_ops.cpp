#define BOOST_TEST_MODULE composite_ops
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "kael/ops.h"
#include "kael/plugin_api.h"
#include "kael/registry.h"
#include "composite_ops_test_support.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using namespace kael_test;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(cpu_plugin_has_abi_1_1_sequence_slots) {
    const auto records = kael::plugins();
    const auto cpu = std::find_if(records.begin(), records.end(),
                                  [](const auto& record) { return record.name == "cpu"; });
    BOOST_REQUIRE(cpu != records.end());
    BOOST_TEST(cpu->abi_minor == unsigned{KAEL_ABI_MINOR});
    BOOST_TEST(kael::core_abi_version() == "1.20");
}

BOOST_AUTO_TEST_CASE(random_is_seeded_and_in_range) {
    kael::manual_seed(7);
    const Tensor first = kael::rand({3, 5});
    kael::manual_seed(7);
    const Tensor second = kael::rand({3, 5});
    BOOST_TEST(first.dtype() == DType::F32);
    BOOST_TEST((first.shape() == Shape{3, 5}));
    BOOST_TEST(v<float>(first) == v<float>(second), tt::per_element());
    BOOST_TEST(v<float>(kael::rand({3, 5})) != v<float>(second));

    kael::manual_seed(11);
    const auto uniform = v<double>(kael::rand({20000}, DType::F64));
    BOOST_TEST(*std::min_element(uniform.begin(), uniform.end()) >= 0.0);
    BOOST_TEST(*std::max_element(uniform.begin(), uniform.end()) < 1.0);
    BOOST_TEST(std::accumulate(uniform.begin(), uniform.end(), 0.0) / 20000 == 0.5,
               tt::tolerance(0.02));

    const auto normal = v<double>(kael::randn({20001}, DType::F64));
    double mean = std::accumulate(normal.begin(), normal.end(), 0.0) / 20001;
    BOOST_TEST(std::abs(mean) < 0.03);
    BOOST_TEST(variance_of(normal, 1) == 1.0, tt::tolerance(0.05));
    kael::manual_seed(3);
    const auto normal_again = v<float>(kael::randn({2, 3}));
    kael::manual_seed(3);
    BOOST_TEST(v<float>(kael::randn({2, 3})) == normal_again, tt::per_element());

    const Tensor integers = kael::randint(-3, 4, {2000});
    BOOST_TEST(integers.dtype() == DType::I64);
    const auto drawn = v<std::int64_t>(integers);
    for (std::int64_t value = -3; value < 4; ++value) {
        BOOST_TEST(std::count(drawn.begin(), drawn.end(), value) > 200);
    }
    BOOST_TEST(*std::min_element(drawn.begin(), drawn.end()) == -3);
    BOOST_TEST(*std::max_element(drawn.begin(), drawn.end()) == 3);
    const auto extreme = v<std::int64_t>(kael::randint(std::numeric_limits<std::int64_t>::min(),
                                                       std::numeric_limits<std::int64_t>::max(),
                                                       {4}));
    BOOST_TEST(extreme.size() == 4U);

    const auto mask = v<bool>(kael::bernoulli_mask({10000}, 0.3));
    BOOST_TEST(static_cast<double>(std::count(mask.begin(), mask.end(), true)) / 10000 == 0.3,
               tt::tolerance(0.07));
    const auto none = v<bool>(kael::bernoulli_mask({50}, 0.0));
    const auto every = v<bool>(kael::bernoulli_mask({50}, 1.0));
    BOOST_TEST(std::count(none.begin(), none.end(), true) == 0);
    BOOST_TEST(std::count(every.begin(), every.end(), true) == 50);

    BOOST_TEST((kael::rand({}).shape() == Shape{}));
    BOOST_TEST(kael::rand({0, 3}).numel() == 0);
    BOOST_TEST(kael::randint(0, 2, {3, 0}).numel() == 0);
    BOOST_CHECK_THROW((void)kael::rand({2}, DType::I64), kael::TypeError);
    BOOST_CHECK_THROW((void)kael::randn({2}, DType::Bool), kael::TypeError);
    BOOST_CHECK_THROW((void)kael::randint(3, 3, {2}), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::bernoulli_mask({2}, 1.5), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::bernoulli_mask({2}, kNaN), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::rand({-1}), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(var_and_stddev_match_a_loop) {
    for (const DType dtype : {DType::F64, DType::F32}) {
        for (const Tensor& x : layouts(dtype)) {
            const Grid grid(x);
            for (const int dim : {0, 1}) {
                for (const int correction : {0, 1}) {
                    const auto expected = reduce_lines(grid, dim, [&](const auto& line) {
                        return variance_of(line, correction);
                    });
                    const Tensor result = kael::var(x, dim, correction);
                    BOOST_TEST(result.dtype() == dtype);
                    check_close(v<double>(result), expected, 1e-5);
                    std::vector<double> roots;
                    for (double value : expected) roots.push_back(std::sqrt(value));
                    check_close(v<double>(kael::stddev(x, dim - 2, correction)), roots, 1e-5);
                }
            }
            check_close(v<double>(kael::var(x)), {variance_of(grid.values, 1)}, 1e-5);
        }
    }
    const Tensor x = mixed({3, 4});
    BOOST_TEST((kael::var(x, 1, 1, true).shape() == Shape{3, 1}));
    BOOST_TEST((kael::var(x, std::nullopt, 1, true).shape() == Shape{1, 1}));
    BOOST_TEST(std::isnan(kael::var(kael::ones({1}, DType::F64)).item<double>()));
    BOOST_TEST(std::isnan(kael::var(kael::zeros({0, 3})).item<float>()));
    BOOST_TEST((kael::var(kael::zeros({0, 3}), 1).shape() == Shape{0}));
    BOOST_CHECK_THROW((void)kael::var(iota({3}, DType::I64)), kael::TypeError);
    BOOST_CHECK_THROW((void)kael::var(x, 2), kael::IndexError);
    BOOST_CHECK_THROW((void)kael::var(x, 0, -1), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(norm_matches_a_loop) {
    for (const Tensor& x : layouts()) {
        double squares = 0;
        for (double value : v<double>(x)) squares += value * value;
        BOOST_TEST(kael::norm(x).item<double>() == std::sqrt(squares), tt::tolerance(1e-12));
    }
    BOOST_TEST(kael::norm(kael::tensor(std::vector<float>{3, 4})).item<float>() == 5.0f);
    BOOST_TEST(kael::norm(kael::zeros({0})).item<float>() == 0.0f);
    BOOST_CHECK_THROW((void)kael::norm(iota({3}, DType::I64)), kael::TypeError);
}

BOOST_AUTO_TEST_CASE(all_and_any_on_every_dtype) {
    const Tensor floats = kael::tensor(std::vector<float>{1, 0, 2, kNaN, 3, -1}, {2, 3});
    BOOST_TEST(!kael::all(floats).item<bool>());
    BOOST_TEST(kael::any(floats).item<bool>());
    BOOST_TEST(v<bool>(kael::all(floats, 1)) == (std::vector<bool>{false, true}),
               tt::per_element());
    BOOST_TEST(v<bool>(kael::all(floats, 0)) == (std::vector<bool>{true, false, true}),
               tt::per_element());
    BOOST_TEST(v<bool>(kael::all(floats.T(), 1)) == (std::vector<bool>{true, false, true}),
               tt::per_element());
    BOOST_TEST((kael::any(floats, 0, true).shape() == Shape{1, 3}));
    BOOST_TEST((kael::all(floats, std::nullopt, true).shape() == Shape{1, 1}));
    const Tensor integers = kael::tensor(std::vector<std::int64_t>{0, 0, 5, 0, 0, 0}, {3, 2});
    BOOST_TEST(v<bool>(kael::any(integers, 1)) == (std::vector<bool>{false, true, false}),
               tt::per_element());
    BOOST_TEST(v<bool>(kael::any(integers.slice(0, 0, 3, 2), 1)) ==
                   (std::vector<bool>{false, false}), tt::per_element());
    const Tensor flags = kael::tensor_bool({true, true, false, true});
    BOOST_TEST(!kael::all(flags).item<bool>());
    BOOST_TEST(kael::all(flags.slice(0, 0, 4, 3)).item<bool>());
    BOOST_TEST(kael::all(kael::zeros({0})).item<bool>());
    BOOST_TEST(!kael::any(kael::zeros({0})).item<bool>());
    BOOST_TEST(v<bool>(kael::all(kael::zeros({2, 0}), 1)) == (std::vector<bool>{true, true}),
               tt::per_element());
    BOOST_TEST(kael::all(floats).dtype() == DType::Bool);
    BOOST_CHECK_THROW((void)kael::any(floats, 2), kael::IndexError);
}

BOOST_AUTO_TEST_CASE(logsumexp_is_stable_and_matches_a_loop) {
    for (const Tensor& x : layouts()) {
        const Grid grid(x);
        for (const int dim : {0, 1}) {
            const auto expected = reduce_lines(grid, dim, [](const auto& line) {
                double total = 0;
                for (double value : line) total += std::exp(value);
                return std::log(total);
            });
            check_close(v<double>(kael::logsumexp(x, dim)), expected, 1e-12);
        }
    }
    const Tensor rows =
        kael::tensor(std::vector<double>{1000, 1000, -kInf, -kInf, kInf, 1, kNaN, 1}, {4, 2});
    check_close(v<double>(kael::logsumexp(rows, 1)), {1000 + std::log(2.0), -kInf, kInf, kNaN});
    BOOST_TEST((kael::logsumexp(rows, 1, true).shape() == Shape{4, 1}));
    const Tensor integers = iota({2, 2}, DType::I64);
    BOOST_TEST(kael::logsumexp(integers, 1).dtype() == DType::F32);
    check_close(v<double>(kael::logsumexp(integers, 1)),
                {std::log(1 + std::exp(1.0)), std::log(std::exp(2.0) + std::exp(3.0))}, 1e-6);
    check_close(v<double>(kael::logsumexp(kael::zeros({2, 0}), 1)), {-kInf, -kInf});
    BOOST_TEST(kael::logsumexp(kael::zeros({0, 3}), 1).numel() == 0);
    BOOST_CHECK_THROW((void)kael::logsumexp(rows, -3), kael::IndexError);
}

BOOST_AUTO_TEST_CASE(softmax_and_log_softmax_match_a_loop) {
    for (const DType dtype : {DType::F64, DType::F32}) {
        for (const Tensor& x : layouts(dtype)) {
            const Grid grid(x);
            for (const int dim : {0, 1}) {
                const auto expected = map_lines(grid, dim, softmax_of);
                const Tensor probabilities = kael::softmax(x, dim);
                BOOST_TEST(probabilities.dtype() == dtype);
                check_close(v<double>(probabilities), expected, 1e-6);
                check_close(v<double>(kael::sum(probabilities, dim)),
                            std::vector<double>(static_cast<std::size_t>(grid.lines(dim)), 1.0),
                            1e-6);
                std::vector<double> logs;
                for (double value : expected) logs.push_back(std::log(value));
                check_close(v<double>(kael::log_softmax(x, dim - 2)), logs, 1e-6);
            }
        }
    }
    const Tensor huge = kael::tensor(std::vector<float>{1000, 1000, -1000, 0});
    check_close(v<double>(kael::softmax(huge, 0)), {0.5, 0.5, 0, 0});
    check_close(v<double>(kael::log_softmax(huge, 0)),
                {-std::log(2.0), -std::log(2.0), -2000 - std::log(2.0), -1000 - std::log(2.0)},
                1e-5);
    const Tensor broadcast = kael::tensor(std::vector<double>{0, 1, 2}).expand({2, 3});
    check_close(v<double>(kael::softmax(broadcast, 1)),
                map_lines(Grid(broadcast), 1, softmax_of));
    BOOST_TEST(kael::softmax(iota({3}, DType::I64), 0).dtype() == DType::F32);
    BOOST_TEST((kael::softmax(kael::zeros({0, 4}), 1).shape() == Shape{0, 4}));
    BOOST_TEST((kael::log_softmax(kael::zeros({3, 0}), 1).shape() == Shape{3, 0}));
    BOOST_CHECK_THROW((void)kael::softmax(huge, 1), kael::IndexError);
}

BOOST_AUTO_TEST_CASE(cross_entropy_matches_a_loop) {
    const Tensor logits = mixed({4, 5});
    const std::vector<std::int64_t> targets{0, 4, 2, 4};
    const Grid grid(logits);
    std::vector<double> losses;
    for (std::int64_t n = 0; n < 4; ++n) {
        const auto row = grid.line(1, n);
        double total = 0;
        for (double value : row) total += std::exp(value);
        losses.push_back(std::log(total) - row[static_cast<std::size_t>(targets[n])]);
    }
    const Tensor target_tensor = kael::tensor(targets);
    const double mean = std::accumulate(losses.begin(), losses.end(), 0.0) / 4;
    BOOST_TEST(kael::cross_entropy(logits, target_tensor).item<double>() == mean,
               tt::tolerance(1e-12));
    BOOST_TEST(kael::cross_entropy(logits, target_tensor, kael::Reduction::Sum).item<double>() ==
                   mean * 4, tt::tolerance(1e-12));
    check_close(v<double>(kael::cross_entropy(logits, target_tensor, kael::Reduction::None)),
                losses, 1e-12);
    // Transposed logits and strided targets give the same numbers.
    const Tensor transposed = logits.T().contiguous().T();
    const Tensor spaced = kael::tensor(std::vector<std::int64_t>{0, 9, 4, 9, 2, 9, 4}).slice(
        0, 0, 7, 2);
    BOOST_TEST(kael::cross_entropy(transposed, spaced).item<double>() == mean,
               tt::tolerance(1e-12));
    BOOST_TEST(kael::cross_entropy(logits.to(DType::F32), target_tensor).item<float>() ==
                   static_cast<float>(mean), tt::tolerance(1e-5f));
    BOOST_TEST(std::isnan(kael::cross_entropy(kael::zeros({0, 3}), kael::zeros({0}, DType::I64))
                              .item<float>()));
    BOOST_CHECK_THROW((void)kael::cross_entropy(logits, kael::tensor(std::vector<std::int64_t>{
                                                            0, 5, 1, 1})),
                      kael::IndexError);
    BOOST_CHECK_THROW((void)kael::cross_entropy(logits, kael::tensor(std::vector<std::int64_t>{
                                                            0, -1, 1, 1})),
                      kael::IndexError);
    BOOST_CHECK_THROW((void)kael::cross_entropy(logits, target_tensor.to(DType::F32)),
                      kael::TypeError);
    BOOST_CHECK_THROW((void)kael::cross_entropy(iota({4, 5}, DType::I64), target_tensor),
                      kael::TypeError);
    BOOST_CHECK_THROW((void)kael::cross_entropy(logits, target_tensor.slice(0, 0, 3)),
                      kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cross_entropy(logits.view({20}), target_tensor),
                      kael::ValueError);
}

BOOST_AUTO_TEST_CASE(layer_norm_matches_a_loop) {
    const Tensor weight = kael::tensor(std::vector<double>{1, 2, 0.5, -1});
    const Tensor bias = kael::tensor(std::vector<double>{0, 1, 2, 3});
    const double eps = 1e-5;
    const std::vector<Tensor> inputs{mixed({3, 4}), mixed({4, 3}).T(),
                                     mixed({3, 8}).slice(1, 0, 8, 2)};
    for (const Tensor& x : inputs) {
        const Grid grid(x);
        const auto normalized = map_lines(grid, 1, [&](const auto& line) {
            double mean = 0;
            for (double value : line) mean += value;
            mean /= static_cast<double>(line.size());
            const double variance = variance_of(line, 0);
            std::vector<double> out;
            for (double value : line) out.push_back((value - mean) / std::sqrt(variance + eps));
            return out;
        });
        check_close(v<double>(kael::layer_norm(x)), normalized, 1e-9);
        std::vector<double> affine = normalized;
        for (std::size_t i = 0; i < affine.size(); ++i) {
            affine[i] = affine[i] * v<double>(weight)[i % 4] + v<double>(bias)[i % 4];
        }
        check_close(v<double>(kael::layer_norm(x, weight, bias, eps)), affine, 1e-9);
    }
    const Tensor batched = mixed({2, 3, 4}, DType::F32);
    BOOST_TEST((kael::layer_norm(batched, weight.to(DType::F32)).shape() == Shape{2, 3, 4}));
    BOOST_TEST(kael::layer_norm(kael::zeros({0, 4})).numel() == 0);
    BOOST_CHECK_THROW((void)kael::layer_norm(mixed({3, 5}), weight), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::layer_norm(mixed({3, 4}), Tensor(), bias.view({2, 2})),
                      kael::ValueError);
    BOOST_CHECK_THROW((void)kael::layer_norm(iota({3, 4}, DType::I64)), kael::TypeError);
    BOOST_CHECK_THROW((void)kael::layer_norm(kael::ones({})), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(embedding_picks_rows) {
    const Tensor weight = iota({5, 3});
    const Tensor indices = kael::tensor(std::vector<std::int64_t>{4, 0, 4, 1, 2, 3}, {2, 3});
    const Tensor rows = kael::embedding(weight, indices);
    BOOST_TEST((rows.shape() == Shape{2, 3, 3}));
    BOOST_TEST(v<float>(rows) == (std::vector<float>{12, 13, 14, 0, 1, 2, 12, 13, 14,
                                                     3, 4, 5, 6, 7, 8, 9, 10, 11}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::embedding(weight, indices.T())) ==
                   (std::vector<float>{12, 13, 14, 3, 4, 5, 0, 1, 2, 6, 7, 8, 12, 13, 14, 9, 10,
                                       11}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::embedding(iota({3, 5}).T(), indices.slice(1, 0, 3, 2))) ==
                   (std::vector<float>{4, 9, 14, 4, 9, 14, 1, 6, 11, 3, 8, 13}),
               tt::per_element());
    const Tensor single = kael::embedding(weight, kael::full_int({}, 2));
    BOOST_TEST((single.shape() == Shape{3}));
    BOOST_TEST(v<float>(single) == (std::vector<float>{6, 7, 8}), tt::per_element());
    BOOST_TEST((kael::embedding(weight, kael::zeros({0, 2}, DType::I64)).shape() ==
                Shape{0, 2, 3}));
    BOOST_CHECK_THROW((void)kael::embedding(weight, kael::full_int({1}, 5)), kael::IndexError);
    BOOST_CHECK_THROW((void)kael::embedding(weight, kael::full_int({1}, -1)), kael::IndexError);
    BOOST_CHECK_THROW((void)kael::embedding(weight, kael::zeros({1})), kael::TypeError);
    BOOST_CHECK_THROW((void)kael::embedding(iota({5}), indices), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(dropout_zeroes_and_scales) {
    const Tensor x = kael::ones({4000}, DType::F64) + 1.0;
    BOOST_TEST(kael::dropout(x, 0.0).same_impl(x));
    BOOST_TEST(kael::dropout(x, 0.5, false).same_impl(x));
    kael::manual_seed(5);
    const auto dropped = v<double>(kael::dropout(x, 0.25));
    std::int64_t kept = 0;
    for (double value : dropped) {
        BOOST_TEST((value == 0.0 || std::abs(value - 2.0 / 0.75) < 1e-12), "value " << value);
        kept += value != 0.0 ? 1 : 0;
    }
    BOOST_TEST(static_cast<double>(kept) / 4000 == 0.75, tt::tolerance(0.05));
    kael::manual_seed(5);
    BOOST_TEST(v<double>(kael::dropout(x, 0.25)) == dropped, tt::per_element());
    const Tensor strided = iota({4, 6}).slice(1, 0, 6, 2).T();
    kael::manual_seed(9);
    const Tensor out = kael::dropout(strided, 0.5);
    BOOST_TEST((out.shape() == Shape{3, 4}));
    const auto inputs = v<float>(strided);
    const auto outputs = v<float>(out);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        BOOST_TEST((outputs[i] == 0.0f || outputs[i] == 2 * inputs[i]));
    }
    BOOST_TEST(kael::dropout(kael::zeros({0, 3}), 0.5).numel() == 0);
    BOOST_CHECK_THROW((void)kael::dropout(x, 1.0), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::dropout(x, -0.1), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::dropout(x, 1.5, false), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::dropout(iota({3}, DType::I64), 0.5), kael::TypeError);
}

BOOST_AUTO_TEST_CASE(linear_matches_a_loop) {
    const Tensor weight = mixed({3, 4});  // [out, in]
    const Tensor bias = kael::tensor(std::vector<double>{1, -2, 0.5});
    const std::vector<Tensor> inputs{mixed({2, 4}), mixed({4, 2}).T(),
                                     mixed({2, 8}).slice(1, 1, 8, 2)};
    const Grid w(weight);
    for (const Tensor& x : inputs) {
        const Grid grid(x);
        std::vector<double> expected;
        for (std::int64_t n = 0; n < 2; ++n) {
            for (std::int64_t o = 0; o < 3; ++o) {
                double total = v<double>(bias)[static_cast<std::size_t>(o)];
                for (std::int64_t i = 0; i < 4; ++i) {
                    total += grid.values[static_cast<std::size_t>(n * 4 + i)] *
                             w.values[static_cast<std::size_t>(o * 4 + i)];
                }
                expected.push_back(total);
            }
        }
        check_close(v<double>(kael::linear(x, weight, bias)), expected, 1e-12);
        std::vector<double> no_bias = expected;
        for (std::size_t i = 0; i < no_bias.size(); ++i) no_bias[i] -= v<double>(bias)[i % 3];
        check_close(v<double>(kael::linear(x, weight)), no_bias, 1e-12);
    }
    BOOST_TEST((kael::linear(mixed({5, 2, 4}), weight, bias).shape() == Shape{5, 2, 3}));
    BOOST_TEST((kael::linear(kael::zeros({0, 4}, DType::F64), weight, bias).shape() ==
                Shape{0, 3}));
    BOOST_CHECK_THROW((void)kael::linear(mixed({2, 4}), weight.view({12})), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::linear(mixed({2, 4}), weight, bias.slice(0, 0, 2)),
                      kael::ValueError);
    BOOST_CHECK_THROW((void)kael::linear(mixed({2, 5}), weight), kael::ValueError);
}
