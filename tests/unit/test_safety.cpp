// Issue 9 regressions in the core: inputs that crashed or gave silently wrong answers now give
// typed errors or the right answer, on every device the registry lists.
#define BOOST_TEST_MODULE safety
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include "kael/ops.h"
#include "kael/registry.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;

namespace {

std::vector<kael::Device> every_device() {
    std::vector<kael::Device> result;
    for (const kael::DeviceInfo& info : kael::devices()) {
        result.push_back(info.device);
    }
    return result;
}

Tensor iota(std::int64_t count, const kael::Device& device = kael::kCPU) {
    return kael::arange(0, static_cast<double>(count), 1, DType::F32, device);
}

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

// Runs statement, expecting Exception whose message contains text.
template <typename Exception, typename Statement>
void expect_error(Statement statement, const std::string& text) {
    try {
        statement();
        BOOST_ERROR("expected an error containing '" << text << "'");
    } catch (const Exception& error) {
        BOOST_TEST(std::string(error.what()).find(text) != std::string::npos,
                   "message '" << error.what() << "' lacks '" << text << "'");
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(as_strided_checks_every_element) {
    const Tensor a = iota(4);
    expect_error<kael::ValueError>([&] { (void)a.as_strided({100000}, {-100}, 0); }, "negative");
    expect_error<kael::ValueError>([&] { (void)a.as_strided({2, 2}, {100000, -100000}, 0); },
                                   "negative");
    expect_error<kael::ValueError>([&] { (void)a.as_strided({3}, {-1}, 0); }, "negative");
    expect_error<kael::ValueError>([&] { (void)a.as_strided({1000}, {1}, -2000); }, "offset");
    expect_error<kael::IndexError>([&] { (void)a.as_strided({1000}, {1}, 0); }, "outside");
    expect_error<kael::IndexError>([&] { (void)a.as_strided({2}, {(1LL << 62) - 1000000}, 0); },
                                   "outside");
    expect_error<kael::ValueError>([&] { (void)a.as_strided({3, 3}, {1LL << 62, 1LL << 62}, 0); },
                                   "overflow");
    expect_error<kael::ValueError>([&] { (void)a.as_strided({-2}, {1}, 0); }, "negative size");
    expect_error<kael::IndexError>([&] { (void)a.as_strided({2, 2}, {1, 2}, 1); }, "outside");
    BOOST_TEST(values(a.as_strided({2, 2}, {1, 1}, 1)) == (std::vector<float>{1, 2, 2, 3}),
               boost::test_tools::per_element());
    BOOST_TEST(a.as_strided({0, 5}, {1000, 1000}, 0).numel() == 0);
}

BOOST_AUTO_TEST_CASE(a_zero_d_tensor_has_no_dimension_to_index) {
    const Tensor scalar = kael::scalar_tensor(1, DType::F32);
    expect_error<kael::IndexError>([&] { (void)scalar.size(0); }, "0-d");
    expect_error<kael::IndexError>([&] { (void)scalar.select(0, 0); }, "0-d");
    expect_error<kael::IndexError>([&] { (void)scalar.select(-1, 0); }, "0-d");
    expect_error<kael::IndexError>([&] { (void)scalar.slice(0, 0, 1, 1); }, "0-d");
    // Reductions and transposes accept dim 0 of a 0-d tensor, as in PyTorch.
    BOOST_TEST(kael::sum(scalar, 0).item<float>() == 1.0F);
    BOOST_TEST(scalar.transpose(0, -1).dim() == 0);
}

BOOST_AUTO_TEST_CASE(ranks_above_the_limit_are_refused) {
    const Tensor one = kael::ones({1});
    expect_error<kael::ValueError>([&] { (void)one.view(Shape(100000, 1)); }, "limit of 64");
    expect_error<kael::ValueError>([&] { (void)kael::empty(Shape(65, 1)); }, "limit of 64");
    Tensor deep = one.view(Shape(64, 1));
    expect_error<kael::ValueError>([&] { (void)deep.unsqueeze(0); }, "limit of 64");
    BOOST_TEST(kael::sum(deep).item<float>() == 1.0F);
}

BOOST_AUTO_TEST_CASE(integer_aranges_are_exact) {
    const std::int64_t big = 1LL << 60;
    BOOST_TEST(kael::arange_int(big, big + 3).to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{big, big + 1, big + 2}),
               boost::test_tools::per_element());
    const std::int64_t two53 = 1LL << 53;
    BOOST_TEST(kael::arange_int(two53, two53 + 3).to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{two53, two53 + 1, two53 + 2}),
               boost::test_tools::per_element());
    BOOST_TEST(kael::arange_int(5, -4, -3).to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{5, 2, -1}),
               boost::test_tools::per_element());
    BOOST_TEST(kael::arange_int(INT64_MAX - 2, INT64_MAX).numel() == 2);
    BOOST_TEST(kael::arange_int(3, 0).numel() == 0);
    expect_error<kael::ValueError>([] { (void)kael::arange_int(0, 1LL << 62); }, "arange");
    expect_error<kael::ValueError>([] { (void)kael::arange_int(INT64_MIN, INT64_MAX); },
                                   "arange");
    expect_error<kael::ValueError>([] { (void)kael::arange_int(0, 1, 0); }, "arange");
    expect_error<kael::ValueError>([] { (void)kael::arange(0, INFINITY); }, "arange");
    expect_error<kael::ValueError>([] { (void)kael::arange(0, 1, 1e-300); }, "arange");
    expect_error<kael::ValueError>([] { (void)kael::arange(0, NAN); }, "arange");
    expect_error<kael::Error>([] { (void)kael::arange(0, 0x1p61); }, "arange");
}

BOOST_AUTO_TEST_CASE(repeated_reduction_dims_are_an_error) {
    const Tensor x = kael::ones({2, 3});
    expect_error<kael::ValueError>([&] { (void)kael::sum(x, Shape{0, 0}); }, "multiple times");
    expect_error<kael::ValueError>([&] { (void)kael::mean(x, Shape{1, -1}); }, "[2, 3]");
    expect_error<kael::IndexError>([&] { (void)kael::sum(x, Shape{0, 2}); }, "[2, 3]");
    BOOST_TEST(kael::sum(x, Shape{0, 1}).item<float>() == 6.0F);
    BOOST_TEST(kael::sum(x, Shape{-1, 0}, true).shape() == (Shape{1, 1}),
               boost::test_tools::per_element());
    BOOST_TEST(kael::mean(x, Shape{}).item<float>() == 1.0F);
}

BOOST_AUTO_TEST_CASE(overlapping_writes_agree_on_every_device) {
    for (const kael::Device& device : every_device()) {
        BOOST_TEST_MESSAGE("device " << device.str());
        Tensor a = iota(6, device);
        a.slice(0, 1, 6).copy_(a.slice(0, 0, 5));
        BOOST_TEST(values(a) == (std::vector<float>{0, 0, 1, 2, 3, 4}),
                   boost::test_tools::per_element());
        Tensor b = iota(6, device);
        b.slice(0, 0, 5).copy_(b.slice(0, 1, 6));
        BOOST_TEST(values(b) == (std::vector<float>{1, 2, 3, 4, 5, 5}),
                   boost::test_tools::per_element());
        // a += a.T reads the old values of elements it has already written.
        Tensor m = iota(4, device).view({2, 2});
        kael::add_(m, m.T());
        BOOST_TEST(values(m) == (std::vector<float>{0, 3, 3, 6}), boost::test_tools::per_element());
        // Same elements in place is fine and needs no copy.
        Tensor c = iota(3, device);
        kael::mul_(c, c);
        BOOST_TEST(values(c) == (std::vector<float>{0, 1, 4}), boost::test_tools::per_element());
        Tensor expanded = kael::zeros({1}, DType::F32, device).expand({4});
        const Tensor four = kael::tensor(std::vector<float>{1, 2, 3, 4}, {}, device);
        expect_error<kael::ValueError>([&] { kael::add_(expanded, four, "+="); },
                                       "+=: unsupported operation");
        expect_error<kael::ValueError>([&] { expanded.fill_(1.0); }, "fill_");
        expect_error<kael::ValueError>([&] { expanded.copy_(four); }, "copy_");
    }
}

BOOST_AUTO_TEST_CASE(in_place_integer_division_and_negative_powers_are_errors) {
    for (const kael::Device& device : every_device()) {
        Tensor a = kael::tensor(std::vector<std::int64_t>{5}, {}, device);
        expect_error<kael::TypeError>([&] { kael::div_(a, kael::full_int({}, 2, DType::I64, device)); },
                                      "can't be cast");
        BOOST_TEST(a.item<std::int64_t>() == 5);
        expect_error<kael::TypeError>(
            [&] { kael::add_(a, kael::scalar_tensor(1.5, DType::F32, device), "+="); },
            "+=: result type f32");
        kael::add_(a, kael::full_int({}, 2, DType::I64, device));
        BOOST_TEST(a.item<std::int64_t>() == 7);
        const Tensor zero = kael::tensor(std::vector<std::int64_t>{0}, {}, device);
        expect_error<kael::ValueError>(
            [&] { (void)kael::pow(zero, kael::full_int({}, -1, DType::I64, device)); },
            "negative integer powers");
        BOOST_TEST(kael::pow(kael::full_int({}, 3, DType::I64, device),
                             kael::full_int({}, 2, DType::I64, device))
                       .item<std::int64_t>() == 9);
    }
}

BOOST_AUTO_TEST_CASE(allclose_follows_pytorch) {
    const Tensor nan = kael::scalar_tensor(NAN, DType::F32);
    BOOST_TEST(!kael::allclose(nan, nan));
    BOOST_TEST(kael::allclose(nan, nan, 1e-5, 1e-8, true));
    BOOST_TEST(kael::allclose(kael::ones({2, 3}), kael::ones({3})));  // broadcast
    expect_error<kael::ValueError>([] { (void)kael::allclose(kael::ones({2}), kael::ones({3})); },
                                   "allclose");
    expect_error<kael::TypeError>(
        [] { (void)kael::allclose(kael::ones({2}), kael::ones({2}, DType::F64)); }, "allclose");
    BOOST_TEST(!kael::allclose(kael::ones({2}), kael::zeros({2})));
}

BOOST_AUTO_TEST_CASE(move_to_moves_every_view) {
    const auto devices = every_device();
    for (const kael::Device& target : devices) {
        for (const kael::Device& source : devices) {
            if (source == target) {
                continue;
            }
            Tensor x = iota(4, source);
            const Tensor tail = x.slice(0, 2, 4);
            x.move_to_(target);
            BOOST_TEST(x.device().str() == target.str());
            BOOST_TEST(tail.device().str() == target.str());
            BOOST_TEST(values(tail) == (std::vector<float>{2, 3}), boost::test_tools::per_element());
            BOOST_TEST(values(x) == (std::vector<float>{0, 1, 2, 3}),
                       boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(more_than_eight_unmergeable_dims_still_copy) {
    for (const kael::Device& device : every_device()) {
        const Shape shape{2, 3, 2, 3, 2, 3, 2, 3, 2, 3};
        const Tensor x = iota(7776, device).view(shape);
        const Tensor p = x.permute({9, 7, 5, 3, 1, 8, 6, 4, 2, 0});
        const Tensor copy = p.contiguous();
        BOOST_TEST(copy.is_contiguous());
        // Element [i0..i9] of p is x[i9, i4, i8, i3, i7, i2, i6, i1, i5, i0].
        const std::vector<float> got = values(copy);
        const Shape& xs = x.strides();
        const Shape& ps = p.shape();
        std::size_t flat = 0;
        bool all_equal = true;
        std::vector<std::int64_t> index(10, 0);
        for (; flat < got.size(); ++flat) {
            std::int64_t rest = static_cast<std::int64_t>(flat);
            for (int d = 9; d >= 0; --d) {
                index[d] = rest % ps[d];
                rest /= ps[d];
            }
            const std::int64_t order[10] = {9, 7, 5, 3, 1, 8, 6, 4, 2, 0};
            std::int64_t source = 0;
            for (int d = 0; d < 10; ++d) {
                source += index[d] * xs[order[d]];
            }
            all_equal = all_equal && got[flat] == static_cast<float>(source);
        }
        BOOST_TEST(all_equal);
        BOOST_TEST(!p.str().empty());
        BOOST_TEST(kael::sum(p).item<float>() == kael::sum(x).item<float>());
        for (const kael::Device& other : every_device()) {
            BOOST_TEST(values(p.to(other)) == got, boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(errors_name_the_op_the_user_called) {
    const Tensor x = kael::ones({2, 3});
    expect_error<kael::IndexError>([&] { (void)kael::softmax(x, 2); }, "softmax");
    expect_error<kael::IndexError>([&] { (void)kael::log_softmax(x, -3); }, "log_softmax");
    expect_error<kael::IndexError>([&] { (void)kael::softmax(kael::ones({0, 3}), 5); }, "softmax");
    Tensor target = kael::ones({2});
    const Tensor wide_mask = kael::ones({3}).to(DType::Bool);
    expect_error<kael::ValueError>(
        [&] { kael::masked_fill_(target, wide_mask, kael::scalar_tensor(1, DType::F32)); },
        "masked_fill_");
    for (const kael::Device& device : every_device()) {
        if (device.is_cpu()) {
            continue;
        }
        const Tensor weight = kael::ones({3}, DType::F32, device);
        expect_error<kael::DeviceError>([&] { (void)kael::layer_norm(x, weight, Tensor(), 1e-5); },
                                        "layer_norm");
        expect_error<kael::DeviceError>(
            [&] { (void)kael::linear(x, kael::ones({4, 3}, DType::F32, device), Tensor()); },
            "linear");
        expect_error<kael::DeviceError>([&] { target.copy_(kael::ones({2}, DType::F32, device)); },
                                        "copy_");
    }
}
