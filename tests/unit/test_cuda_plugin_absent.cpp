#define BOOST_TEST_MODULE cuda_plugin_absent
// Run with KAEL_PLUGINS=cpu,cuda where no GPU is usable: the real cuda plugin loads with no
// devices and the driver's reason, and every request for cuda throws DeviceError with it.
// Where a GPU is present the plugin must serve it instead.
#include <dlfcn.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "kael/error.h"
#include "kael/plugin_api.h"
#include "kael/plugin_extensions.h"
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

// The nccl backend's collectives: the plugin serves KAEL_EXTENSION_COLLECTIVES whether or not
// NCCL or a GPU is there (libnccl is loaded at the first communicator), and without a device a
// communicator fails with a status and a message, never a crash.
BOOST_AUTO_TEST_CASE(nccl_collectives_are_served_and_fail_cleanly_without_a_device) {
    const kael::PluginRecord cuda = cuda_record();
    void* library = dlopen(cuda.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    BOOST_REQUIRE_MESSAGE(library != nullptr, dlerror());
    const auto query =
        reinterpret_cast<kael_plugin_query_fn>(dlsym(library, KAEL_PLUGIN_ENTRY_NAME));
    BOOST_REQUIRE(query != nullptr);
    const kael_plugin* table = query(KAEL_ABI_MAJOR, KAEL_ABI_MINOR);
    BOOST_REQUIRE(table != nullptr && table->extension != nullptr);
    const auto* collectives =
        static_cast<const kael_collectives*>(table->extension(KAEL_EXTENSION_COLLECTIVES));
    BOOST_REQUIRE(collectives != nullptr);
    BOOST_TEST(std::string(collectives->library).find("NCCL") != std::string::npos);
    BOOST_TEST(collectives->struct_size == sizeof(kael_collectives));
    if (cuda.status == kael::PluginStatus::Loaded) {
        return;  // a GPU: the distributed tests exercise NCCL itself
    }
    kael_store store{sizeof(kael_store), nullptr,
                     [](void*, const char*, const void*, int64_t) { return KAEL_STATUS_OK; },
                     [](void*, const char*, void**, int64_t*) { return KAEL_STATUS_DEVICE_ERROR; },
                     [](void*, void*) {}};
    void* communicator = nullptr;
    const kael_status status =
        collectives->communicator_create(0, &store, 0, 1, 1000, &communicator);
    BOOST_TEST(status != KAEL_STATUS_OK);
    BOOST_TEST(communicator == nullptr);
    BOOST_TEST(table->last_error != nullptr);
    if (table->last_error != nullptr) {
        BOOST_TEST_MESSAGE("communicator_create without a device: " << table->last_error());
        BOOST_TEST(std::string(table->last_error()).size() > 0);
    }
}
