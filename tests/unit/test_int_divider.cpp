// The magic-number division the cuda plugin's strided kernels split indices with
// (kael/kernels/int_divider.h), against the hardware's division.
#define BOOST_TEST_MODULE int_divider
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <random>

#include "kael/kernels/int_divider.h"

using kael::kernels::IntDivider;

namespace {

constexpr std::uint32_t kLargest = (std::uint32_t{1} << 31) - 1;  // the documented range

// n / divisor and n % divisor for the values where rounding goes wrong first: around every
// multiple of divisor and at the top of the range.
void check_around_multiples(std::uint32_t divisor) {
    const IntDivider<std::uint32_t> divider(divisor);
    const std::uint64_t step = std::max<std::uint64_t>(divisor, kLargest / 64);
    for (std::uint64_t multiple = 0; multiple <= kLargest; multiple += step - step % divisor) {
        for (const std::int64_t delta : {-1, 0, 1}) {
            const std::int64_t n = static_cast<std::int64_t>(multiple) + delta;
            if (n < 0 || n > kLargest) {
                continue;
            }
            const auto value = static_cast<std::uint32_t>(n);
            BOOST_TEST_REQUIRE(divider.divide(value) == value / divisor, value << " / " << divisor);
        }
    }
    BOOST_TEST_REQUIRE(divider.divide(kLargest) == kLargest / divisor, "top / " << divisor);
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_divisors_are_exact) {
    for (std::uint32_t divisor = 1; divisor <= 4096; ++divisor) {
        check_around_multiples(divisor);
    }
}

BOOST_AUTO_TEST_CASE(powers_of_two_and_their_neighbours_are_exact) {
    for (int bit = 1; bit <= 31; ++bit) {
        const std::uint64_t power = std::uint64_t{1} << bit;
        for (const std::uint64_t divisor : {power - 1, power, power + 1}) {
            if (divisor <= kLargest) {
                check_around_multiples(static_cast<std::uint32_t>(divisor));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(random_divisors_and_numerators_are_exact) {
    std::mt19937 random(7);
    std::uniform_int_distribution<std::uint32_t> any(0, kLargest);
    for (int trial = 0; trial < 200000; ++trial) {
        const std::uint32_t divisor = std::max<std::uint32_t>(1, any(random) >> (trial % 31));
        const std::uint32_t n = any(random);
        BOOST_TEST_REQUIRE(IntDivider<std::uint32_t>(divisor).divide(n) == n / divisor,
                           n << " / " << divisor);
    }
}

BOOST_AUTO_TEST_CASE(wide_divider_divides) {
    const IntDivider<std::uint64_t> divider(std::uint64_t{3} << 40);
    BOOST_TEST(divider.divide(std::uint64_t{10} << 40) == 3u);
}
