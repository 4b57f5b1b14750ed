// The plugins' bfloat16 and float16 conversions (kael/kernels/low_precision.h, shared by the cpu,
// emulated and cuda plugins): every 16-bit value round-trips through float, and floats across the
// whole range round to the nearest value of an independent table, ties to the even one.
#define BOOST_TEST_MODULE low_precision
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kael/kernels/low_precision.h"

using kael::kernels::BFloat16;
using kael::kernels::Half;

namespace {

template <typename Low>
bool is_nan_bits(std::uint16_t bits) {
    const std::uint16_t infinity = std::is_same_v<Low, Half> ? 0x7C00 : 0x7F80;
    return (bits & 0x7FFF) > infinity;
}

// Every non-negative value of Low with its bits, ascending, then infinity standing where the
// next binade would start (so a value halfway past the largest finite one ties to it, even).
template <typename Low>
std::vector<std::pair<double, std::uint16_t>> table() {
    std::vector<std::pair<double, std::uint16_t>> values;
    for (std::uint32_t bits = 0; bits < 0x8000; ++bits) {
        const double value = kael::kernels::to_float(Low{static_cast<std::uint16_t>(bits)});
        if (std::isfinite(value)) {
            values.emplace_back(value, static_cast<std::uint16_t>(bits));
        }
    }
    std::sort(values.begin(), values.end());
    const double largest = values.back().first;
    const double step = largest - values[values.size() - 2].first;
    values.emplace_back(largest + step, std::is_same_v<Low, Half> ? 0x7C00 : 0x7F80);
    return values;
}

template <typename Low>
std::uint16_t reference(float value, const std::vector<std::pair<double, std::uint16_t>>& values) {
    const auto sign = static_cast<std::uint16_t>(std::signbit(value) ? 0x8000 : 0);
    const double magnitude = std::fabs(static_cast<double>(value));
    if (magnitude >= values.back().first) {
        return sign | values.back().second;
    }
    const auto above = std::upper_bound(values.begin(), values.end(),
                                        std::make_pair(magnitude, std::uint16_t{0xFFFF}));
    const auto below = above - 1;
    const double down = magnitude - below->first;
    const double up = above->first - magnitude;
    const bool take_up = up < down || (up == down && (above->second & 1) == 0);
    return sign | (take_up ? above->second : below->second);
}

template <typename Low>
void check_every_value_round_trips() {
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const Low value{static_cast<std::uint16_t>(bits)};
        const Low back = kael::kernels::from_float<Low>(kael::kernels::to_float(value));
        if (is_nan_bits<Low>(value.bits)) {
            BOOST_TEST_REQUIRE(std::isnan(kael::kernels::to_float(value)));
            BOOST_TEST_REQUIRE(is_nan_bits<Low>(back.bits));
        } else {
            BOOST_TEST_REQUIRE(back.bits == value.bits, "bits " << bits);
        }
    }
}

template <typename Low>
void check_floats_round_to_nearest_even() {
    const auto values = table<Low>();
    // Every 251st float bit pattern (all exponents, both signs) and the pattern after each.
    for (std::uint64_t start = 0; start < (std::uint64_t{1} << 32); start += 251) {
        for (const std::uint64_t bits : {start, start + 1}) {
            const auto pattern = static_cast<std::uint32_t>(bits);
            float value;
            std::memcpy(&value, &pattern, sizeof value);
            const std::uint16_t got = kael::kernels::from_float<Low>(value).bits;
            if (std::isnan(value)) {
                BOOST_TEST_REQUIRE(is_nan_bits<Low>(got));
                continue;
            }
            BOOST_TEST_REQUIRE(got == reference<Low>(value, values), "float " << value);
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_bfloat16_and_float16_round_trips_through_float) {
    check_every_value_round_trips<BFloat16>();
    check_every_value_round_trips<Half>();
}

BOOST_AUTO_TEST_CASE(floats_round_to_the_nearest_value_ties_to_even) {
    check_floats_round_to_nearest_even<BFloat16>();
    check_floats_round_to_nearest_even<Half>();
}

BOOST_AUTO_TEST_CASE(halfway_cases_and_limits) {
    using kael::kernels::to_half;
    using kael::kernels::to_bfloat16;
    BOOST_TEST(to_half(65519.99F).bits == 0x7BFF);   // below the halfway point: the largest
    BOOST_TEST(to_half(65520.0F).bits == 0x7C00);    // halfway: ties to infinity's even bits
    BOOST_TEST(to_half(2.9802322e-8F).bits == 0x0000);  // 2^-25: halfway to the least subnormal
    BOOST_TEST(to_half(2.9802326e-8F).bits == 0x0001);  // just above it
    BOOST_TEST(to_half(-0.0F).bits == 0x8000);
    BOOST_TEST(to_bfloat16(1.00390625F).bits == 0x3F80);   // 1 + 2^-8: ties to even (1.0)
    BOOST_TEST(to_bfloat16(1.01171875F).bits == 0x3F82);   // 1 + 3 * 2^-8: ties up to even
    BOOST_TEST(to_bfloat16(3.4e38F).bits == 0x7F80);       // past the largest finite: infinity
}
