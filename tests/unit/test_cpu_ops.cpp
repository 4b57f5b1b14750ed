#define BOOST_TEST_MODULE cpu_ops
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "kael/allocator.h"
#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
namespace tt = boost::test_tools;

namespace {
Tensor iota(const Shape& shape, DType dtype = DType::F32) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    return kael::arange(0, static_cast<double>(count), 1, dtype).view(shape);
}
template <typename T>
std::vector<T> v(const Tensor& t) {
    return t.to_vector<T>();
}
}  // namespace

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

// Transposing layouts take the cpu plugin's tiled walk (both dims >= 32, edges not multiples
// of its 32-wide tiles): every element where a straight loop puts it.
BOOST_AUTO_TEST_CASE(transposing_layouts_walk_in_tiles) {
    const Tensor a = kael::arange(0, 70 * 45, 1, DType::F32).view({70, 45});
    const std::vector<float> values = a.to_vector<float>();
    const std::vector<float> transposed = a.T().contiguous().to_vector<float>();
    const std::vector<float> wide = (a.view({45, 70}) + a.T()).to_vector<float>();
    for (int64_t i = 0; i < 45; ++i) {
        for (int64_t j = 0; j < 70; ++j) {
            const float element = values[static_cast<size_t>(j * 45 + i)];
            BOOST_TEST(transposed[static_cast<size_t>(i * 70 + j)] == element);
            BOOST_TEST(wide[static_cast<size_t>(i * 70 + j)] ==
                       values[static_cast<size_t>(i * 70 + j)] + element);
        }
    }
    // Three dims, a permutation, a dtype change and a broadcast operand.
    const Tensor cube = kael::arange(0, 3 * 40 * 50, 1, DType::F64).view({3, 40, 50});
    const std::vector<double> cube_values = cube.to_vector<double>();
    const Tensor permuted = cube.permute({0, 2, 1}).to(DType::F32) + kael::ones({1, 1, 40});
    const std::vector<float> got = permuted.contiguous().to_vector<float>();
    BOOST_REQUIRE(permuted.shape() == (Shape{3, 50, 40}));
    size_t wrong = 0;
    for (int64_t b = 0; b < 3; ++b) {
        for (int64_t i = 0; i < 50; ++i) {
            for (int64_t j = 0; j < 40; ++j) {
                const double want = cube_values[static_cast<size_t>((b * 40 + j) * 50 + i)] + 1;
                wrong +=
                    got[static_cast<size_t>((b * 50 + i) * 40 + j)] != static_cast<float>(want);
            }
        }
    }
    BOOST_TEST(wrong == 0U);
}

// pow's vector path (libmvec's powf at each ISA ctest runs this with) against libm: bases of
// both signs, exponents integer and not, zero, NaN and infinities, a length with a tail, a
// broadcast row of exponents, a column of them and one for a 3-d block (each repeated along the
// inner run, spelled out in chunks) and in place; an exponent of 2 gives base * base exactly.
BOOST_AUTO_TEST_CASE(vector_power_matches_libm) {
    std::vector<float> bases;
    std::vector<float> exponents;
    for (int i = 0; i < 1037; ++i) {
        bases.push_back(0.01F + 30.0F * static_cast<float>(i % 211) / 210.0F);
        exponents.push_back(-6.0F + 12.0F * static_cast<float>(i % 97) / 96.0F);
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<std::pair<float, float>> special{
        {-2.0F, 2.0F}, {-2.0F, 3.0F}, {-2.0F, 0.5F}, {0.0F, -1.0F}, {-0.0F, -1.0F}, {nan, 0.0F},
        {1.0F, nan},   {nan, 2.0F},   {inf, -2.0F},  {-inf, 3.0F},  {3.3F, 2.0F},   {0.7F, 2.0F}};
    for (const auto& [base, exponent] : special) {
        bases.push_back(base);
        exponents.push_back(exponent);
    }
    const auto n = static_cast<std::int64_t>(bases.size());
    const auto same = [](double got, double want) {
        if (std::isnan(want)) return std::isnan(got);
        if (std::isinf(want) || want == 0.0) return got == want;
        return std::abs(got - want) <= 1e-6 * std::abs(want);
    };
    // exponent_of(i): which exponent element i of the result was raised to.
    const auto count_wrong_at = [&](const std::vector<float>& got, auto exponent_of) {
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const std::size_t e = exponent_of(i);
            const auto base = static_cast<double>(bases[i]);
            const auto exponent = static_cast<double>(exponents[e]);
            const bool squared = exponents[e] == 2.0F;
            const float product = bases[i] * bases[i];
            wrong += squared ? !(got[i] == product || (std::isnan(got[i]) && std::isnan(product)))
                             : !same(got[i], std::pow(base, exponent));
        }
        return wrong;
    };
    const auto count_wrong = [&](const std::vector<float>& got, std::int64_t columns) {
        return count_wrong_at(got, [&](std::size_t i) {
            return columns == n ? i : i % static_cast<std::size_t>(columns);
        });
    };
    const Tensor b = kael::tensor(bases);
    const Tensor e = kael::tensor(exponents);
    BOOST_TEST(count_wrong(kael::pow(b, e).to_vector<float>(), n) == 0U);
    // [17, 61] bases against a row of 61 exponents (the layout's inner dim contiguous).
    const std::int64_t columns = 61;
    const Tensor grid = b.slice(0, 0, 17 * columns).view({17, columns});
    const std::vector<float> row_result =
        kael::pow(grid, e.slice(0, 0, columns)).to_vector<float>();
    BOOST_TEST(count_wrong(row_result, columns) == 0U);
    // The same grid against a column of 17 exponents, and as [17, 1, 61] against [17, 1, 1].
    const std::vector<float> column_result =
        kael::pow(grid, e.slice(0, 0, 17).view({17, 1})).to_vector<float>();
    const auto by_row = [&](std::size_t i) { return i / static_cast<std::size_t>(columns); };
    BOOST_TEST(count_wrong_at(column_result, by_row) == 0U);
    const std::vector<float> block_result =
        kael::pow(grid.view({17, 1, columns}), e.slice(0, 0, 17).view({17, 1, 1}))
            .to_vector<float>();
    BOOST_TEST(count_wrong_at(block_result, by_row) == 0U);
    Tensor in_place = b.clone();
    kael::pow_(in_place, e);
    BOOST_TEST(count_wrong(in_place.to_vector<float>(), n) == 0U);
}

// The vector math paths (libmvec at the widest ISA the CPU has; ctest runs this again with
// KAEL_CPU_VECTOR_ISA=avx2, sse and scalar) against libm, element by element, with lengths
// that leave tails and NaN, infinities and the gelu tail among the inputs.
BOOST_AUTO_TEST_CASE(vector_math_matches_libm) {
    std::vector<float> inputs;
    for (int i = 0; i < 1031; ++i) {
        inputs.push_back(-12.0F + 24.0F * static_cast<float>(i) / 1030.0F);
    }
    inputs.insert(inputs.end(),
                  {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                   -std::numeric_limits<float>::infinity(), 0.0F, -0.0F, 88.5F});
    const Tensor x = kael::tensor(inputs);
    const auto close = [](double got, double want, double tolerance) {
        if (std::isnan(want)) return std::isnan(got);
        if (std::isinf(want)) return got == want;
        return std::abs(got - want) <= tolerance * std::max(1.0, std::abs(want));
    };
    const auto check = [&](const char* name, const Tensor& result, auto reference,
                           double tolerance) {
        const std::vector<float> got = result.to_vector<float>();
        size_t wrong = 0;
        for (size_t i = 0; i < inputs.size(); ++i) {
            wrong += !close(got[i], reference(static_cast<double>(inputs[i])), tolerance);
        }
        BOOST_TEST(wrong == 0U, name << ": " << wrong << " of " << inputs.size() << " differ");
    };
    check(
        "exp", kael::exp(x), [](double v) { return std::exp(v); }, 1e-6);
    check(
        "tanh", kael::tanh(x), [](double v) { return std::tanh(v); }, 1e-6);
    check(
        "sigmoid", kael::sigmoid(x), [](double v) { return 1 / (1 + std::exp(-v)); }, 1e-6);
    check(
        "gelu", kael::gelu(x), [](double v) { return v * 0.5 * std::erfc(-v / std::sqrt(2.0)); },
        1e-5);
    check(
        "gelu_tanh", kael::gelu(x, true),
        [](double v) {
            return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        },
        1e-5);
    check(
        "exp2", kael::exp2(x), [](double v) { return std::exp2(v); }, 1e-6);
    const Tensor positive = kael::exp(x);
    const std::vector<float> positive_values = positive.to_vector<float>();
    for (const bool base2 : {false, true}) {
        const std::vector<float> logs =
            (base2 ? kael::log2(positive) : kael::log(positive)).to_vector<float>();
        size_t wrong = 0;
        for (size_t i = 0; i < positive_values.size(); ++i) {
            const auto value = static_cast<double>(positive_values[i]);
            wrong += !close(logs[i], base2 ? std::log2(value) : std::log(value), 1e-6);
        }
        BOOST_TEST(wrong == 0U, (base2 ? "log2" : "log") << ": " << wrong << " differ");
    }
    // softmax rows against a double reference.
    size_t wrong = 0;
    const Tensor rows = x.slice(0, 0, 1030).view({10, 103});
    const std::vector<float> soft = kael::softmax(rows, 1).to_vector<float>();
    const std::vector<float> row_values = rows.to_vector<float>();
    for (int r = 0; r < 10; ++r) {
        double top = -INFINITY, total = 0;
        for (int c = 0; c < 103; ++c) top = std::max(top, double(row_values[r * 103 + c]));
        for (int c = 0; c < 103; ++c) total += std::exp(row_values[r * 103 + c] - top);
        for (int c = 0; c < 103; ++c) {
            wrong +=
                !close(soft[r * 103 + c], std::exp(row_values[r * 103 + c] - top) / total, 1e-6);
        }
    }
    BOOST_TEST(wrong == 0U);
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

// Runs that follow each other along the next dim go to the wide f32 loops as one block of rows
// (elementwise.cpp's for_each_span), a broadcast operand's value read again for each row. Every
// broadcast position, a transposed x (and a 2-d transpose, walked in tiles), an integer op (run
// by run) and a bool result, element by element against the loop below; 9x70x130 splits
// between threads in the middle of a row.
BOOST_AUTO_TEST_CASE(broadcast_rows_match_element_by_element) {
    const Shape shape{9, 70, 130};
    const Tensor x = (iota(shape) * 0.37) - 3000.0;
    const std::vector<float> xs = v<float>(x);
    const std::vector<Shape> kept{{1, 70, 1}, {9, 1, 1}, {1, 1, 130}, {9, 70, 1}, {1, 70, 130}};
    const int before = kael::num_threads();
    for (const int threads : {1, 3}) {
        kael::set_num_threads(threads);
        for (const Shape& k_shape : kept) {
            const Tensor k = iota(k_shape) * -1.5;
            const std::vector<float> ks = v<float>(k);
            // Element (a, b, c) of k broadcast to x's shape.
            const auto k_at = [&](std::int64_t a, std::int64_t b, std::int64_t c) {
                const std::int64_t index = (k_shape[0] == 1 ? 0 : a) * k_shape[1] * k_shape[2] +
                                           (k_shape[1] == 1 ? 0 : b) * k_shape[2] +
                                           (k_shape[2] == 1 ? 0 : c);
                return ks[static_cast<std::size_t>(index)];
            };
            const std::vector<float> sums = v<float>(kael::add(x, k));
            const std::vector<float> products = v<float>(kael::mul(k, x));
            const std::vector<bool> above = v<bool>(kael::gt(x, k));
            std::size_t wrong = 0;
            for (std::int64_t a = 0; a < shape[0]; ++a) {
                for (std::int64_t b = 0; b < shape[1]; ++b) {
                    for (std::int64_t c = 0; c < shape[2]; ++c) {
                        const auto i = static_cast<std::size_t>((a * shape[1] + b) * shape[2] + c);
                        const float kv = k_at(a, b, c);
                        wrong += sums[i] != xs[i] + kv;
                        wrong += products[i] != kv * xs[i];
                        wrong += above[i] != (xs[i] > kv);
                    }
                }
            }
            BOOST_TEST(wrong == 0U, "k of shape " << k_shape[0] << "x" << k_shape[1] << "x"
                                                  << k_shape[2] << ", " << threads << " threads");
        }
        // A transposed x (its runs along memory, the tiles' path) and an integer op.
        const Tensor xt = x.transpose(0, 2);
        const Tensor kt = iota({130, 1, 1}) * 2.0;
        const std::vector<float> got = v<float>(kael::sub(xt, kt));
        const std::vector<float> xts = v<float>(xt.contiguous());
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            wrong += got[i] != xts[i] - 2.0F * static_cast<float>(i / (70 * 9));
        }
        BOOST_TEST(wrong == 0U);
        // A 2-d transpose (the tiles' path: 32x32 tiles, a tile's rows in one call, ragged edge
        // tiles of 22 columns and 2 rows) against a contiguous operand and a column.
        const Tensor x2 = x.view({630, 130}).transpose(0, 1);
        const Tensor y2 = iota({130, 630}) * 0.5;
        const Tensor column = iota({130, 1}) + 1.0;
        const std::vector<float> ys = v<float>(y2);
        const std::vector<float> tile_sums = v<float>(kael::add(x2, y2));
        const std::vector<float> tile_products = v<float>(kael::mul(x2, column));
        std::size_t tile_wrong = 0;
        for (std::size_t i = 0; i < 130; ++i) {
            for (std::size_t j = 0; j < 630; ++j) {
                const float xv = xs[j * 130 + i];
                tile_wrong += tile_sums[i * 630 + j] != xv + ys[i * 630 + j];
                tile_wrong += tile_products[i * 630 + j] != xv * static_cast<float>(i + 1);
            }
        }
        BOOST_TEST(tile_wrong == 0U);
        const Tensor ints = iota(shape, DType::I64);
        const Tensor step = iota({1, 70, 1}, DType::I64);
        const std::vector<std::int64_t> int_sums = v<std::int64_t>(kael::add(ints, step));
        std::size_t int_wrong = 0;
        for (std::size_t i = 0; i < int_sums.size(); ++i) {
            const auto want =
                static_cast<std::int64_t>(i) + static_cast<std::int64_t>(i / 130 % 70);
            int_wrong += int_sums[i] != want;
        }
        BOOST_TEST(int_wrong == 0U);
    }
    kael::set_num_threads(before);
}
