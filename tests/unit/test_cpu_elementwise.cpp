// The cpu plugin's elementwise walks (elementwise.cpp, elementwise_tiles.h) and its vector
// math: tiles of transposing layouts, blocks of rows, libmvec's paths against libm; part of
// unit_cpu_ops, so the ctest variants run them again at every vector ISA and thread count.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "cpu_ops_test_support.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using kael::test::iota;
using kael::test::v;

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
