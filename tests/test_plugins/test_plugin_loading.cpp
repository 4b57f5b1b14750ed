// Each deliberately broken plugin gets the status record it deserves, and none of them stops
// the core from working. Run with KAEL_PLUGIN_PATH=<broken folder> (see CMakeLists.txt).
#define BOOST_TEST_MODULE plugin_loading
#include <boost/test/unit_test.hpp>

#include "plugin_loading_support.h"

using kael::PluginStatus;
using namespace kael_test;

BOOST_AUTO_TEST_SUITE(broken)

BOOST_AUTO_TEST_CASE(wrong_major_is_incompatible_and_names_both_versions) {
    const kael::PluginRecord record = require_record("wrong_major");
    check_status(record, PluginStatus::IncompatibleAbi);
    BOOST_TEST(record.path == plugin_file(KAEL_TEST_BROKEN_DIR, "wrong_major"));
    BOOST_TEST(record.abi_major == KAEL_ABI_MAJOR + 1U);
    BOOST_TEST(record.abi_minor == 3U);
    check_reason_mentions(record, std::to_string(KAEL_ABI_MAJOR + 1) + ".3");
    check_reason_mentions(record, kael::core_abi_version());
    BOOST_TEST(record.device_count == 0);
    BOOST_TEST(!record.selected);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(library_without_entry_is_missing_entry) {
    const kael::PluginRecord record = require_record("no_entry");
    check_status(record, PluginStatus::MissingEntry);
    check_reason_mentions(record, KAEL_PLUGIN_ENTRY_NAME);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(text_file_is_a_load_error_with_the_loaders_message) {
    const kael::PluginRecord record = require_record("not_a_library");
    check_status(record, PluginStatus::LoadError);
    // dlopen's own message, without Boost.DLL's wrapping.
    BOOST_TEST(record.reason ==
               plugin_file(KAEL_TEST_BROKEN_DIR, "not_a_library") + ": invalid ELF header");
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(failing_init_is_init_failed_with_the_plugins_message) {
    const kael::PluginRecord record = require_record("init_fails");
    check_status(record, PluginStatus::InitFailed);
    check_reason_mentions(record, "simulated driver failure");
    BOOST_TEST(record.device_count == 0);
    BOOST_TEST(!record.selected);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(exception_across_the_abi_is_caught_as_init_failed) {
    const kael::PluginRecord record = require_record("throws");
    check_status(record, PluginStatus::InitFailed);
    check_reason_mentions(record, "boom from probe");
    BOOST_TEST(!record.selected);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(plugin_without_devices_is_listed_but_never_selected) {
    const kael::PluginRecord record = require_record("no_devices");
    check_status(record, PluginStatus::NoDevices);
    BOOST_TEST(record.reason == "no simulated device present");
    BOOST_TEST(record.device_type == "cuda");
    BOOST_TEST(record.kind == "emulated");
    BOOST_TEST(record.version == "0.1.0");
    BOOST_TEST(record.device_count == 0);
    BOOST_TEST(!record.selected);
    BOOST_TEST(!kael::is_available(kael::Device("cuda", 0)));
    BOOST_TEST(!device_listed(kael::Device("cuda", 0)));
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(asking_for_cuda_explains_why_it_is_missing) {
    try {
        kael::require_device(kael::Device("cuda", 0));
        BOOST_ERROR("require_device(cuda) did not throw");
    } catch (const kael::DeviceError& error) {
        BOOST_CHECK_MESSAGE(contains(error.what(), "no simulated device present"), error.what());
    }
    BOOST_CHECK_THROW((void)kael::zeros({3}, kael::DType::F32, kael::Device("cuda", 0)),
                      kael::DeviceError);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(missing_dependency_is_a_load_error_naming_the_library) {
    const kael::PluginRecord record = require_record("missing_dependency");
    check_status(record, PluginStatus::LoadError);
    check_reason_mentions(record, "libkael_test_dependency.so: cannot open shared object file");
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(every_candidate_gets_exactly_one_record) {
    for (const std::string& name : kBrokenPluginNames) {
        const kael::PluginRecord record = require_record(name);
        BOOST_TEST(record.path == plugin_file(KAEL_TEST_BROKEN_DIR, name));
        BOOST_CHECK(record.status != PluginStatus::Loaded);
    }
    const kael::PluginRecord cpu = require_record("cpu");
    check_status(cpu, PluginStatus::Loaded);
    BOOST_TEST(cpu.selected);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(discovery_lists_the_env_folder_then_the_default_folder) {
    const std::vector<kael::DiscoveryStep> steps = kael::discovery_steps();
    BOOST_REQUIRE_EQUAL(steps.size(), 2U);
    BOOST_TEST(steps[0].origin == "KAEL_PLUGIN_PATH");
    BOOST_TEST(steps[0].folder == KAEL_TEST_BROKEN_DIR);
    BOOST_TEST(steps[0].exists);
    std::vector<std::string> expected_candidates;
    for (const std::string& name : kBrokenPluginNames) {
        expected_candidates.push_back(plugin_file(KAEL_TEST_BROKEN_DIR, name));
    }
    std::sort(expected_candidates.begin(), expected_candidates.end());
    BOOST_TEST(steps[0].candidates == expected_candidates, boost::test_tools::per_element());

    BOOST_TEST(steps[1].origin == "default");
    BOOST_TEST(contains(steps[1].folder, "kael/plugins"));
    BOOST_TEST(steps[1].exists);
    const kael::PluginRecord cpu = require_record("cpu");
    BOOST_TEST(cpu.path == plugin_file(steps[1].folder, "cpu"));
}

BOOST_AUTO_TEST_SUITE_END()
