#include "report.h"

#include <algorithm>
#include <boost/test/results_collector.hpp>
#include <boost/test/tree/test_unit.hpp>
#include <iomanip>
#include <sstream>

namespace conformance {

namespace {

std::string counted(std::size_t count, const std::string& noun) {
    return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// Fallback counts are keyed "plugin:slot"; the report names the slot alone when the plugin is
// the one under test (it always is: only a device's own plugin falls back).
SlotCounts slots_of(const std::map<std::string, std::int64_t>& counts, const std::string& plugin) {
    SlotCounts slots;
    const std::string prefix = plugin + ":";
    for (const auto& [key, count] : counts) {
        slots[key.rfind(prefix, 0) == 0 ? key.substr(prefix.size()) : key] += count;
    }
    return slots;
}

// "elementwise x12, sort x3": most calls first.
std::string counts_text(const SlotCounts& slots) {
    std::vector<std::pair<std::string, std::int64_t>> ordered(slots.begin(), slots.end());
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string text;
    for (const auto& [slot, count] : ordered) {
        text += (text.empty() ? "" : ", ") + slot + " x" + std::to_string(count);
    }
    return text;
}

struct Totals {
    std::size_t on_plugin = 0;
    std::size_t with_fallback = 0;
    std::size_t failed = 0;
    SlotCounts fallbacks;
};

Totals totals_of(const RunReport& report) {
    Totals totals;
    for (const CaseRecord& record : report.cases) {
        (record.fallbacks.empty() ? totals.on_plugin : totals.with_fallback) += 1;
        totals.failed += record.passed ? 0 : 1;
        for (const auto& [slot, count] : record.fallbacks) {
            totals.fallbacks[slot] += count;
        }
    }
    return totals;
}

}  // namespace

RunReport start_report(const kael::Device& device) {
    RunReport report;
    report.device = device.str();
    for (const kael::DeviceInfo& info : kael::devices()) {
        if (info.device == device) {
            report.device_name = info.name;
            report.plugin = info.plugin;
        }
    }
    for (const kael::PluginRecord& record : kael::plugins()) {
        if (record.name == report.plugin && record.status == kael::PluginStatus::Loaded) {
            report.plugin_version = record.version;
            report.plugin_abi =
                std::to_string(record.abi_major) + "." + std::to_string(record.abi_minor);
        }
    }
    return report;
}

void CaseObserver::test_start(boost::unit_test::counter_t cases, boost::unit_test::test_unit_id) {
    out_ << "kael-conformance: " << counted(cases, "test case") << " on " << report_.device
         << " (plugin " << report_.plugin << " " << report_.plugin_version
         << "), each result against cpu's" << std::endl;
}

void CaseObserver::test_unit_start(const boost::unit_test::test_unit& unit) {
    if (unit.p_type == boost::unit_test::TUT_CASE) {
        kael::reset_fallback_counts();
        before_ = comparisons();
    }
}

// Called after the results collector has judged the case (observers finish in reverse
// priority order, and this one has the lowest).
void CaseObserver::test_unit_finish(const boost::unit_test::test_unit& unit,
                                    unsigned long elapsed) {
    if (unit.p_type != boost::unit_test::TUT_CASE) {
        return;
    }
    const boost::unit_test::test_results& results =
        boost::unit_test::results_collector.results(unit.p_id);
    CaseRecord record;
    record.name = unit.full_name();
    record.passed = results.passed();
    record.failed_checks = static_cast<std::int64_t>(results.p_assertions_failed);
    record.comparisons = comparisons().total - before_.total;
    record.seconds = static_cast<double>(elapsed) / 1e6;
    record.fallbacks = slots_of(kael::fallback_counts(), report_.plugin);
    report_.cases.push_back(std::move(record));
}

std::string summary_line(const RunReport& report) {
    const Totals totals = totals_of(report);
    std::ostringstream line;
    line << counted(report.cases.size(), "case") << " on " << report.device << " (plugin "
         << report.plugin << " " << report.plugin_version << "): " << totals.on_plugin
         << " ran on the plugin, " << totals.with_fallback << " used the cpu fallback";
    if (!totals.fallbacks.empty()) {
        line << " for: " << counts_text(totals.fallbacks);
    }
    line << "; " << totals.failed << " failed";
    return line.str();
}

void print_report(const RunReport& report, std::ostream& out) {
    std::size_t width = 0;
    for (const CaseRecord& record : report.cases) {
        width = std::max(width, record.name.size());
    }
    out << "\nkael-conformance report: " << report.device << " (" << report.device_name
        << "), plugin " << report.plugin << " " << report.plugin_version << ", ABI "
        << report.plugin_abi << "\n";
    for (const CaseRecord& record : report.cases) {
        out << "  " << std::left << std::setw(7) << (record.passed ? "ok" : "FAILED")
            << std::setw(static_cast<int>(width) + 2) << record.name << std::right << std::setw(8)
            << record.comparisons << " comparisons  " << std::fixed << std::setprecision(1)
            << std::setw(6) << record.seconds << " s  ";
        if (!record.passed) {
            out << counted(static_cast<std::size_t>(record.failed_checks), "failed check") << "; ";
        }
        out << (record.fallbacks.empty() ? "all on the plugin"
                                         : "cpu fallback: " + counts_text(record.fallbacks))
            << "\n";
    }
    out << summary_line(report) << "\n";
}

nlohmann::json to_json(const RunReport& report) {
    const Totals totals = totals_of(report);
    nlohmann::json cases = nlohmann::json::array();
    for (const CaseRecord& record : report.cases) {
        cases.push_back({{"name", record.name},
                         {"passed", record.passed},
                         {"failed_checks", record.failed_checks},
                         {"comparisons", record.comparisons},
                         {"seconds", record.seconds},
                         {"on_plugin", record.fallbacks.empty()},
                         {"fallback", record.fallbacks}});
    }
    return {
        {"schema_version", 1},
        {"core_version", kael::core_version()},
        {"device", report.device},
        {"device_name", report.device_name},
        {"plugin",
         {{"name", report.plugin}, {"version", report.plugin_version}, {"abi", report.plugin_abi}}},
        {"cases", cases},
        {"summary",
         {{"cases", report.cases.size()},
          {"on_plugin", totals.on_plugin},
          {"used_fallback", totals.with_fallback},
          {"failed", totals.failed},
          {"fallback", totals.fallbacks},
          {"text", summary_line(report)}}}};
}

}  // namespace conformance
