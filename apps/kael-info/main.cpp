// kael-info: every plugin candidate with its status, and every usable device.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "kael/registry.h"

namespace {

constexpr int kSchemaVersion = 1;

std::string megabytes(std::uint64_t bytes) {
    if (bytes == 0) {
        return "unknown";
    }
    std::ostringstream text;
    text << std::fixed << std::setprecision(1)
         << static_cast<double>(bytes) / (1024.0 * 1024 * 1024) << " GiB";
    return text.str();
}

nlohmann::json to_json(const std::vector<kael::PluginRecord>& records,
                       const std::vector<kael::DeviceInfo>& devices,
                       const std::vector<kael::DiscoveryStep>& steps) {
    nlohmann::json document;
    document["schema_version"] = kSchemaVersion;
    document["core_version"] = kael::core_version();
    document["core_abi"] = kael::core_abi_version();
    document["search"] = nlohmann::json::array();
    for (const auto& step : steps) {
        document["search"].push_back({{"folder", step.folder},
                                      {"origin", step.origin},
                                      {"exists", step.exists},
                                      {"reason", step.reason},
                                      {"candidates", step.candidates}});
    }
    document["plugins"] = nlohmann::json::array();
    for (const auto& record : records) {
        document["plugins"].push_back(
            {{"path", record.path},
             {"origin", record.origin},
             {"name", record.name},
             {"version", record.version},
             {"kind", record.kind},
             {"device_type", record.device_type},
             {"priority", record.priority},
             {"abi", record.abi_major == 0 ? ""
                                           : std::to_string(record.abi_major) + "." +
                                                 std::to_string(record.abi_minor)},
             {"status", kael::to_string(record.status)},
             {"reason", record.reason},
             {"device_count", record.device_count},
             {"selected", record.selected},
             {"host_addressable", record.host_addressable},
             {"dlpack_device_type", record.dlpack_device_type},
             {"build_info", record.build_info}});
    }
    document["device_types"] = nlohmann::json::array();
    for (const auto& server : kael::device_type_servers()) {
        document["device_types"].push_back({{"device_type", server.device_type},
                                            {"plugin", server.plugin},
                                            {"reason", server.reason}});
    }
    document["warnings"] = kael::plugin_warnings();
    document["devices"] = nlohmann::json::array();
    for (const auto& device : devices) {
        document["devices"].push_back(
            {{"device", device.device.str()},
             {"name", device.name},
             {"memory_total", device.memory_total},
             {"memory_free", device.memory_free},
             {"capability", std::to_string(device.capability_major) + "." +
                                std::to_string(device.capability_minor)},
             {"plugin", device.plugin},
             {"emulated", device.emulated}});
    }
    return document;
}

void print_text(const std::vector<kael::PluginRecord>& records,
                const std::vector<kael::DeviceInfo>& devices,
                const std::vector<kael::DiscoveryStep>& steps, bool verbose) {
    std::cout << "kael " << kael::core_version() << " (plugin ABI " << kael::core_abi_version()
              << ")\n";
    if (verbose) {
        std::cout << "\nSearched folders, in order:\n";
        for (const auto& step : steps) {
            std::cout << "  " << step.folder << "  [" << step.origin << "]"
                      << (step.reason.empty() ? "" : "  (" + step.reason + ")") << "\n";
            for (const auto& candidate : step.candidates) {
                std::cout << "      " << candidate << "\n";
            }
        }
    } else {
        // A folder the user named that could not be searched is shown even without --verbose.
        bool header_printed = false;
        for (const auto& step : steps) {
            if (step.origin == "default" || step.reason.empty()) {
                continue;
            }
            if (!header_printed) {
                std::cout << "\nPlugin folders not searched:\n";
                header_printed = true;
            }
            std::cout << "  " << step.folder << "  [" << step.origin << "]  " << step.reason
                      << "\n";
        }
    }
    std::cout << "\nPlugins:\n";
    if (records.empty()) {
        std::cout << "  (none found)\n";
    }
    for (const auto& record : records) {
        std::cout << "  " << std::left << std::setw(20) << record.name << std::setw(22)
                  << kael::to_string(record.status);
        if (record.abi_major != 0) {
            std::cout << "ABI " << record.abi_major << "." << record.abi_minor;
        }
        if (!record.device_type.empty()) {
            std::cout << "  serves " << record.device_type << " (" << record.kind << ", "
                      << record.device_count << " device" << (record.device_count == 1 ? "" : "s")
                      << (record.selected ? ", selected" : "") << ")";
        }
        std::cout << "\n";
        if (!record.path.empty()) {
            std::cout << "      " << record.path << "\n";
        }
        if (!record.reason.empty()) {
            std::cout << "      reason: " << record.reason << "\n";
        }
        if (verbose && !record.build_info.empty()) {
            std::cout << "      build: " << record.build_info << "  version " << record.version
                      << "  priority " << record.priority << "\n";
        }
    }
    std::cout << "\nDevice types (KAEL_DEVICE_PLUGIN=type=plugin chooses another):\n";
    for (const auto& server : kael::device_type_servers()) {
        std::cout << "  " << std::left << std::setw(12) << server.device_type << std::setw(12)
                  << (server.plugin.empty() ? "(not served)" : server.plugin) << server.reason
                  << "\n";
    }
    if (const auto warnings = kael::plugin_warnings(); !warnings.empty()) {
        std::cout << "\nWarnings:\n";
        for (const auto& warning : warnings) {
            std::cout << "  " << warning << "\n";
        }
    }
    std::cout << "\nDevices:\n";
    if (devices.empty()) {
        std::cout << "  (none)\n";
    }
    for (const auto& device : devices) {
        std::cout << "  " << std::left << std::setw(8) << device.device.str() << device.name
                  << (device.emulated ? "  [emulated]" : "") << "\n      plugin " << device.plugin
                  << ", memory " << megabytes(device.memory_total) << " total, "
                  << megabytes(device.memory_free) << " free";
        if (device.capability_major != 0) {
            std::cout << ", compute capability " << device.capability_major << "."
                      << device.capability_minor;
        }
        std::cout << "\n";
    }
}

int run(int argc, char** argv) {
    CLI::App app{
        "kael-info: lists kael's device plugins, why each loaded or not, and the devices "
        "they serve"};
    app.set_version_flag("--version", "kael-info " + kael::core_version());
    bool json = false;
    bool verbose = false;
    std::vector<std::string> folders;
    std::vector<std::string> wanted;
    app.add_flag("--json", json, "print one JSON document (with a schema_version)");
    app.add_flag("-v,--verbose", verbose, "show every folder searched and build details");
    app.add_option("--plugin-path", folders, "extra plugin folder, searched first (repeatable)");
    app.add_option("--device", wanted,
                   "fail unless this device is available, e.g. cuda:0 (repeatable)");
    CLI11_PARSE(app, argc, argv);

    for (const auto& folder : folders) {
        kael::add_plugin_folder(folder);
    }
    const auto records = kael::plugins();
    const auto devices = kael::devices();
    const auto steps = kael::discovery_steps();
    if (json) {
        std::cout << to_json(records, devices, steps).dump(2) << "\n";
    } else {
        print_text(records, devices, steps, verbose);
    }
    for (const auto& name : wanted) {
        try {
            kael::require_device(kael::Device(name));  // an unparseable name is missing too
        } catch (const std::exception& error) {
            std::cerr << "kael-info: --device " << name << ": " << error.what() << "\n";
            return 2;
        }
    }
    if (devices.empty()) {
        std::cerr << "kael-info: no usable device: no plugin loaded with a device (is the cpu "
                     "plugin installed next to libkael_core in kael/plugins?)\n";
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        std::cerr << "kael-info: " << error.what() << "\n";
    } catch (...) {
        std::cerr << "kael-info: unknown error\n";
    }
    return 1;
}
