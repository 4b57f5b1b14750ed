#define BOOST_TEST_MODULE cuda_plugin_absent
// Run with KAEL_PLUGINS=cpu,cuda where no GPU is usable: the real cuda plugin loads with no
// devices and the driver's reason, and every request for cuda throws DeviceError with it.
// Where a GPU is present the plugin must serve it instead.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "kael/error.h"
#include "kael/registry.h"
#include "kael/tensor.h"

namespace {

kael::PluginRecord cuda_record() {
    const std::vector<kael::PluginRecord> records = kael::plugins();
    const auto found = std::find_if(records.begin(), records.end(),
                                    [](const kael::PluginRecord& r) { return r.name == "cuda"; });
    BOOST_REQUIRE_MESSAGE(found != records.end(), "no cuda plugin was discovered");
    return *found;
}

bool names_reason(const kael::DeviceError& error, const std::string& reason) {
    return std::string(error.what()).find(reason) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(plugin_loads_with_no_devices_and_says_why) {
    const kael::PluginRecord cuda = cuda_record();
    BOOST_TEST(cuda.kind == "gpu");
    BOOST_TEST(cuda.priority == 100);
    BOOST_TEST(cuda.build_info.find("compiler=nvcc") != std::string::npos);
    if (cuda.status == kael::PluginStatus::Loaded) {
        BOOST_TEST(cuda.device_count >= 1);
        BOOST_TEST(kael::is_available(kael::Device("cuda")));
        return;
    }
    BOOST_TEST(kael::to_string(cuda.status) == kael::to_string(kael::PluginStatus::NoDevices));
    BOOST_TEST(cuda.device_count == 0);
    BOOST_TEST(!cuda.reason.empty());
    BOOST_TEST(!kael::is_available(kael::Device("cuda")));
}

BOOST_AUTO_TEST_CASE(asking_for_cuda_throws_device_error_with_the_reason) {
    const kael::PluginRecord cuda = cuda_record();
    if (cuda.status == kael::PluginStatus::Loaded) {
        BOOST_TEST_MESSAGE("a GPU is present: nothing to refuse");
        return;
    }
    const auto with_reason = [&](const kael::DeviceError& error) {
        return names_reason(error, cuda.reason);
    };
    BOOST_CHECK_EXCEPTION(kael::require_device(kael::Device("cuda")), kael::DeviceError,
                          with_reason);
    BOOST_CHECK_EXCEPTION((void)kael::zeros({2, 3}, kael::DType::F32, kael::Device("cuda")),
                          kael::DeviceError, with_reason);
    BOOST_CHECK_EXCEPTION((void)kael::zeros({2}).to(kael::Device("cuda:1")), kael::DeviceError,
                          with_reason);
}
