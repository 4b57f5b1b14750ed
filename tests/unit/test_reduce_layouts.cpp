// Reductions over dims of transposed and permuted inputs read them where they lie: the results
// equal those of a contiguous copy, and the only allocation is the output's.
#define BOOST_TEST_MODULE reduce_layouts
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kael/allocator.h"
#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/random.h"
#include "kael/registry.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;

namespace {

std::vector<kael::Device> devices() {
    std::vector<kael::Device> all = {kael::kCPU};
    if (kael::is_available(kael::Device("cuda"))) {
        all.emplace_back("cuda:0");
    }
    BOOST_TEST_MESSAGE("reduce layouts on " << all.size() << " device(s)");
    return all;
}

// Small integers in f64 with ties: every order of summation gives the same exact result.
Tensor integer_values(const Shape& shape, const kael::Device& device) {
    std::int64_t count = 1;
    for (const std::int64_t size : shape) {
        count *= size;
    }
    const Tensor steps = kael::arange_int(0, count, 1, DType::I64, device);
    return kael::abs(kael::sin(steps.to(DType::F64)) * 9.0)
        .to(DType::I64)
        .to(DType::F64)
        .view(shape);
}

void check_equal(const Tensor& actual, const Tensor& expected, const std::string& what) {
    BOOST_TEST_CONTEXT(what) {
        BOOST_TEST((actual.shape() == expected.shape()));
        BOOST_TEST(actual.is_contiguous());
        const Tensor a = actual.to(DType::F64).cpu();
        const Tensor e = expected.to(DType::F64).cpu();
        BOOST_TEST((a.to_vector<double>() == e.to_vector<double>()));
    }
}

std::int64_t allocations(const kael::Device& device) {
    const kael::AllocatorStats stats = kael::allocator_stats(device);
    return stats.hits + stats.misses;
}

using DimFn = std::function<Tensor(const Tensor&, std::int64_t, bool)>;

const std::vector<std::pair<std::string, DimFn>>& dim_ops() {
    static const std::vector<std::pair<std::string, DimFn>> ops = {
        {"sum", [](const Tensor& t, std::int64_t d, bool k) { return kael::sum(t, d, k); }},
        {"prod", [](const Tensor& t, std::int64_t d, bool k) { return kael::prod(t, d, k); }},
        {"max", [](const Tensor& t, std::int64_t d, bool k) { return kael::max(t, d, k); }},
        {"min", [](const Tensor& t, std::int64_t d, bool k) { return kael::min(t, d, k); }},
        {"argmax", [](const Tensor& t, std::int64_t d, bool k) { return kael::argmax(t, d, k); }},
        {"argmin", [](const Tensor& t, std::int64_t d, bool k) { return kael::argmin(t, d, k); }},
    };
    return ops;
}

}  // namespace

BOOST_AUTO_TEST_CASE(permuted_inputs_reduce_like_their_contiguous_copies) {
    for (const kael::Device& device : devices()) {
        const Tensor base = integer_values({4, 5, 6}, device);
        const std::vector<std::pair<std::string, Tensor>> views = {
            {"transposed", base.transpose(0, 2)},
            {"permuted", base.permute({1, 2, 0})},
            {"permuted_back", base.permute({2, 0, 1})},
            {"offset_permuted",
             integer_values({2, 4, 5, 6}, device).select(0, 1).permute({2, 0, 1})},
        };
        for (const auto& [view_name, view] : views) {
            const Tensor copy = view.contiguous();
            for (const auto& [op_name, op] : dim_ops()) {
                for (std::int64_t d = -1; d < 3; ++d) {
                    for (const bool keepdim : {false, true}) {
                        check_equal(op(view, d, keepdim), op(copy, d, keepdim),
                                    op_name + " over dim " + std::to_string(d) + " of " +
                                        view_name + " on " + device.str());
                    }
                }
            }
            for (const Shape& dims : {Shape{0, 1}, Shape{0, 2}, Shape{2, 1}, Shape{0, 1, 2}}) {
                for (const bool keepdim : {false, true}) {
                    check_equal(kael::sum(view, dims, keepdim), kael::sum(copy, dims, keepdim),
                                "sum over " + kael::to_string(dims) + " of " + view_name);
                }
            }
            check_equal(kael::argmax(view), kael::argmax(copy), "argmax of all of " + view_name);
            check_equal(kael::sum(view), kael::sum(copy), "sum of all of " + view_name);
        }
    }
}

BOOST_AUTO_TEST_CASE(reductions_of_a_transpose_allocate_only_their_output) {
    if (!kael::caching_allocator_enabled()) {
        return;  // the statistics count cached allocations only
    }
    for (const kael::Device& device : devices()) {
        const Tensor input = kael::randn({64, 96}, DType::F32, device).T();  // {96, 64}
        const Tensor cube = kael::randn({8, 16, 32}, DType::F32, device).permute({2, 0, 1});
        for (const auto& [op_name, op] : dim_ops()) {
            for (const std::int64_t d : {0, 1}) {
                const std::int64_t before = allocations(device);
                const Tensor out = op(input, d, false);
                BOOST_TEST(allocations(device) - before == 1,
                           op_name << " over dim " << d << " of a transpose on " << device.str());
            }
            // {32, 8, 16} with strides {1, 512, 32}: the kept dims stay in logical order.
            const std::int64_t before = allocations(device);
            const Tensor out = op(cube, 0, true);
            BOOST_TEST(allocations(device) - before == 1, op_name << " over a permuted dim");
        }
        const Tensor reference = cube.contiguous();
        std::int64_t before = allocations(device);
        const Tensor one_run = kael::sum(cube, {0, 2}, false);  // adjacent in memory: one pass
        BOOST_TEST(allocations(device) - before == 1);
        before = allocations(device);
        const Tensor two_runs = kael::sum(cube, {0, 1}, false);  // apart: one pass each
        BOOST_TEST(allocations(device) - before == 2);
        BOOST_TEST(kael::allclose(one_run.cpu(), kael::sum(reference, {0, 2}, false).cpu()));
        BOOST_TEST(kael::allclose(two_runs.cpu(), kael::sum(reference, {0, 1}, false).cpu()));
        // bf16 over runs apart: f32 partials, then a last pass that rounds them as it stores
        // (ABI 1.20's LAST_PASS, which the cpu plugin has): no f32 twin of the result.
        const Tensor low =
            kael::randn({8, 16, 32}, DType::F32, device).to(DType::BF16).permute({2, 0, 1});
        before = allocations(device);
        const Tensor rounded = kael::sum(low, {0, 1}, false);
        if (device == kael::kCPU) {
            BOOST_TEST(allocations(device) - before == 2);
        }
        BOOST_TEST((rounded.dtype() == DType::BF16));
        const Tensor wide = kael::sum(low.to(DType::F32), {0, 1}, false).to(DType::BF16);
        BOOST_TEST(kael::allclose(rounded.to(DType::F32).cpu(), wide.to(DType::F32).cpu(), 1e-2));
    }
}

BOOST_AUTO_TEST_CASE(reductions_keep_nan_and_first_occurrence_rules_on_transposes) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const kael::Device& device : devices()) {
        // Columns of the transpose: {1, 3, 3}, {nan, 2, nan}, {0, 0, -1}.
        const Tensor base = kael::tensor(std::vector<double>{1, 3, 3, nan, 2, nan, 0, 0, -1}, {3, 3},
                                         device);
        const Tensor columns = base.T();
        const auto values = [](const Tensor& t) { return t.cpu().to_vector<std::int64_t>(); };
        BOOST_TEST((values(kael::argmax(columns, 0)) == std::vector<std::int64_t>{1, 0, 0}));
        BOOST_TEST((values(kael::argmin(columns, 0)) == std::vector<std::int64_t>{0, 0, 2}));
        const std::vector<double> maxima = kael::max(columns, 0).cpu().to_vector<double>();
        BOOST_TEST(maxima[0] == 3.0);
        BOOST_TEST(std::isnan(maxima[1]));
        BOOST_TEST(maxima[2] == 0.0);
    }
}

BOOST_AUTO_TEST_CASE(reductions_over_permuted_inputs_match_finite_differences) {
    using Inputs = std::vector<Tensor>;
    kael::manual_seed(5);
    const Tensor x = kael::randn({3, 4, 5}, DType::F64).set_requires_grad(true);
    const auto permuted = [](const Tensor& t) { return t.permute({2, 0, 1}); };  // {5, 3, 4}
    for (const bool keepdim : {false, true}) {
        for (const Shape& dims : {Shape{0, 2}, Shape{1, 0}, Shape{0, 1, 2}}) {
            BOOST_TEST(kael::autograd::gradcheck(
                [&](const Inputs& in) {
                    return kael::sum(kael::square(kael::sum(permuted(in[0]), dims, keepdim)));
                },
                {x}));
            BOOST_TEST(kael::autograd::gradcheck(
                [&](const Inputs& in) {
                    return kael::sum(kael::square(kael::mean(permuted(in[0]), dims, keepdim)));
                },
                {x}));
        }
        BOOST_TEST(kael::autograd::gradcheck(
            [&](const Inputs& in) {
                return kael::sum(kael::square(kael::max(permuted(in[0]), 1, keepdim)));
            },
            {x}));
        BOOST_TEST(kael::autograd::gradcheck(
            [&](const Inputs& in) { return kael::sum(kael::var(permuted(in[0]), 0, 1, keepdim)); },
            {x}));
    }
}

BOOST_AUTO_TEST_CASE(float32_var_is_zero_for_constant_rows_and_precise_under_an_offset) {
    for (const kael::Device& device : devices()) {
        const Tensor constant = kael::full({3, 7}, 0.1, DType::F32, device);
        for (const float value : kael::var(constant, 1).cpu().to_vector<float>()) {
            BOOST_TEST(value == 0.0F);
        }
        for (const float value : kael::stddev(constant.T(), 0).cpu().to_vector<float>()) {
            BOOST_TEST(value == 0.0F);
        }
        kael::manual_seed(9);
        const Tensor offset = kael::randn({4, 1000}, DType::F32, device) * 0.01 + 1000.0;
        const std::vector<float> narrow = kael::var(offset, 1).cpu().to_vector<float>();
        const std::vector<double> wide = kael::var(offset.to(DType::F64), 1).cpu().to_vector<double>();
        for (std::size_t row = 0; row < wide.size(); ++row) {
            BOOST_TEST(narrow[row] == wide[row], boost::test_tools::tolerance(1e-4));
        }
    }
}
