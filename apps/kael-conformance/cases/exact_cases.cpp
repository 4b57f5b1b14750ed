// What a tolerance cannot judge: a long f32 sum equal run to run and to cpu's bit for bit (the
// same block order), long contiguous rows, and out-of-range indices that throw IndexError (at the
// call, or at the next synchronisation on a device that checks later) without writing.
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
