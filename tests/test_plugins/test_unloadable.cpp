// Files named like plugins that must never reach the loader (a truncated ELF is SIGBUS, a FIFO
// blocks forever), search path entries that are not folders, KAEL_PLUGINS with blanks and
// unknown names, and KAEL_CPU_BLAS naming such files. The files are made at test time by
// make_unloadable_plugins.cmake; each suite runs in its own process (see CMakeLists.txt).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>

#include "kael/ops.h"
#include "plugin_loading_support.h"

using kael::PluginStatus;
using namespace kael_test;

namespace {

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

void check_refused(const std::string& name, const std::string& why) {
    const kael::PluginRecord record = require_record(name);
    check_status(record, PluginStatus::LoadError);
    BOOST_TEST(record.path == plugin_file(KAEL_TEST_UNLOADABLE_DIR, name));
    check_reason_mentions(record, record.path + ": ");
    check_reason_mentions(record, why);
    BOOST_TEST(!record.selected);
}

}  // namespace

// KAEL_PLUGIN_PATH=<unloadable>:<unloadable>/not_a_folder,
// KAEL_PLUGINS=" cpu , truncated,short_tail,tiny, fifo ,fifo_link,folder , no_such_plugin "
BOOST_AUTO_TEST_SUITE(unloadable)

BOOST_AUTO_TEST_CASE(truncated_library_is_a_load_error_not_a_crash) {
    check_refused("truncated", "truncated or corrupt ELF file: program header");
    check_reason_mentions(require_record("truncated"), "the file has 100000 bytes");
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(library_missing_its_section_headers_is_a_load_error) {
    check_refused("short_tail", "truncated or corrupt ELF file: the section header table ends");
}

BOOST_AUTO_TEST_CASE(file_shorter_than_an_elf_header_is_a_load_error) {
    check_refused("tiny", "the ELF header ends at byte 64, but the file has 40 bytes");
}

BOOST_AUTO_TEST_CASE(fifo_is_never_opened) {
    check_refused("fifo", "is a FIFO, not a regular file");
    // stat follows the link: what counts is what it points to.
    check_refused("fifo_link", "is a FIFO, not a regular file");
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(folder_named_like_a_plugin_is_not_opened) {
    check_refused("folder", "is a directory, not a regular file");
}

BOOST_AUTO_TEST_CASE(search_path_entry_that_is_a_regular_file_is_reported) {
    const std::vector<kael::DiscoveryStep> steps = kael::discovery_steps();
    BOOST_REQUIRE_GE(steps.size(), 3U);
    BOOST_TEST(steps[0].folder == KAEL_TEST_UNLOADABLE_DIR);
    BOOST_TEST(steps[0].exists);
    BOOST_TEST(steps[0].reason == "");
    BOOST_TEST(steps[1].folder == std::string(KAEL_TEST_UNLOADABLE_DIR) + "/not_a_folder");
    BOOST_TEST(steps[1].origin == "KAEL_PLUGIN_PATH");
    BOOST_TEST(!steps[1].exists);
    BOOST_TEST(contains(steps[1].reason, "is a regular file, not a folder"), steps[1].reason);
    BOOST_TEST(steps[1].candidates.empty());
}

BOOST_AUTO_TEST_CASE(plugin_names_are_trimmed) {
    // " cpu " is cpu: with the blanks kept, the cpu plugin would be disabled and nothing would
    // run; " fifo " likewise, and the FIFO's record would say disabled.
    check_status(require_record("cpu"), PluginStatus::Loaded);
    BOOST_TEST(require_record("cpu").selected);
    for (const std::string name : {"fifo", "folder", "truncated"}) {
        BOOST_CHECK(require_record(name).status != PluginStatus::Disabled);
    }
    for (const kael::PluginRecord& record : records_named("emulated")) {
        check_status(record, PluginStatus::Disabled);
    }
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(unknown_name_in_kael_plugins_gets_a_not_found_record) {
    const kael::PluginRecord record = require_record("no_such_plugin");
    check_status(record, PluginStatus::NotFound);
    BOOST_TEST(kael::to_string(record.status) == "not found");
    BOOST_TEST(record.path == "");
    check_reason_mentions(record, "KAEL_PLUGINS=" + env_or_empty("KAEL_PLUGINS"));
    check_reason_mentions(record, "kael_plugin_no_such_plugin.so");
    // Names that were found get no such record.
    for (const kael::PluginRecord& other : kael::plugins()) {
        BOOST_CHECK(other.status != PluginStatus::NotFound || other.name == "no_such_plugin");
    }
}

BOOST_AUTO_TEST_CASE(loading_a_folder_later_keeps_one_not_found_record_last) {
    const std::vector<kael::PluginRecord> added = kael::load_plugin_folder(KAEL_TEST_BROKEN_DIR);
    for (const kael::PluginRecord& record : added) {
        BOOST_CHECK(record.status != PluginStatus::NotFound);
    }
    const std::vector<kael::PluginRecord> all = kael::plugins();
    BOOST_REQUIRE(!all.empty());
    BOOST_TEST(all.back().name == "no_such_plugin");
    BOOST_TEST(records_named("no_such_plugin").size() == 1U);
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()

// KAEL_PLUGINS=" -no_devices , ", KAEL_PLUGIN_PATH=<broken>
BOOST_AUTO_TEST_SUITE(trimmed_deny_list)

BOOST_AUTO_TEST_CASE(denied_name_with_blanks_is_disabled) {
    check_status(require_record("no_devices"), PluginStatus::Disabled);
    check_status(require_record("init_fails"), PluginStatus::InitFailed);
    check_status(require_record("cpu"), PluginStatus::Loaded);
    BOOST_TEST(records_named("").empty());
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()

// KAEL_CPU_BLAS=<an unloadable file>, KAEL_TEST_BLAS_REASON=<what the cpu plugin must say>
BOOST_AUTO_TEST_SUITE(blas_unloadable)

BOOST_AUTO_TEST_CASE(cpu_plugin_refuses_the_blas_and_uses_its_own_loops) {
    const std::string blas = env_or_empty("KAEL_CPU_BLAS");
    const std::string expected_reason = env_or_empty("KAEL_TEST_BLAS_REASON");
    BOOST_REQUIRE(!blas.empty() && !expected_reason.empty());
    const kael::PluginRecord cpu = require_record("cpu");
    check_status(cpu, PluginStatus::Loaded);
    BOOST_TEST(contains(cpu.build_info, "blas=none found, kael's own loops"), cpu.build_info);
    BOOST_TEST(contains(cpu.build_info, blas + ": " + expected_reason), cpu.build_info);
    // A matmul large enough for the BLAS path, on kael's loops, still right.
    const kael::Tensor product = kael::matmul(kael::ones({64, 64}), kael::ones({64, 64}));
    const std::vector<float> values = product.to_vector<float>();
    BOOST_TEST(values.size() == 64U * 64U);
    BOOST_TEST(std::all_of(values.begin(), values.end(), [](float v) { return v == 64.0F; }));
    check_core_still_works();
}

BOOST_AUTO_TEST_SUITE_END()
