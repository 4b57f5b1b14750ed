// What a tolerance cannot judge: f32 sums that pair elements as kael's rule says on every path, a
// long f32 sum equal run to run and to cpu's bit for bit, long contiguous rows, and out-of-range
// indices that throw IndexError (at the call, or at the next synchronisation on a device that
// checks later) without writing.
#include <algorithm>
#include <cmath>
#include <utility>

#include "conformance.h"

using namespace conformance;

BOOST_AUTO_TEST_CASE(long_sums_are_deterministic_and_match_cpu_bit_for_bit) {
    kael::manual_seed(61);
    const Tensor x = kael::randn({20000}) * 100.0;
    const Tensor on_device = x.to(device());
    const float first = kael::sum(on_device).item<float>();
    BOOST_TEST(kael::sum(on_device).item<float>() == first);  // run to run
    BOOST_TEST(first == kael::sum(x).item<float>());          // cpu's block order
    BOOST_TEST_CONTEXT("op sum, max and argmin of 3 contiguous rows of 9000 f64") {
        run_and_compare(
            {{kael::randn({3, 9000}, DType::F64)}},
            [](const Tensors& t) {
                return Tensors{kael::sum(t[0], 1), kael::max(t[0], 1), kael::argmin(t[0], 1)};
            },
            {1.0, false});
    }
}

namespace {

// Group halves of +-1024 plus a small integer, then odd multiples of 2^-14: every f32 pair of
// elements 32 apart rounds (a tie), so a device that widens before pairing, or pairs others,
// gives another sum; the exact terms make any order of double additions exact.
float paired_value(std::int64_t i, std::int64_t column) {
    const std::int64_t h = (i * 2654435761 + column * 40503) % 1000003;
    if (i % 64 < 32) {
        return static_cast<float>(((i / 64 + i + column) % 2 == 0 ? 1024 : -1024) + h % 8);
    }
    return std::ldexp(static_cast<float>(2 * (h % 1000) + 1), -14);
}

// kael's paired sum of run(i), i < length: element k of each 64-element group plus k + 32 in f32.
template <typename Run>
float paired_sum(std::int64_t length, const Run& run) {
    double total = 0.0;
    for (std::int64_t group = 0; group < length; group += 64) {
        for (std::int64_t k = group; k < std::min(length, group + 32); ++k) {
            total += k + 32 < length ? static_cast<double>(run(k) + run(k + 32)) : run(k);
        }
    }
    return static_cast<float>(total);
}

}  // namespace

// Rows short, warp-sized and cut into chunks; columns narrow (many row groups a block), wide,
// and long enough to be split: each equal to the pairing rule's sum, bit for bit.
BOOST_AUTO_TEST_CASE(f32_sums_pair_elements_32_apart_on_every_path) {
    for (const auto& [length, columns] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {40, 3}, {100, 5}, {2117, 3}, {9000, 2}, {70001, 1}, {3000, 300}, {20000, 5}}) {
        std::vector<double> values(static_cast<std::size_t>(length * columns));
        for (std::int64_t i = 0; i < length; ++i) {
            for (std::int64_t j = 0; j < columns; ++j) {
                values[static_cast<std::size_t>(i * columns + j)] = paired_value(i, j);
            }
        }
        const Tensor x = kael::tensor(values, {length, columns}).to(DType::F32).to(device());
        const auto down = kael::sum(x, 0).to_vector<float>();
        const auto along = kael::sum(x.T().contiguous(), 1).to_vector<float>();
        for (std::int64_t j = 0; j < columns; ++j) {
            const float expected =
                paired_sum(length, [&](std::int64_t i) { return paired_value(i, j); });
            BOOST_TEST_CONTEXT("length " << length << ", column " << j << " of " << columns) {
                BOOST_TEST(down[static_cast<std::size_t>(j)] == expected);
                BOOST_TEST(along[static_cast<std::size_t>(j)] == expected);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(out_of_range_indices_throw_and_write_nothing) {
    const kael::Device& on = device();
    Tensor data = kael::zeros({2, 3}, DType::F32, on);
    const Tensor bad = kael::tensor(std::vector<std::int64_t>{0, 3}, {2, 1}).to(on);
    BOOST_CHECK_THROW(
        {
            (void)kael::gather(data, 1, bad);
            kael::synchronize(on);
        },
        kael::IndexError);
    BOOST_CHECK_THROW(
        {
            kael::scatter_add_(data, 1, bad, kael::ones({2, 1}).to(on));
            kael::synchronize(on);
        },
        kael::IndexError);
    kael::synchronize(on);  // reported once: nothing is left pending
    // The bad index wrote nothing; the good one (0) may have been added before the report.
    BOOST_TEST(kael::sum(data.slice(1, 1, 3)).item<float>() == 0.0f);
}
