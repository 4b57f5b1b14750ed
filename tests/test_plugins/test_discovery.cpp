// Where discovery looks and what KAEL_PLUGINS, duplicates and API folders do to the records.
// Each suite runs in its own process with the environment CMakeLists.txt gives it.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>

#include "plugin_loading_support.h"

using kael::PluginStatus;
using namespace kael_test;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(deny_list)  // KAEL_PLUGINS=-no_devices

BOOST_AUTO_TEST_CASE(denied_plugin_is_disabled_and_the_rest_still_tried) {
    const kael::PluginRecord record = require_record("no_devices");
    check_status(record, PluginStatus::Disabled);
    check_reason_mentions(record, "KAEL_PLUGINS=-no_devices");
    BOOST_TEST(record.path == plugin_file(KAEL_TEST_BROKEN_DIR, "no_devices"));
    check_status(require_record("wrong_major"), PluginStatus::IncompatibleAbi);
    check_status(require_record("init_fails"), PluginStatus::InitFailed);
    check_status(require_record("cpu"), PluginStatus::Loaded);
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(allow_list)  // KAEL_PLUGINS=cpu,init_fails

BOOST_AUTO_TEST_CASE(only_listed_plugins_are_tried) {
    for (const std::string& name : kBrokenPluginNames) {
        const kael::PluginRecord record = require_record(name);
        if (name == "init_fails") {
            check_status(record, PluginStatus::InitFailed);
        } else {
            // Disabled, not LoadError: the broken files were never handed to the loader.
            check_status(record, PluginStatus::Disabled);
            check_reason_mentions(record, "KAEL_PLUGINS=cpu,init_fails");
        }
    }
    check_status(require_record("cpu"), PluginStatus::Loaded);
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(duplicate)  // KAEL_PLUGIN_PATH=<broken>:<duplicate>

BOOST_AUTO_TEST_CASE(second_plugin_with_a_taken_name_is_a_duplicate) {
    const std::vector<kael::PluginRecord> found = records_named("no_devices");
    BOOST_REQUIRE_EQUAL(found.size(), 2U);
    const std::string first_path = plugin_file(KAEL_TEST_BROKEN_DIR, "no_devices");
    BOOST_TEST(found[0].path == first_path);
    check_status(found[0], PluginStatus::NoDevices);
    BOOST_TEST(found[1].path == plugin_file(KAEL_TEST_DUPLICATE_DIR, "no_devices"));
    check_status(found[1], PluginStatus::Duplicate);
    check_reason_mentions(found[1], first_path);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(loading_a_folder_again_marks_every_plugin_duplicate) {
    const std::size_t records_before = kael::plugins().size();
    const std::vector<kael::PluginRecord> added = kael::load_plugin_folder(KAEL_TEST_BROKEN_DIR);
    BOOST_TEST(added.size() == kBrokenPluginNames.size());
    for (const kael::PluginRecord& record : added) {
        check_status(record, PluginStatus::Duplicate);
        check_reason_mentions(record, KAEL_TEST_BROKEN_DIR);
    }
    BOOST_TEST(kael::plugins().size() == records_before + added.size());
    const kael::DiscoveryStep last_step = kael::discovery_steps().back();
    BOOST_TEST(last_step.origin == "api");
    BOOST_TEST(last_step.folder == KAEL_TEST_BROKEN_DIR);
    check_status(records_named("no_devices").front(), PluginStatus::NoDevices);
    BOOST_TEST(!kael::is_available(kael::Device("cuda", 0)));
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(api_folder)  // KAEL_PLUGIN_PATH=<broken>, KAEL_PLUGINS=cpu,old_minor,no_devices

BOOST_AUTO_TEST_CASE(folders_added_before_first_use_are_scanned_first) {
    // Must be the first kael call in this process: discovery happens on first use.
    kael::add_plugin_folder(KAEL_TEST_OLD_MINOR_DIR);
    // A labelled folder (as Python's entry points give) keeps its place and shows its label.
    kael::add_plugin_folder("/nonexistent/kael-labelled", "entry point fake (fake-dist 1.0)");
    const std::vector<kael::DiscoveryStep> steps = kael::discovery_steps();
    BOOST_REQUIRE_EQUAL(steps.size(), 4U);
    BOOST_TEST(steps[0].origin == "api");
    BOOST_TEST(steps[0].folder == KAEL_TEST_OLD_MINOR_DIR);
    BOOST_TEST(steps[1].origin == "entry point fake (fake-dist 1.0)");
    BOOST_TEST(steps[1].reason == "does not exist");
    BOOST_TEST(steps[2].origin == "KAEL_PLUGIN_PATH");
    BOOST_TEST(steps[2].folder == KAEL_TEST_BROKEN_DIR);
    BOOST_TEST(steps[3].origin == "default");

    const kael::PluginRecord old_minor = require_record("old_minor");
    check_status(old_minor, PluginStatus::Loaded);
    BOOST_TEST(old_minor.origin == "api");
    BOOST_TEST(require_record("no_devices").origin == "KAEL_PLUGIN_PATH");
    // no_devices has the higher priority but no device, so old_minor serves cuda.
    BOOST_TEST(old_minor.selected);
    BOOST_TEST(!require_record("no_devices").selected);
    BOOST_TEST(kael::is_available(kael::Device("cuda", 0)));
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(not_cwd)  // working directory: the broken folder; no usable KAEL_PLUGIN_PATH

BOOST_AUTO_TEST_CASE(the_current_directory_is_never_searched) {
    const fs::path current = fs::current_path();
    // Without this the test would pass vacuously.
    BOOST_REQUIRE(fs::exists(current / "kael_plugin_no_devices.so"));
    for (const kael::DiscoveryStep& step : kael::discovery_steps()) {
        BOOST_TEST(!step.folder.empty());
        BOOST_CHECK_MESSAGE(fs::path(step.folder).is_absolute(), step.folder << " is relative");
        if (step.exists) {
            BOOST_CHECK_MESSAGE(!fs::equivalent(step.folder, current), step.folder << " is the cwd");
        }
    }
    for (const std::string& name : kBrokenPluginNames) {
        BOOST_CHECK_MESSAGE(records_named(name).empty(),
                            name << " was found in the current directory");
    }
    check_status(require_record("cpu"), PluginStatus::Loaded);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(missing_env_folders_are_recorded_as_absent) {
    const char* plugin_path = std::getenv("KAEL_PLUGIN_PATH");
    std::size_t env_steps = 0;
    for (const kael::DiscoveryStep& step : kael::discovery_steps()) {
        if (step.origin == "KAEL_PLUGIN_PATH") {
            ++env_steps;
            BOOST_TEST(!step.exists);
            BOOST_TEST(step.candidates.empty());
        }
    }
    BOOST_TEST(env_steps == (plugin_path == nullptr ? 0U : 1U));
}

BOOST_AUTO_TEST_SUITE_END()
