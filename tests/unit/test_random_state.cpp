#define BOOST_TEST_MODULE random_state
// kael::Generator: seeds, byte states that replay every draw, independent generators, and the
// random ops' rules (randperm, multinomial, bernoulli, in-place fills).
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kael/error.h"
#include "kael/random.h"

using kael::DType;
using kael::Generator;
using kael::Tensor;

namespace {

// One draw of every kind from generator, flattened to doubles.
std::vector<double> draw_all(Generator& generator) {
    std::vector<double> values;
    const auto append = [&values](const Tensor& t) {
        for (const double v : t.to(DType::F64).to_vector<double>()) values.push_back(v);
    };
    append(kael::rand({3}, DType::F32, kael::kCPU, generator));
    append(kael::randn({3}, DType::F64, kael::kCPU, generator));
    append(kael::randint(-5, 5, {4}, kael::kCPU, generator));
    append(kael::randperm(6, DType::I64, kael::kCPU, generator));
    append(kael::multinomial(kael::tensor(std::vector<double>{1, 2, 3}, {3}), 2, false, generator));
    Tensor filled = kael::empty({4}, DType::F32);
    append(kael::uniform_(filled, -1, 1, generator));
    append(kael::normal_(filled, 0, 2, generator));
    append(kael::exponential_(filled, 3, generator));
    append(kael::bernoulli_(filled, 0.5, generator));
    return values;
}

}  // namespace

BOOST_AUTO_TEST_CASE(state_bytes_replay_every_draw) {
    Generator generator(17);
    (void)kael::rand({5}, DType::F32, kael::kCPU, generator);
    const std::vector<std::uint8_t> state = generator.get_state();
    const std::vector<double> first = draw_all(generator);
    BOOST_TEST(draw_all(generator) != first);
    generator.set_state(state);
    BOOST_TEST(draw_all(generator) == first);
    BOOST_TEST(generator.initial_seed() == 17u);

    Generator other;
    other.set_state(state);  // a state moves between generators
    BOOST_TEST(draw_all(other) == first);
    BOOST_TEST(other.initial_seed() == 17u);
}

BOOST_AUTO_TEST_CASE(seeds_and_the_default_generator) {
    Generator a(3);
    Generator b;
    b.manual_seed(3);
    BOOST_TEST(draw_all(a) == draw_all(b));
    BOOST_TEST(Generator().initial_seed() == Generator::kDefaultSeed);
    const std::uint64_t fresh = b.seed();
    BOOST_TEST(b.initial_seed() == fresh);

    kael::manual_seed(11);
    const std::vector<std::uint8_t> state = kael::default_generator().get_state();
    const auto x = kael::randn({8}).to_vector<float>();
    kael::default_generator().set_state(state);
    BOOST_TEST(kael::randn({8}).to_vector<float>() == x);
}

BOOST_AUTO_TEST_CASE(broken_states_are_value_errors) {
    Generator generator;
    std::vector<std::uint8_t> state = generator.get_state();
    BOOST_CHECK_THROW(generator.set_state({}), kael::ValueError);
    std::vector<std::uint8_t> truncated(state.begin(), state.end() - 8);
    BOOST_CHECK_THROW(generator.set_state(truncated), kael::ValueError);
    state[0] = 'X';
    BOOST_CHECK_THROW(generator.set_state(state), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(random_op_rules) {
    Generator generator(5);
    auto order = kael::randperm(100, DType::I64, kael::kCPU, generator).to_vector<std::int64_t>();
    std::sort(order.begin(), order.end());
    std::vector<std::int64_t> expected(100);
    std::iota(expected.begin(), expected.end(), 0);
    BOOST_TEST(order == expected);
    BOOST_CHECK_THROW((void)kael::randperm(-1), kael::ValueError);

    const Tensor weights = kael::tensor(std::vector<double>{0, 1, 0, 1}, {2, 2});
    const auto rows = kael::multinomial(weights, 1, false, generator).to_vector<std::int64_t>();
    BOOST_TEST(rows == (std::vector<std::int64_t>{1, 1}));
    BOOST_CHECK_THROW((void)kael::multinomial(weights, 3), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::multinomial(kael::zeros({2}), 1), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::multinomial(kael::zeros({2}, DType::I64), 1), kael::TypeError);

    const auto flips = kael::bernoulli(kael::tensor(std::vector<double>{0, 1, 0}, {3}), generator)
                           .to_vector<double>();
    BOOST_TEST(flips == (std::vector<double>{0, 1, 0}));
    Tensor integers = kael::zeros({3}, DType::I64);
    BOOST_CHECK_THROW(kael::uniform_(integers), kael::TypeError);
    Tensor floats = kael::zeros({3});
    BOOST_CHECK_THROW(kael::normal_(floats, 0, -1), kael::ValueError);
    BOOST_CHECK_THROW(kael::uniform_(floats, 1, 0), kael::ValueError);
}
