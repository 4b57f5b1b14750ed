#pragma once
// The device suite (device rules, autograd, device graphs; the op checks are kael-conformance's)
// runs on the device named by KAEL_TEST_DEVICE (default "cuda") and compares every result with
// the cpu. A missing device fails every test: it never counts as a pass.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>

#include "kael/allocator.h"
#include "kael/autograd.h"
#include "kael/gpt.h"
#include "kael/ops.h"
#include "kael/optim.h"
#include "kael/registry.h"

namespace device_test {

inline std::string test_device_name() {
    const char* name = std::getenv("KAEL_TEST_DEVICE");
    return name != nullptr && *name != '\0' ? name : "cuda";
}

// The device, or cpu when its name is not even a registered type (OnDevice then fails).
inline kael::Device test_device() {
    try {
        return kael::Device(test_device_name());
    } catch (const kael::ValueError&) {
        return kael::kCPU;
    }
}

struct OnDevice {
    kael::Device device = test_device();
    OnDevice() {
        BOOST_REQUIRE_MESSAGE(!device.is_cpu() && kael::is_available(device),
                              "no plugin serves " + test_device_name() +
                                  "; the device suite cannot pass without a device");
        kael::manual_seed(2024);
    }
};

// Same device, shape and dtype, values within 1e-4 (f32) or 1e-10 (f64), NaN equal to NaN.
inline void expect_matches_cpu(const kael::Tensor& on_device, const kael::Tensor& on_cpu) {
    BOOST_TEST((on_device.device() == test_device()), "result is on " << on_device.device().str());
    BOOST_TEST(on_device.shape() == on_cpu.shape(), boost::test_tools::per_element());
    BOOST_TEST((on_device.dtype() == on_cpu.dtype()));
    const double tolerance = on_cpu.dtype() == kael::DType::F64 ? 1e-10 : 1e-4;
    BOOST_TEST(kael::allclose(on_device.cpu(), on_cpu, tolerance, tolerance, /*equal_nan=*/true),
               "device " << on_device.cpu() << " vs cpu " << on_cpu);
}

}  // namespace device_test
