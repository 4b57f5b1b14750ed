#pragma once
// Lookups and checks shared by the plugin-loading tests.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "kael/ops.h"
#include "kael/plugin_api.h"
#include "kael/registry.h"
#include "kael/tensor.h"

namespace kael_test {

inline const std::vector<std::string> kBrokenPluginNames = {
    "wrong_major", "no_entry", "not_a_library", "init_fails",
    "throws",      "no_devices", "missing_dependency"};

inline std::string plugin_file(const std::string& folder, const std::string& name) {
    return folder + "/kael_plugin_" + name + ".so";
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

inline std::vector<kael::PluginRecord> records_named(const std::string& name) {
    std::vector<kael::PluginRecord> found;
    for (const kael::PluginRecord& record : kael::plugins()) {
        if (record.name == name) {
            found.push_back(record);
        }
    }
    return found;
}

// The one record with that name; fails the test case when there is none or several.
inline kael::PluginRecord require_record(const std::string& name) {
    const std::vector<kael::PluginRecord> found = records_named(name);
    BOOST_REQUIRE_MESSAGE(found.size() == 1, "expected one record named '"
                                                 << name << "', found " << found.size());
    return found.front();
}

inline void check_status(const kael::PluginRecord& record, kael::PluginStatus expected) {
    BOOST_CHECK_MESSAGE(record.status == expected,
                        record.name << ": expected status '" << kael::to_string(expected)
                                    << "', got '" << kael::to_string(record.status)
                                    << "' (reason: " << record.reason << ")");
}

inline void check_reason_mentions(const kael::PluginRecord& record, const std::string& part) {
    BOOST_CHECK_MESSAGE(contains(record.reason, part), record.name << ": reason '" << record.reason
                                                                   << "' lacks '" << part << "'");
}

inline bool device_listed(const kael::Device& device) {
    const std::vector<kael::DeviceInfo> listed = kael::devices();
    return std::any_of(listed.begin(), listed.end(),
                       [&](const kael::DeviceInfo& info) { return info.device == device; });
}

// A broken plugin must leave the cpu device listed and computing.
inline void check_core_still_works() {
    BOOST_CHECK(device_listed(kael::kCPU));
    const kael::Tensor sum = kael::add(kael::ones({2}), kael::ones({2}));
    const std::vector<float> values = sum.to_vector<float>();
    const std::vector<float> expected = {2.0F, 2.0F};
    BOOST_TEST(values == expected, boost::test_tools::per_element());
}

}  // namespace kael_test
