#pragma once
// The report of a kael-conformance run: per test case, whether it passed, how many device-vs-cpu
// comparisons it made and which kernel slots of the device's plugin fell back to the cpu plugin
// (kael::fallback_counts, reset before each case); then a summary over all cases.
#include <boost/test/tree/observer.hpp>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "conformance.h"

namespace conformance {

// Kernel calls per slot ("elementwise", "sort", ...) that the cpu plugin served.
using SlotCounts = std::map<std::string, std::int64_t>;

struct CaseRecord {
    std::string name;  // the Boost.Test path, as --run_test takes it
    bool passed = true;
    std::int64_t failed_checks = 0;
    std::int64_t comparisons = 0;
    double seconds = 0;
    SlotCounts fallbacks;  // empty: every kernel call ran on the device's plugin
};

struct RunReport {
    std::string device;
    std::string device_name;  // as the plugin names it
    std::string plugin;
    std::string plugin_version;
    std::string plugin_abi;
    std::vector<CaseRecord> cases;
};

// The device and the plugin that serves it; no cases yet. The device must be available.
[[nodiscard]] RunReport start_report(const kael::Device& device);

// Adds one CaseRecord to the report per test case that runs.
class CaseObserver : public boost::unit_test::test_observer {
public:
    CaseObserver(RunReport& report, std::ostream& out) : report_(report), out_(out) {}
    void test_start(boost::unit_test::counter_t cases, boost::unit_test::test_unit_id) override;
    void test_unit_start(const boost::unit_test::test_unit& unit) override;
    void test_unit_finish(const boost::unit_test::test_unit& unit, unsigned long elapsed) override;

private:
    RunReport& report_;
    std::ostream& out_;
    Comparisons before_;
};

// "<N> cases on <device> (plugin <name> <version>): <A> ran on the plugin, <B> used the cpu
// fallback for: elementwise x12, sort x3; <F> failed"
[[nodiscard]] std::string summary_line(const RunReport& report);
// One line per case, then the summary line.
void print_report(const RunReport& report, std::ostream& out);
[[nodiscard]] nlohmann::json to_json(const RunReport& report);

}  // namespace conformance
