#define BOOST_TEST_MODULE cpu_ops
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "cpu_ops_test_support.h"
#include "kael/allocator.h"
#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using kael::test::iota;
using kael::test::v;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(cpu_device_is_listed) {
    const auto devices = kael::devices();
    BOOST_REQUIRE(!devices.empty());
    BOOST_TEST(devices.front().device.str() == "cpu");
    BOOST_TEST(devices.front().plugin == "cpu");
}

// Bool reductions long enough to fold blocks on several threads: their partial states were
// once a std::vector<bool>, whose packed bits the threads overwrote (min of all-true tensors
// came out false about one call in ten). Many calls, since the race needs an unlucky timing.
BOOST_AUTO_TEST_CASE(long_bool_reductions_keep_every_block) {
    const std::int64_t n = 200003;
    const Tensor all_true = kael::ge(kael::zeros({n}), kael::zeros({n}));
    const Tensor last_true = kael::eq(kael::arange(0, double(n), 1, DType::I64),
                                      kael::full({n}, double(n - 1), DType::I64));
    for (int call = 0; call < 200; ++call) {
        BOOST_REQUIRE(kael::min(all_true).item<bool>());
        BOOST_REQUIRE(kael::max(last_true).item<bool>());
        BOOST_REQUIRE(!kael::min(last_true).item<bool>());
    }
}

BOOST_AUTO_TEST_CASE(add_mul_with_broadcast_transpose_and_strides) {
    const Tensor a = iota({2, 3});
    const Tensor b = kael::tensor(std::vector<float>{10, 20, 30});
    BOOST_TEST(v<float>(a + b) == (std::vector<float>{10, 21, 32, 13, 24, 35}), tt::per_element());
    BOOST_TEST(v<float>(a.T() * a.T()) == (std::vector<float>{0, 9, 1, 16, 4, 25}),
               tt::per_element());
    const Tensor stepped = iota({10}).slice(0, 1, 10, 3);  // 1 4 7
    BOOST_TEST(v<float>(stepped - 1.0) == (std::vector<float>{0, 3, 6}), tt::per_element());
    BOOST_TEST(v<float>(kael::zeros({0, 3}) + b).empty());
    BOOST_CHECK_THROW((void)(a + iota({2})), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(dtypes_promote_and_integers_wrap) {
    const Tensor big = kael::full_int({1}, std::numeric_limits<std::int64_t>::max());
    BOOST_TEST(v<std::int64_t>(big + kael::full_int({1}, 1)).front() ==
               std::numeric_limits<std::int64_t>::min());
    const Tensor i = iota({3}, DType::I64);
    BOOST_TEST((((i + 1.5).dtype()) == DType::F32));
    BOOST_TEST((((i + 2.0).dtype()) == DType::I64));
    BOOST_TEST(((i + kael::ones({3}, DType::F64)).dtype() == DType::F64));
    BOOST_TEST(((i / 2.0).dtype() == DType::F32));
    const Tensor huge = kael::tensor(std::vector<double>{1e300, -1e300, std::nan("")});
    BOOST_TEST(v<std::int64_t>(huge.to(DType::I64)) ==
                   (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(),
                                              std::numeric_limits<std::int64_t>::min(), 0}),
               tt::per_element());
    BOOST_TEST(v<bool>(kael::tensor(std::vector<float>{0, 0.5f, -2}).to(DType::Bool)) ==
                   (std::vector<bool>{false, true, true}),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(integer_clamp_and_fill_keep_every_bit) {
    const std::int64_t above = (std::int64_t{1} << 53) + 1;
    const Tensor x = kael::tensor(std::vector<std::int64_t>{above + 10, 0, above});
    BOOST_TEST(v<std::int64_t>(kael::clamp_int(x, 1, above)) ==
                   (std::vector<std::int64_t>{above, 1, above}),
               tt::per_element());
    BOOST_TEST(
        v<std::int64_t>(kael::full_int({2}, above)) == (std::vector<std::int64_t>{above, above}),
        tt::per_element());
    const Tensor mask = kael::tensor_bool({true, false, true});
    BOOST_TEST(v<std::int64_t>(kael::masked_fill_int(x, mask, above)) ==
                   (std::vector<std::int64_t>{above, 0, above}),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(comparisons_and_logic_write_bool) {
    const Tensor a = kael::tensor(std::vector<float>{1, 2, std::nanf("")});
    const Tensor b = kael::tensor(std::vector<float>{1, 3, std::nanf("")});
    BOOST_TEST(v<bool>(kael::eq(a, b)) == (std::vector<bool>{true, false, false}),
               tt::per_element());
    BOOST_TEST(v<bool>(kael::ne(a, b)) == (std::vector<bool>{false, true, true}),
               tt::per_element());
    BOOST_TEST(v<bool>(kael::lt(a, b)) == (std::vector<bool>{false, true, false}),
               tt::per_element());
    BOOST_TEST((kael::ge(a, b).dtype() == DType::Bool));
    BOOST_TEST(v<bool>(kael::logical_not(kael::eq(a, b))) == (std::vector<bool>{false, true, true}),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(sums_over_all_and_over_dimensions) {
    const Tensor x = iota({3, 4});
    BOOST_TEST(kael::sum(x).item<float>() == 66.0f);
    BOOST_TEST(v<float>(kael::sum(x, 0)) == (std::vector<float>{12, 15, 18, 21}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::sum(x, -1)) == (std::vector<float>{6, 22, 38}), tt::per_element());
    BOOST_TEST(kael::sum(x, 1, true).shape() == (Shape{3, 1}), tt::per_element());
    BOOST_TEST(v<float>(kael::sum(x.T(), 1)) == (std::vector<float>{12, 15, 18, 21}),
               tt::per_element());
    BOOST_TEST(kael::sum(kael::zeros({0})).item<float>() == 0.0f);
    BOOST_TEST((kael::sum(kael::ones({4}, DType::Bool)).dtype() == DType::I64));
    BOOST_TEST(kael::sum(kael::ones({4}, DType::Bool)).item<std::int64_t>() == 4);
    BOOST_TEST(
        std::isnan(kael::max(kael::tensor(std::vector<float>{1, std::nanf(""), 3})).item<float>()));
    BOOST_TEST(v<std::int64_t>(kael::argmax(x, 1)) == (std::vector<std::int64_t>{3, 3, 3}),
               tt::per_element());
    BOOST_CHECK_THROW((void)kael::max(kael::zeros({0})), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::sum(x, 2), kael::IndexError);
    // A long row: deterministic and exact for integers.
    const Tensor ones = kael::ones({100003});
    BOOST_TEST(kael::sum(ones).item<float>() == 100003.0f);
}

BOOST_AUTO_TEST_CASE(matmul_shapes_transposes_batches_and_integers) {
    const Tensor a = iota({2, 3});
    const Tensor b = iota({3, 2});
    BOOST_TEST(v<float>(kael::matmul(a, b)) == (std::vector<float>{10, 13, 28, 40}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::matmul(b.T(), a.T())) == (std::vector<float>{10, 28, 13, 40}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::matmul(a, iota({3}))) == (std::vector<float>{5, 14}),
               tt::per_element());
    BOOST_TEST(kael::matmul(iota({3}), iota({3})).item<float>() == 5.0f);
    const Tensor batched = kael::matmul(iota({4, 2, 3}), b);
    BOOST_TEST(batched.shape() == (Shape{4, 2, 2}), tt::per_element());
    BOOST_TEST(v<float>(batched.select(0, 0)) == (std::vector<float>{10, 13, 28, 40}),
               tt::per_element());
    BOOST_TEST(v<std::int64_t>(kael::matmul(iota({2, 3}, DType::I64), iota({3, 2}, DType::I64))) ==
                   (std::vector<std::int64_t>{10, 13, 28, 40}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::matmul(kael::zeros({2, 0}), kael::zeros({0, 2}))) ==
                   (std::vector<float>{0, 0, 0, 0}),
               tt::per_element());
    BOOST_CHECK_THROW((void)kael::matmul(a, a), kael::ValueError);
    BOOST_CHECK_THROW(
        (void)kael::matmul(kael::ones({2, 2}, DType::Bool), kael::ones({2, 2}, DType::Bool)),
        kael::TypeError);
}

BOOST_AUTO_TEST_CASE(gather_scatter_and_index_checks) {
    const Tensor data = iota({2, 3});
    const Tensor index = kael::tensor(std::vector<std::int64_t>{2, 0, 1, 2}, {2, 2});
    BOOST_TEST(v<float>(kael::gather(data, 1, index)) == (std::vector<float>{2, 0, 4, 5}),
               tt::per_element());
    BOOST_TEST(
        v<float>(kael::index_select(data, 1, kael::tensor(std::vector<std::int64_t>{2, 2}))) ==
            (std::vector<float>{2, 2, 5, 5}),
        tt::per_element());
    Tensor target = kael::zeros({2, 3});
    kael::scatter_add_(target, 1, kael::tensor(std::vector<std::int64_t>{1, 1, 0, 2}, {2, 2}),
                       kael::ones({2, 2}));
    BOOST_TEST(v<float>(target) == (std::vector<float>{0, 2, 0, 1, 0, 1}), tt::per_element());
    Tensor untouched = kael::zeros({2, 3});
    BOOST_CHECK_THROW(
        kael::scatter_add_(untouched, 1, kael::tensor(std::vector<std::int64_t>{0, 3}, {2, 1}),
                           kael::ones({2, 1})),
        kael::IndexError);
    BOOST_TEST(kael::sum(untouched).item<float>() == 0.0f);
    BOOST_CHECK_THROW((void)kael::gather(data, 1, index.to(DType::F32)), kael::TypeError);
}

BOOST_AUTO_TEST_CASE(relu_and_sigmoid_follow_the_second_seed) {
    // One rule at x = 0: relu'(0) = 0 on every device.
    const Tensor x = kael::tensor(std::vector<float>{-1, 0, 11.0f / 12.0f, 2});
    BOOST_TEST(v<float>(kael::relu(x)) == (std::vector<float>{0, 0, 11.0f / 12.0f, 2}),
               tt::per_element());
    const std::vector<float> s = v<float>(kael::sigmoid(x));
    BOOST_TEST(s[0] == 0.26894143f, tt::tolerance(1e-6f));
    BOOST_TEST(s[1] == 0.5f);
    BOOST_TEST(s[2] == 0.71436244f, tt::tolerance(1e-6f));
    const Tensor grad = kael::ones({4});
    BOOST_TEST(v<float>(kael::relu_backward(x, grad)) == (std::vector<float>{0, 0, 1, 1}),
               tt::per_element());
    BOOST_TEST(v<float>(kael::sigmoid_backward(x, grad))[1] == 0.25f);
}

BOOST_AUTO_TEST_CASE(missing_devices_fail_with_a_reason) {
    if (kael::is_available(kael::Device("cuda"))) {
        return;
    }
    try {
        (void)kael::ones({2}).cuda();
        BOOST_FAIL("cuda() succeeded without a cuda device");
    } catch (const kael::DeviceError& error) {
        BOOST_TEST(std::string(error.what()).find("cuda:0 is not available") != std::string::npos);
    }
    BOOST_CHECK_THROW((void)kael::ones({2}).to(kael::Device("cpu:1")), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(freed_blocks_are_cached_and_can_be_emptied) {
    if (!kael::caching_allocator_enabled()) {
        return;  // sanitizer builds hand every block straight back
    }
    const kael::Device cpu("cpu");
    kael::empty_cache(cpu);
    { const Tensor first = kael::empty({1000, 3}); }
    const kael::AllocatorStats before = kael::allocator_stats(cpu);
    BOOST_TEST(before.cached_bytes >= 12000);
    { const Tensor second = kael::empty({3, 1000}); }
    const kael::AllocatorStats after = kael::allocator_stats(cpu);
    BOOST_TEST(after.hits == before.hits + 1);
    BOOST_TEST(after.misses == before.misses);
    kael::empty_cache(cpu);
    BOOST_TEST(kael::allocator_stats(cpu).cached_bytes == 0);
}

// The cpu plugin's persistent threads: ops large enough to split, from several threads at once
// (one holds the pool, the others run alone), give the single-threaded results every time.
BOOST_AUTO_TEST_CASE(parallel_ops_from_several_threads_agree) {
    const Tensor data = kael::arange(0, 1 << 18, 1, DType::F64).view({512, 512}) * 0.001;
    const double expected_sum = kael::sum(data).item<double>();
    const std::vector<double> expected_columns =
        kael::sum(data, std::int64_t{0}).to_vector<double>();
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20; ++i) {
                const Tensor shifted = data + static_cast<double>(t);
                mismatches[t] +=
                    kael::sum(shifted - static_cast<double>(t)).item<double>() != expected_sum;
                mismatches[t] +=
                    kael::sum(data, std::int64_t{0}).to_vector<double>() != expected_columns;
            }
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    BOOST_TEST(mismatches == std::vector<int>(4, 0), boost::test_tools::per_element());
}

// f32 sum, max and min over a leading dim take an AVX-512 / AVX2 / baseline column fold (by
// KAEL_CPU_VECTOR_ISA in the ctest variants): each matches a plain loop, NaN first, ragged
// widths (1030 columns: tiles of 512 and a remainder) included.
BOOST_AUTO_TEST_CASE(sum_max_and_min_over_dim_0_match_a_plain_loop) {
    const std::int64_t rows = 37;
    const std::int64_t columns = 1030;
    std::vector<float> values(static_cast<size_t>(rows * columns));
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<float>(static_cast<std::int64_t>(i * 7919 % 2003) - 1001) / 7.0F;
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    values[5 * columns + 3] = nan;      // column 3: NaN in the middle
    values[0 * columns + 700] = nan;    // column 700: NaN first
    values[36 * columns + 1029] = nan;  // the last column: NaN last
    values[9 * columns + 11] = inf;
    values[2 * columns + 12] = -inf;
    const Tensor x = kael::tensor(values, {rows, columns});
    const std::vector<float> largest = kael::max(x, 0).to_vector<float>();
    const std::vector<float> smallest = kael::min(x, 0).to_vector<float>();
    const std::vector<float> sums = kael::sum(x, 0).to_vector<float>();
    std::size_t wrong = 0;
    for (std::int64_t j = 0; j < columns; ++j) {
        float high = values[static_cast<size_t>(j)];
        float low = high;
        double total = 0.0;  // f32 sums: rows i and i + 32 added in f32, then in double
        for (std::int64_t i = 0; i < rows; ++i) {
            const float value = values[static_cast<size_t>(i * columns + j)];
            high = std::isnan(high) || std::isnan(value) ? nan : std::max(high, value);
            low = std::isnan(low) || std::isnan(value) ? nan : std::min(low, value);
            if (i < 32) {
                total += i + 32 < rows ? value + values[static_cast<size_t>((i + 32) * columns + j)]
                                       : value;
            }
        }
        const auto same = [](float a, float b) { return std::isnan(a) ? std::isnan(b) : a == b; };
        wrong += !same(largest[static_cast<size_t>(j)], high) +
                 !same(smallest[static_cast<size_t>(j)], low) +
                 !same(sums[static_cast<size_t>(j)], static_cast<float>(total));
    }
    BOOST_TEST(wrong == 0U);
    BOOST_TEST(std::isnan(largest[3]));
    BOOST_TEST(std::isnan(smallest[700]));
    BOOST_TEST(largest[11] == inf);
    BOOST_TEST(smallest[12] == -inf);
}

// kael::set_num_threads resizes the cpu plugin's pool at run time, as torch.set_num_threads:
// results stay the same at every count, a bad count is a ValueError, and the count is restored.
BOOST_AUTO_TEST_CASE(set_num_threads_changes_the_pool_at_run_time) {
    const int before = kael::num_threads();
    BOOST_TEST(before >= 1);
    const Tensor x = kael::arange(0, 1 << 18, 1, DType::F32).reshape({512, 512});
    const std::vector<float> reference = kael::sum(kael::exp(x * 1e-6), 0).to_vector<float>();
    for (const int threads : {1, 3, 2, 5}) {
        kael::set_num_threads(threads);
        BOOST_TEST(kael::num_threads() == threads);
        BOOST_TEST(kael::sum(kael::exp(x * 1e-6), 0).to_vector<float>() == reference,
                   tt::per_element());
        BOOST_TEST(kael::matmul(x.slice(0, 0, 64), x.slice(1, 0, 64)).size(1) == 64);
    }
    BOOST_CHECK_THROW(kael::set_num_threads(0), kael::ValueError);
    BOOST_CHECK_THROW(kael::set_num_threads(257), kael::ValueError);
    kael::set_num_threads(before);
    BOOST_TEST(kael::num_threads() == before);
}
