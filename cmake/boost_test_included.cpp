// Boost.Test's implementation (and main(), unless BOOST_TEST_NO_MAIN) from its headers: the test
// programs of a build with KAEL_BOOST_TEST_HEADER_ONLY=ON (cmake/KaelBoostTest.cmake).
#include <boost/test/included/unit_test.hpp>
