// kael-conformance: every op of the plugin ABI on one device, in every dtype and layout, compared
// with the cpu plugin (as ggml's test-backend-ops), then a report of which test cases ran wholly
// on the device's plugin and which kernel slots fell back to cpu.
#include <CLI/CLI.hpp>
#include <boost/test/framework.hpp>
#include <boost/test/results_collector.hpp>
#include <boost/test/tree/test_unit.hpp>
#include <boost/test/tree/traverse.hpp>
#include <boost/test/tree/visitor.hpp>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "conformance.h"
#include "kael/registry.h"
#include "report.h"

namespace {

namespace ut = boost::unit_test;

// Exit status when nothing could be compared: a bad option, an unknown device name, a device no
// plugin serves. Failed checks exit 1.
constexpr int kCannotRun = 2;

struct Options {
    std::string device;
    std::vector<std::string> plugin_folders;
    bool list = false;
    std::string filter;
    std::string json_file;
    std::string matmul_precision = "highest";
    std::vector<std::string> boost_arguments;  // everything not ours, in order
};

std::string default_device() {
    const char* name = std::getenv("KAEL_TEST_DEVICE");
    return name != nullptr && *name != '\0' ? name : "cuda";
}

// Fills options; returns -1 to go on, else the exit status (0 after --help).
int parse_options(int argc, char** argv, Options& options) {
    CLI::App app{
        "kael-conformance: runs every op of kael's plugin ABI on one device, in every dtype and "
        "layout, compares each result with the cpu plugin's, and reports per test case whether "
        "every kernel call ran on the device's plugin or which slots fell back to cpu"};
    app.set_version_flag("--version", "kael-conformance " + kael::core_version());
    options.device = default_device();
    app.add_option("--device", options.device,
                   "the device to test, e.g. cuda:0, toy:0, cpu (default: $KAEL_TEST_DEVICE, "
                   "else cuda)");
    app.add_option("--plugin-path", options.plugin_folders,
                   "a plugin folder searched before KAEL_PLUGIN_PATH (may be repeated)");
    app.add_flag("--list", options.list, "print the test cases' names (those --filter keeps)");
    app.add_option("--filter", options.filter,
                   "run only the cases whose name contains this (or one of several split by |)");
    app.add_option("--json", options.json_file, "also write the report to this file as JSON");
    app.add_option("--matmul-precision", options.matmul_precision,
                   "f32 products as kael::set_float32_matmul_precision: highest (default), high "
                   "or medium (TF32 on the cuda plugin; products then compared at rtol 2^-9)")
        ->check(CLI::IsMember({"highest", "high", "medium"}));
    app.allow_extras();
    app.footer(
        "Other arguments go to Boost.Test: --run_test=NAME[,NAME][:...] (either it or --filter "
        "selecting a case runs it), --log_level=message, --report_level=short, ...");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? 0 : kCannotRun;
    }
    options.boost_arguments = app.remaining();
    return -1;
}

std::vector<std::string> case_names() {
    struct Collector : ut::test_tree_visitor {
        std::vector<std::string> names;
        void visit(const ut::test_case& test) override { names.push_back(test.full_name()); }
    } collector;
    ut::traverse_test_tree(ut::framework::master_test_suite(), collector, true);
    return collector.names;
}

ut::test_suite* name_the_cases(int, char**) {
    ut::framework::master_test_suite().p_name.value = "kael-conformance";
    return nullptr;
}

struct CasesRun {
    bool ran = false;  // false: Boost.Test stopped before the first case (its --help, a bad
                       // argument, a --run_test that names no case)
    int status = 0;    // Boost.Test's result code
};

// Boost.Test's unit_test_main, with the observer added.
CasesRun run_cases(const std::vector<std::string>& arguments, ut::test_observer& observer) {
    std::vector<char*> argv;
    for (const std::string& argument : arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
    }
    argv.push_back(nullptr);
    CasesRun run;
    try {
        ut::framework::init(&name_the_cases, static_cast<int>(arguments.size()), argv.data());
        ut::framework::finalize_setup_phase();
        ut::framework::register_observer(observer);
        ut::framework::run();
        run.ran = true;
        run.status =
            ut::results_collector.results(ut::framework::master_test_suite().p_id).result_code();
    } catch (const ut::framework::nothing_to_test& nothing) {
        run.status = nothing.m_result_code == 0 ? 0 : kCannotRun;
    } catch (const std::exception& error) {
        std::cerr << "kael-conformance: " << error.what() << "\n";
        run.status = kCannotRun;
    }
    ut::framework::shutdown();
    return run;
}

// "type" or "type:N" whose type no loaded plugin declares: the Device anyway, so that
// require_device can say why (a plugin disabled, failing to load, or not found).
std::optional<kael::Device> undeclared_device(const std::string& name) {
    const std::size_t colon = name.find(':');
    const std::string digits = colon == std::string::npos ? "0" : name.substr(colon + 1);
    int index = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        index < 0) {
        return std::nullopt;
    }
    try {
        return kael::Device(name.substr(0, colon), index);
    } catch (const kael::ValueError&) {  // not a type name at all
        return std::nullopt;
    }
}

// The device to test (a valid name some plugin serves), or a message and kCannotRun.
int open_device(const std::string& name, kael::Device& device) {
    try {
        try {
            device = kael::Device(name);
        } catch (const kael::ValueError&) {
            const std::optional<kael::Device> undeclared = undeclared_device(name);
            if (!undeclared) {
                throw;
            }
            device = *undeclared;
        }
        kael::require_device(device);
    } catch (const kael::Error& error) {  // ValueError for the name, DeviceError with the reason
        std::cerr << "kael-conformance: nothing was compared: " << error.what() << "\n";
        return kCannotRun;
    }
    return 0;
}

int run(int argc, char** argv) {
    Options options;
    if (const int status = parse_options(argc, argv, options); status >= 0) {
        return status;
    }
    for (const std::string& folder : options.plugin_folders) {
        kael::add_plugin_folder(folder);
    }
    // Several alternatives split by '|', as the benchmarks' --filter takes them.
    std::vector<std::string> wanted;
    for (std::size_t start = 0;;) {
        const std::size_t bar = options.filter.find('|', start);
        wanted.push_back(options.filter.substr(start, bar - start));
        if (bar == std::string::npos) {
            break;
        }
        start = bar + 1;
    }
    std::vector<std::string> selected;
    for (const std::string& name : case_names()) {
        for (const std::string& part : wanted) {
            if (name.find(part) != std::string::npos) {
                selected.push_back(name);
                break;
            }
        }
    }
    if (selected.empty()) {
        std::cerr << "kael-conformance: no test case name contains '" << options.filter
                  << "' (--list shows them)\n";
        return kCannotRun;
    }
    if (options.list) {
        for (const std::string& name : selected) {
            std::cout << name << "\n";
        }
        return 0;
    }
    kael::Device device;
    if (open_device(options.device, device) != 0) {
        return kCannotRun;
    }
    std::ofstream json;
    if (!options.json_file.empty()) {
        json.open(options.json_file);  // now, so that a bad path fails before the run
        if (!json) {
            std::cerr << "kael-conformance: cannot write " << options.json_file << "\n";
            return kCannotRun;
        }
    }
    kael::set_float32_matmul_precision(
        options.matmul_precision == "high"     ? kael::MatmulPrecision::High
        : options.matmul_precision == "medium" ? kael::MatmulPrecision::Medium
                                               : kael::MatmulPrecision::Highest);
    conformance::set_device(device);
    conformance::RunReport report = conformance::start_report(device);

    std::vector<std::string> arguments = {argv[0]};
    arguments.insert(arguments.end(), options.boost_arguments.begin(),
                     options.boost_arguments.end());
    if (!options.filter.empty()) {
        std::string filter = "--run_test=";
        for (const std::string& name : selected) {
            filter += (&name == &selected.front() ? "" : ":") + name;
        }
        arguments.push_back(filter);
    }
    conformance::CaseObserver observer(report, std::cout);
    const CasesRun run = run_cases(arguments, observer);
    if (!run.ran) {
        return run.status;
    }
    conformance::print_report(report, std::cout);
    if (json.is_open()) {
        json << conformance::to_json(report).dump(2) << "\n";
    }
    return run.status == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        std::cerr << "kael-conformance: " << error.what() << "\n";
        return 1;
    }
}
