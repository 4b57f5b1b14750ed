#pragma once
// Element-wise closeness with an absolute and a relative part, reporting the first miss.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

template <typename A, typename B>
void check_close(const std::vector<A>& actual, const std::vector<B>& expected, double atol,
                 double rtol = 0) {
    BOOST_REQUIRE_EQUAL(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double a = static_cast<double>(actual[i]);
        const double e = static_cast<double>(expected[i]);
        if (!(std::abs(a - e) <= atol + rtol * std::abs(e))) {
            BOOST_ERROR("element " << i << ": " << a << " differs from " << e);
            return;
        }
    }
}
