// var and std through the fused variance reduction (Welford states merged by Chan's formula):
// precision under a large offset against a two-pass double reference, torch's rules for NaN,
// inf, empty inputs and corrections >= n, and gradients against finite differences.
#define BOOST_TEST_MODULE variance
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/random.h"
#include "kael/registry.h"

using kael::DType;
using kael::Tensor;

namespace {

std::vector<kael::Device> devices() {
    std::vector<kael::Device> all = {kael::kCPU};
    if (kael::is_available(kael::Device("cuda"))) {
        all.emplace_back("cuda:0");
    }
    return all;
}

// Population variance of each row, mean first, then the squared deviations, all in double.
std::vector<double> two_pass_rows(const std::vector<double>& values, std::size_t width) {
    std::vector<double> result;
    for (std::size_t begin = 0; begin < values.size(); begin += width) {
        double total = 0;
        for (std::size_t i = begin; i < begin + width; ++i) total += values[i];
        const double mean = total / static_cast<double>(width);
        double squares = 0;
        for (std::size_t i = begin; i < begin + width; ++i) {
            squares += (values[i] - mean) * (values[i] - mean);
        }
        result.push_back(squares / static_cast<double>(width));
    }
    return result;
}

}  // namespace

BOOST_AUTO_TEST_CASE(welford_merges_keep_precision_under_a_large_offset) {
    kael::manual_seed(5);
    // Rows of one block, of many blocks (merged pairwise) and of an odd block count.
    for (const std::int64_t width : {1000, 20000, 12289}) {
        for (const DType dtype : {DType::F32, DType::F64}) {
            // float32 holds 1e6 to 1/16, so its noise is larger; float64 gets 1e-3 noise.
            const double noise = dtype == DType::F32 ? 1.0 : 1e-3;
            const Tensor host = (kael::randn({3, width}, DType::F64) * noise + 1e6).to(dtype);
            const std::vector<double> exact =
                two_pass_rows(host.to(DType::F64).to_vector<double>(), static_cast<std::size_t>(width));
            const double rtol = dtype == DType::F32 ? 2e-7 : 3e-7;  // seen: 4e-8 both
            for (const kael::Device& device : devices()) {
                BOOST_TEST_CONTEXT("width " << width << ", " << kael::to_string(dtype) << ", "
                                            << device.str()) {
                    const Tensor x = host.to(device);
                    const std::vector<double> rows =
                        kael::var(x, 1, 0).to(DType::F64).cpu().to_vector<double>();
                    const std::vector<double> columns =
                        kael::var(x.T().contiguous().T(), 1, 0).to(DType::F64).cpu().to_vector<double>();
                    for (std::size_t r = 0; r < exact.size(); ++r) {
                        BOOST_TEST(rows[r] == exact[r], boost::test_tools::tolerance(rtol));
                        BOOST_TEST(columns[r] == exact[r], boost::test_tools::tolerance(rtol));
                    }
                    const double all = kael::var(x, std::nullopt, 0).to(DType::F64).item<double>();
                    const double all_exact = two_pass_rows(
                        host.to(DType::F64).to_vector<double>(), exact.size() * width)[0];
                    BOOST_TEST(all == all_exact, boost::test_tools::tolerance(rtol));
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(var_and_std_follow_torch_for_specials_and_small_counts) {
    const double nan = std::nan("");
    const double inf = std::numeric_limits<double>::infinity();
    for (const kael::Device& device : devices()) {
        for (const DType dtype : {DType::F32, DType::F64}) {
            const auto row = [&](std::vector<double> values) {
                return kael::tensor(values).to(dtype).to(device);
            };
            BOOST_TEST(std::isnan(kael::var(row({1, nan, 2})).to(DType::F64).item<double>()));
            BOOST_TEST(std::isnan(kael::stddev(row({1, inf, 2})).to(DType::F64).item<double>()));
            // n - correction <= 0: inf for a spread, NaN for a constant, as x / 0.
            BOOST_TEST(kael::var(row({1, 2}), 0, 2).to(DType::F64).item<double>() == inf);
            BOOST_TEST(std::isnan(kael::var(row({3, 3}), 0, 5).to(DType::F64).item<double>()));
            BOOST_TEST(std::isnan(kael::stddev(row({}), 0, 0).to(DType::F64).item<double>()));
            BOOST_TEST(kael::var(row({2}), 0, 0).to(DType::F64).item<double>() == 0.0);
            const Tensor scalar = kael::full({}, 4.0, dtype, device);
            BOOST_TEST(kael::var(scalar, 0, 0, true).to(DType::F64).item<double>() == 0.0);
            BOOST_TEST(kael::stddev(row({1, 2, 3, 4}), 0, 1).to(DType::F64).item<double>() ==
                       std::sqrt(5.0 / 3.0), boost::test_tools::tolerance(1e-6));
        }
    }
}

BOOST_AUTO_TEST_CASE(var_and_std_gradients_match_finite_differences) {
    kael::manual_seed(8);
    const Tensor x = kael::randn({3, 5}, DType::F64).set_requires_grad(true);
    using Inputs = std::vector<Tensor>;
    for (const std::int64_t correction : {0, 1, 2}) {
        for (const bool keepdim : {false, true}) {
            for (const std::optional<std::int64_t> dim :
                 {std::optional<std::int64_t>{}, std::optional<std::int64_t>{0},
                  std::optional<std::int64_t>{-1}}) {
                BOOST_TEST_CONTEXT("correction " << correction << ", keepdim " << keepdim
                                                 << ", dim " << (dim ? *dim : 99)) {
                    BOOST_TEST(kael::autograd::gradcheck(
                        [&](const Inputs& in) {
                            return kael::sum(kael::square(kael::var(in[0], dim, correction, keepdim)));
                        },
                        {x}));
                    BOOST_TEST(kael::autograd::gradcheck(
                        [&](const Inputs& in) {
                            return kael::sum(kael::stddev(in[0], dim, correction, keepdim));
                        },
                        {x}));
                }
            }
        }
    }
    const Tensor scalar = kael::full({}, 1.5, DType::F64).set_requires_grad(true);
    kael::var(scalar, 0, 0).backward();
    BOOST_TEST(scalar.grad().item<double>() == 0.0);
}
