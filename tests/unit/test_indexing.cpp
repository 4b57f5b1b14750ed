// Advanced indexing (kael::index, kael::index_put_) and the negative-index rule of the index ops,
// on every device kael lists (cpu and, without a GPU, the emulated cuda:0).
#define BOOST_TEST_MODULE indexing
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <string>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::Device;
using kael::DType;
using kael::Shape;
using kael::Tensor;
namespace tt = boost::test_tools;

namespace {

using I64s = std::vector<std::int64_t>;

Tensor iota(const Shape& shape, const Device& device, DType dtype = DType::F64) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    return kael::arange(0, static_cast<double>(count), 1, dtype, device).view(shape);
}
Tensor ints(const I64s& values, const Device& device, Shape shape = {}) {
    return kael::tensor(values, std::move(shape), device);
}
Tensor bools(const std::vector<bool>& values, const Device& device, Shape shape = {}) {
    return kael::tensor_bool(values, std::move(shape), device);
}
std::vector<double> v(const Tensor& t) {
    return t.to_vector<double>();
}

std::vector<Device> every_device() {
    std::vector<Device> devices;
    for (const kael::DeviceInfo& info : kael::devices()) devices.push_back(info.device);
    return devices;
}

// An exception of type E whose message contains text, thrown by body or, for a check a device
// runs asynchronously (the emulated cuda:0 defers index checks as a GPU does), by the next
// synchronisation of the devices.
template <typename E>
bool throws_with(const std::function<void()>& body, const std::string& text) {
    try {
        body();
        for (const Device& device : every_device()) kael::synchronize(device);
    } catch (const E& error) {
        const bool found = std::string(error.what()).find(text) != std::string::npos;
        if (!found) BOOST_TEST_MESSAGE("message was: " << error.what());
        return found;
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(several_index_tensors_select_pointwise) {
    for (const Device& device : every_device()) {
        BOOST_TEST_MESSAGE("on " << device.str());
        const Tensor d = iota({4, 5}, device);
        const I64s rows{0, 3, 1, 3};
        const I64s cols{4, 0, 2, 2};
        const Tensor picked = kael::index(d, {ints(rows, device), ints(cols, device)});
        BOOST_TEST((picked.shape() == Shape{4}));
        BOOST_TEST((picked.device() == device));
        std::vector<double> expected;
        for (std::size_t i = 0; i < rows.size(); ++i)
            expected.push_back(double(rows[i] * 5 + cols[i]));
        BOOST_TEST(v(picked) == expected, tt::per_element());
        // Index tensors broadcast together: [2, 1] with [3] gives [2, 3].
        const Tensor grid = kael::index(d, {ints({1, 2}, device, {2, 1}), ints({0, 4, 1}, device)});
        BOOST_TEST((grid.shape() == Shape{2, 3}));
        BOOST_TEST(v(grid) == (std::vector<double>{5, 9, 6, 10, 14, 11}), tt::per_element());
        // Negative indices wrap; indices may stay on cpu for a tensor on another device.
        BOOST_TEST(v(kael::index(d, {ints({-1, -4}, kael::kCPU), ints({-5, 1}, device)})) ==
                       (std::vector<double>{15, 1}),
                   tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(advanced_dimensions_stay_in_place_when_adjacent_and_go_first_otherwise) {
    for (const Device& device : every_device()) {
        const Tensor x = iota({2, 3, 4, 5}, device);
        const Tensor i = ints({0, 2}, device);
        const Tensor j = ints({1, 3}, device);
        const Tensor adjacent = kael::index(x, {Tensor(), i, j});
        BOOST_TEST((adjacent.shape() == Shape{2, 2, 5}));
        const Tensor separated = kael::index(x, {ints({1, 0}, device), Tensor(), j});
        BOOST_TEST((separated.shape() == Shape{2, 3, 5}));
        const I64s first{0, 2};
        const I64s third{1, 3};
        const auto element = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
            return double(((a * 3 + b) * 4 + c) * 5 + d);
        };
        std::vector<double> want_adjacent;
        std::vector<double> want_separated;
        for (std::size_t b = 0; b < 2; ++b) {
            for (std::int64_t m = 0; m < 3; ++m) {
                for (std::int64_t k = 0; k < 5; ++k) {
                    want_separated.push_back(element(1 - std::int64_t(b), m, third[b], k));
                }
            }
        }
        for (std::int64_t a = 0; a < 2; ++a) {
            for (std::size_t b = 0; b < 2; ++b) {
                for (std::int64_t k = 0; k < 5; ++k) {
                    want_adjacent.push_back(element(a, first[b], third[b], k));
                }
            }
        }
        BOOST_TEST(v(adjacent) == want_adjacent, tt::per_element());
        BOOST_TEST(v(separated) == want_separated, tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(bool_masks_of_any_leading_shape_stand_for_their_true_positions) {
    for (const Device& device : every_device()) {
        const Tensor x = iota({2, 3, 4}, device);
        const std::vector<bool> flags{true, false, true, false, false, true};
        const Tensor rows = kael::index(x, {bools(flags, device, {2, 3})});
        BOOST_TEST((rows.shape() == Shape{3, 4}));
        std::vector<double> expected;
        for (std::int64_t p = 0; p < 6; ++p) {
            for (std::int64_t k = 0; flags[std::size_t(p)] && k < 4; ++k)
                expected.push_back(double(p * 4 + k));
        }
        BOOST_TEST(v(rows) == expected, tt::per_element());
        // A mask over dimension 1 only, after a full slice of dimension 0.
        const Tensor middle = kael::index(x, {Tensor(), bools({false, true, true}, device)});
        BOOST_TEST((middle.shape() == Shape{2, 2, 4}));
        BOOST_TEST(v(middle.select(0, 1).select(0, 0)) == v(x.select(0, 1).select(0, 1)),
                   tt::per_element());
        // A 0-d mask adds a dimension of size 1 (true) or 0 (false).
        BOOST_TEST(
            (kael::index(x, {bools({true}, device).reshape({})}).shape() == Shape{1, 2, 3, 4}));
        BOOST_TEST(
            (kael::index(x, {bools({false}, device).reshape({})}).shape() == Shape{0, 2, 3, 4}));
        const Tensor none = kael::index(x, {bools(std::vector<bool>(6, false), device, {2, 3})});
        BOOST_TEST((none.shape() == Shape{0, 4}));
    }
}

BOOST_AUTO_TEST_CASE(bad_indices_are_index_errors) {
    const Tensor x = iota({3, 4}, kael::kCPU);
    BOOST_TEST(throws_with<kael::IndexError>(
        [&] { (void)kael::index(x, {ints({3}, kael::kCPU)}); },
        "index: index 3 is out of bounds for dimension 0 with size 3"));
    BOOST_TEST(throws_with<kael::IndexError>(
        [&] {
            (void)kael::index(x, {Tensor(), ints({-5}, kael::kCPU)});
        },
        "index -5 is out of bounds for dimension 1 with size 4"));
    BOOST_TEST(throws_with<kael::IndexError>(
        [&] {
            (void)kael::index(x, {ints({0, 1}, kael::kCPU), ints({0, 1, 2}, kael::kCPU)});
        },
        "could not be broadcast together with shapes [2], [3]"));
    BOOST_TEST(throws_with<kael::IndexError>(
        [&] {
            (void)kael::index(x, {Tensor(), Tensor(), ints({0}, kael::kCPU)});
        },
        "too many indices"));
    BOOST_TEST(throws_with<kael::IndexError>([&] { (void)kael::index(x, {kael::zeros({2})}); },
                                             "must be i64, i32, u8 or bool"));
    BOOST_TEST(throws_with<kael::IndexError>(
        [&] {
            (void)kael::index(x, {bools({true, false}, kael::kCPU)});
        },
        "the shape of the mask [2] at index 0 does not match"));
    Tensor target = x.clone();
    BOOST_TEST(throws_with<kael::ValueError>(
        [&] {
            kael::index_put_(target, {ints({0, 1}, kael::kCPU)}, kael::ones({3}));
        },
        "value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]"));
    BOOST_TEST(kael::allclose(target, x));
    // An expanded target has elements sharing memory: writing through it is refused.
    Tensor expanded = kael::zeros({1}, DType::F64).expand({4});
    BOOST_TEST(throws_with<kael::ValueError>(
        [&] { kael::index_put_(expanded, {ints({0}, kael::kCPU)}, kael::ones({})); },
        "index_put_"));
    BOOST_TEST(throws_with<kael::ValueError>(
        [&] {
            kael::scatter_add_(expanded, 0, ints({0}, kael::kCPU), kael::ones({1}, DType::F64));
        },
        "scatter_add_"));
    BOOST_TEST(expanded.to_vector<double>() == std::vector<double>(4, 0.0), tt::per_element());
}

BOOST_AUTO_TEST_CASE(index_put_writes_broadcast_values_in_place) {
    for (const Device& device : every_device()) {
        BOOST_TEST_MESSAGE("on " << device.str());
        Tensor a = iota({3, 4}, device);
        // A 0-d value may live on the host, as a Python number does.
        kael::index_put_(a, {ints({2, 0}, device), ints({1, -1}, device)},
                         kael::scalar_tensor(-7, DType::F64));
        std::vector<double> expected = v(iota({3, 4}, kael::kCPU));
        expected[2 * 4 + 1] = -7;
        expected[0 * 4 + 3] = -7;
        BOOST_TEST(v(a) == expected, tt::per_element());
        // Rows picked by a mask take a broadcast row; the view writes through to its base.
        Tensor base = iota({4, 3}, device);
        Tensor column_view = base.T();  // not contiguous
        kael::index_put_(column_view, {Tensor(), bools({true, false, false, true}, device)},
                         kael::tensor(std::vector<double>{10, 20, 30}, {3, 1}, device));
        expected = v(iota({4, 3}, kael::kCPU));
        for (std::int64_t c = 0; c < 3; ++c) {
            expected[std::size_t(0 * 3 + c)] = double(10 * (c + 1));
            expected[std::size_t(3 * 3 + c)] = double(10 * (c + 1));
        }
        BOOST_TEST(v(base) == expected, tt::per_element());
        // Repeated positions: accumulate adds every value, otherwise one of them is written.
        Tensor counts = kael::zeros({3}, DType::I64, device);
        kael::index_put_(counts, {ints({1, 1, 2, 1}, device)}, ints({1, 2, 3, 4}, device), true);
        BOOST_TEST(counts.to_vector<std::int64_t>() == (I64s{0, 7, 3}), tt::per_element());
        Tensor once = kael::zeros({3}, DType::I64, device);
        kael::index_put_(once, {ints({1, 1, 2, 1}, device)}, ints({1, 2, 3, 4}, device));
        const I64s got = once.to_vector<std::int64_t>();
        BOOST_TEST(got[0] == 0);
        BOOST_TEST((got[1] == 1 || got[1] == 2 || got[1] == 4));
        BOOST_TEST(got[2] == 3);
        // -0.0, infinities and NaN are written as they are, and bool tensors take masks.
        Tensor signs = kael::full({2}, 5.0, DType::F64, device);
        kael::index_put_(signs, {ints({0}, device)}, kael::scalar_tensor(-0.0, DType::F64, device));
        BOOST_TEST(std::signbit(signs.to_vector<double>()[0]));
        Tensor flags = kael::zeros({2, 2}, DType::Bool, device);
        kael::index_put_(flags, {bools({false, true}, device)}, bools({true}, device).reshape({}));
        BOOST_TEST(flags.to_vector<bool>() == (std::vector<bool>{false, false, true, true}),
                   tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(gradients_flow_through_index_and_index_put) {
    const auto leaf = [](const Shape& shape) {
        return (kael::randn(shape, DType::F64) * 1.0).detach().set_requires_grad(true);
    };
    const Tensor rows = kael::tensor(I64s{2, 0, 2});
    const Tensor cols = kael::tensor(I64s{1, 1, -1});
    using Inputs = std::vector<Tensor>;
    BOOST_TEST(kael::autograd::gradcheck(
        [&](const Inputs& in) {
            return kael::index(in[0], {rows, cols});
        },
        {leaf({3, 4})}));
    BOOST_TEST(kael::autograd::gradcheck(
        [&](const Inputs& in) {
            return kael::index(in[0].T(), {Tensor(), rows});
        },
        {leaf({4, 3})}));
    for (const bool accumulate : {false, true}) {
        BOOST_TEST(kael::autograd::gradcheck(
            [&](const Inputs& in) {
                Tensor data = in[0] * 2.0;
                kael::index_put_(data, {rows.slice(0, 0, 2), cols.slice(0, 0, 2)}, in[1],
                                 accumulate);
                return data * data;
            },
            {leaf({3, 4}), leaf({2})}));
    }
}

// PyTorch's rule: gather, scatter_add_, index_select, embedding and cross_entropy do not wrap
// negative indices, and the message names the op the user called.
BOOST_AUTO_TEST_CASE(index_ops_refuse_negative_indices_and_name_themselves) {
    for (const Device& device : every_device()) {
        const Tensor data = iota({2, 3}, device);
        const Tensor negative = ints({0, -1}, device, {1, 2});
        BOOST_TEST(throws_with<kael::IndexError>([&] { (void)kael::gather(data, 1, negative); },
                                                 "gather: index -1 is out of bounds"));
        Tensor target = kael::zeros({2, 3}, DType::F64, device);
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] {
                kael::scatter_add_(target, 1, negative, kael::ones({1, 2}, DType::F64, device));
            },
            "scatter_add_: index -1 is out of bounds"));
        if (device == kael::kCPU) {  // checked before the kernel; a device may write the rest
            BOOST_TEST(v(target) == std::vector<double>(6, 0.0), tt::per_element());
        }
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] { (void)kael::index_select(data, 1, ints({-1}, device)); },
            "index_select: index -1 is out of bounds"));
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] { (void)kael::index_select(data, 0, ints({2}, device)); },
            "index_select: index 2 is out of bounds"));
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] {
                (void)kael::embedding(data, ints({1, -1}, device));
            },
            "embedding: index -1"));
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] { (void)kael::embedding(data, ints({2}, device)); }, "embedding: index 2"));
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] {
                (void)kael::cross_entropy(data, ints({0, 3}, device));
            },
            "cross_entropy: target 3"));
        BOOST_TEST(throws_with<kael::IndexError>(
            [&] {
                (void)kael::cross_entropy(data, ints({-100, 0}, device));
            },
            "cross_entropy: target -100"));
    }
}
