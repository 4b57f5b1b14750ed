#define BOOST_TEST_MODULE softmax
// The fused softmax family against numbers (PyTorch's and closed forms) and finite differences,
// on cpu and, where one is available, on cuda:0 (the emulated plugin here).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using kael::autograd::gradcheck;
using Inputs = std::vector<Tensor>;
namespace tt = boost::test_tools;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor leaf(const Shape& shape, unsigned seed = 11) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> uniform(-2, 2);
    std::int64_t count = 1;
    for (const auto size : shape) count *= size;
    std::vector<double> values(static_cast<std::size_t>(count));
    for (double& value : values) value = uniform(generator);
    return kael::tensor(values).reshape(shape).set_requires_grad(true);
}

std::vector<kael::Device> devices() {
    std::vector<kael::Device> all{kael::kCPU};
    const kael::Device cuda("cuda:0");
    if (kael::is_available(cuda)) {
        all.push_back(cuda);
    }
    return all;
}

void check_close(const Tensor& got, const std::vector<double>& want, double tolerance = 1e-6) {
    const std::vector<double> values = got.to_vector<double>();
    BOOST_TEST_REQUIRE(values.size() == want.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (std::isnan(want[i])) {
            BOOST_TEST(std::isnan(values[i]),
                       "element " << i << " is " << values[i] << ", not NaN");
        } else if (std::isinf(want[i])) {
            BOOST_TEST(values[i] == want[i], "element " << i);
        } else {
            BOOST_TEST(values[i] == want[i], "element " << i << tt::tolerance(tolerance));
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(infinite_rows_give_nan_and_large_logits_stay_finite) {
    for (const kael::Device& device : devices()) {
        BOOST_TEST_CONTEXT("device " << device.str()) {
            const double nan = std::nan("");
            // Rows: all -inf; one -inf; huge logits; a +inf.
            const Tensor x =
                kael::tensor(std::vector<double>{-kInf, -kInf, -kInf, 0, 1000, 1001, kInf, 1},
                             {4, 2})
                    .to(DType::F32)
                    .to(device);
            const double e = std::exp(1.0);
            check_close(kael::softmax(x, 1), {nan, nan, 0, 1, 1 / (1 + e), e / (1 + e), nan, nan});
            check_close(kael::log_softmax(x, 1),
                        {nan, nan, -kInf, 0, -std::log1p(e), -std::log1p(1 / e), nan, nan}, 1e-5);
            const Tensor targets = kael::tensor(std::vector<std::int64_t>{0, 1, 0, 1}).to(device);
            check_close(kael::cross_entropy(x, targets, kael::Reduction::None),
                        {nan, 0, std::log1p(e), nan}, 1e-5);
            // PyTorch: log_softmax([[1e30, 0]]) = [[0, -1e30]]; cross_entropy of 1000 vs 0 is 1000.
            const Tensor huge = kael::tensor(std::vector<float>{1e30f, 0}, {1, 2}).to(device);
            check_close(kael::log_softmax(huge, 1), {0, -1e30});
            const Tensor wide = kael::tensor(std::vector<float>{1000, 0}, {1, 2}).to(device);
            check_close(kael::cross_entropy(wide, targets.slice(0, 1, 2)), {1000});
        }
    }
}

BOOST_AUTO_TEST_CASE(cross_entropy_gradient_is_softmax_minus_one_hot) {
    for (const kael::Device& device : devices()) {
        BOOST_TEST_CONTEXT("device " << device.str()) {
            const Tensor logits =
                kael::tensor(std::vector<double>{0, 1, 2, -1, 0.5, 3}, {2, 3}).to(device);
            const Tensor targets = kael::tensor(std::vector<std::int64_t>{2, 0}).to(device);
            const Tensor probabilities = kael::softmax(logits, 1).cpu();
            const auto p = probabilities.to_vector<double>();
            const std::vector<double> minus_hot = {p[0], p[1], p[2] - 1, p[3] - 1, p[4], p[5]};
            for (const auto& [reduction, factor] :
                 {std::pair{kael::Reduction::Sum, 1.0}, std::pair{kael::Reduction::Mean, 0.5}}) {
                const Tensor x = logits.detach().set_requires_grad(true);
                (kael::cross_entropy(x, targets, reduction) * 3.0).backward();
                std::vector<double> want = minus_hot;
                for (double& value : want) value *= 3 * factor;
                check_close(x.grad(), want, 1e-12);
            }
            const Tensor x = logits.detach().set_requires_grad(true);
            const Tensor weight = kael::tensor(std::vector<double>{2, -1}).to(device);
            kael::sum(kael::cross_entropy(x, targets, kael::Reduction::None) * weight).backward();
            check_close(x.grad(),
                        {2 * minus_hot[0], 2 * minus_hot[1], 2 * minus_hot[2], -minus_hot[3],
                         -minus_hot[4], -minus_hot[5]},
                        1e-12);
        }
    }
}

BOOST_AUTO_TEST_CASE(gradients_match_finite_differences) {
    const Tensor weight = leaf({2, 3, 4}, 5).detach();
    for (const std::int64_t dim : {0, 1, -1}) {
        BOOST_TEST_CONTEXT("dim " << dim) {
            BOOST_TEST(
                gradcheck([&](const Inputs& in) { return kael::softmax(in[0], dim) * weight; },
                          {leaf({2, 3, 4})}));
            BOOST_TEST(
                gradcheck([&](const Inputs& in) { return kael::log_softmax(in[0], dim) * weight; },
                          {leaf({2, 3, 4})}));
            // Through a transposed input, so the node's contiguous copy is differentiated too.
            BOOST_TEST(gradcheck(
                [&](const Inputs& in) {
                    return kael::log_softmax(in[0].permute({2, 0, 1}), dim) *
                           weight.permute({2, 0, 1});
                },
                {leaf({2, 3, 4})}));
        }
    }
    const Tensor targets = kael::tensor(std::vector<std::int64_t>{3, 0, 1});
    const Tensor row_weight = kael::tensor(std::vector<double>{1, -2, 0.5});
    BOOST_TEST(gradcheck(
        [&](const Inputs& in) {
            return kael::cross_entropy(in[0], targets, kael::Reduction::None) * row_weight;
        },
        {leaf({3, 4})}));
    for (const kael::Reduction reduction : {kael::Reduction::Sum, kael::Reduction::Mean}) {
        BOOST_TEST(gradcheck(
            [&](const Inputs& in) { return kael::cross_entropy(in[0].T(), targets, reduction); },
            {leaf({4, 3})}));
    }
}

BOOST_AUTO_TEST_CASE(dtypes_shapes_and_empty_inputs_keep_their_rules) {
    BOOST_TEST((kael::softmax(kael::arange(0, 3, 1, DType::I64), 0).dtype() == DType::F32));
    check_close(kael::softmax(kael::full({}, 5.0, DType::F64), 0), {1});
    check_close(kael::log_softmax(kael::full({}, 5.0, DType::F64), -1), {0});
    BOOST_TEST((kael::softmax(kael::zeros({2, 0, 3}), 1).shape() == Shape{2, 0, 3}));
    BOOST_TEST((kael::log_softmax(kael::zeros({0, 4}), 1).shape() == Shape{0, 4}));
    const Tensor none = kael::cross_entropy(kael::zeros({0, 3}), kael::zeros({0}, DType::I64),
                                            kael::Reduction::None);
    BOOST_TEST((none.shape() == Shape{0}));
    BOOST_TEST(std::isnan(
        kael::cross_entropy(kael::zeros({0, 3}), kael::zeros({0}, DType::I64)).item<float>()));
    // The output is saved for the backward: writing it in place afterwards is caught.
    const Tensor x = leaf({2, 3});
    Tensor y = kael::softmax(x, 1);
    kael::add_(y, kael::full({}, 1.0, DType::F64));
    BOOST_CHECK_THROW(kael::sum(y).backward(), kael::Error);
}
