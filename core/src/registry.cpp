// Plugin discovery: every candidate file gets a status record; loaded plugins are never unloaded.
#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

#include "backend.h"
#include "kael/error.h"
#include "kael/loadable_file.h"
#include "registry_state.h"

namespace kael {
namespace fs = std::filesystem;

namespace detail {

RegistryState& state() {
    // Leaked on purpose: tensors in static storage may release blocks after main returns.
    static auto* registry = new RegistryState();
    return *registry;
}

namespace {

bool looks_like_plugin(const fs::path& file) {
    const std::string name = file.filename().string();
    return name.starts_with(KAEL_PLUGIN_FILE_PREFIX) && name.ends_with(".so") &&
           name.size() > std::string(KAEL_PLUGIN_FILE_PREFIX).size() + 3;
}

std::string plugin_name_of(const fs::path& file) {
    const std::string name = file.filename().string();
    const auto prefix = std::string(KAEL_PLUGIN_FILE_PREFIX).size();
    return name.substr(prefix, name.size() - prefix - 3);
}

std::string kind_name(kael_plugin_kind kind) {
    switch (kind) {
        case KAEL_PLUGIN_KIND_CPU: return "cpu";
        case KAEL_PLUGIN_KIND_GPU: return "gpu";
        case KAEL_PLUGIN_KIND_EMULATED: return "emulated";
        default: return "unknown";
    }
}

std::string plugin_message(const kael_plugin* table) {
    try {
        const char* message = table->last_error != nullptr ? table->last_error() : nullptr;
        return message != nullptr && *message != '\0' ? message : "no message from the plugin";
    } catch (...) {
        return "the plugin's last_error threw";
    }
}

// Boost.DLL wraps dlerror() in its own text and appends an unrelated errno message ("Bad file
// descriptor"); the loader's own words are what a user can act on.
std::string loader_message(const std::string& what) {
    const std::string marker = "(dlerror system message: ";
    const std::size_t start = what.find(marker);
    const std::size_t end = what.rfind(')');
    if (start == std::string::npos || end == std::string::npos || end < start + marker.size()) {
        return what;
    }
    return what.substr(start + marker.size(), end - start - marker.size());
}

constexpr std::size_t kRequiredTableSize = offsetof(kael_plugin, synchronize) + sizeof(void*);

// Fills the record from the table and runs init and probe; returns whether it can serve.
bool admit(const kael_plugin* table, PluginRecord& record) {
    record.abi_major = table->abi_major;
    record.abi_minor = table->abi_minor;
    if (table->abi_major != KAEL_ABI_MAJOR) {
        record.status = PluginStatus::IncompatibleAbi;
        record.reason = "plugin ABI " + std::to_string(table->abi_major) + "." +
                        std::to_string(table->abi_minor) + ", core ABI " + core_abi_version() +
                        " (the major versions must match)";
        return false;
    }
    if (table->struct_size < kRequiredTableSize) {
        record.status = PluginStatus::IncompatibleAbi;
        record.reason = "plugin table has " + std::to_string(table->struct_size) +
                        " bytes, fewer than the required " + std::to_string(kRequiredTableSize);
        return false;
    }
    const std::string file_name = record.name;
    record.name = table->name != nullptr ? table->name : "";
    if (record.name != file_name) {
        record.status = PluginStatus::LoadError;
        record.reason = "the plugin calls itself '" + record.name +
                        "' but its file is named for '" + file_name +
                        "'; KAEL_PLUGINS and duplicate checks rely on them matching";
        record.name = file_name;
        return false;
    }
    record.version = table->version != nullptr ? table->version : "";
    record.kind = kind_name(table->kind);
    record.device_type = table->device_type != nullptr ? table->device_type : "";
    record.build_info = table->build_info != nullptr ? table->build_info : "";
    record.priority = table->priority;
    const MemoryKind memory = memory_kind(table);
    record.host_addressable = memory.host_addressable;
    record.dlpack_device_type = memory.dlpack_device_type;
    for (const auto* slot : {(const void*)table->probe, (const void*)table->device_properties,
                             (const void*)table->allocate, (const void*)table->release,
                             (const void*)table->copy_to_device, (const void*)table->copy_to_host,
                             (const void*)table->copy_within_device,
                             (const void*)table->synchronize, (const void*)table->last_error}) {
        if (slot == nullptr) {
            record.status = PluginStatus::LoadError;
            record.reason = "a required slot of the plugin table is NULL";
            return false;
        }
    }
    try {
        (void)Device(record.device_type, 0);  // registers the plugin's type name
    } catch (const ValueError& error) {
        record.status = PluginStatus::LoadError;
        record.reason = error.what();
        return false;
    }
    try {
        if (table->init != nullptr && table->init() != KAEL_STATUS_OK) {
            record.status = PluginStatus::InitFailed;
            record.reason = "init failed: " + plugin_message(table);
            return false;
        }
        std::int32_t count = 0;
        const char* reason = nullptr;
        if (table->probe(&count, &reason) != KAEL_STATUS_OK) {
            record.status = PluginStatus::InitFailed;
            record.reason = "probe failed: " + plugin_message(table);
            return false;
        }
        record.device_count = std::max(0, count);
        if (count <= 0) {
            record.status = PluginStatus::NoDevices;
            record.reason =
                reason != nullptr && *reason != '\0' ? reason : "the plugin found no devices";
            return true;
        }
    } catch (const std::exception& error) {
        record.status = PluginStatus::InitFailed;
        record.reason =
            std::string("the plugin threw a C++ exception across the ABI: ") + error.what();
        return false;
    } catch (...) {
        record.status = PluginStatus::InitFailed;
        record.reason = "the plugin threw an unknown exception across the ABI";
        return false;
    }
    record.status = PluginStatus::Loaded;
    return true;
}

void try_candidate(RegistryState& registry, const fs::path& file, const std::string& origin) {
    PluginRecord record;
    record.path = file.string();
    record.origin = origin;
    record.name = plugin_name_of(file);
    if (!enabled_by_env(record.name)) {
        record.status = PluginStatus::Disabled;
        record.reason = "disabled by KAEL_PLUGINS=" + env("KAEL_PLUGINS");
        registry.records.push_back(record);
        return;
    }
    // A copy that loaded shadows this one, as does the same file seen before; a corrupt or
    // failing file earlier on the path must not leave the name without a plugin.
    for (const PluginRecord& other : registry.records) {
        const bool loaded =
            other.status == PluginStatus::Loaded || other.status == PluginStatus::NoDevices;
        const bool same_file = other.status != PluginStatus::Disabled &&
                               other.status != PluginStatus::Duplicate && other.path == record.path;
        if (other.name == record.name && (loaded || same_file)) {
            record.status = PluginStatus::Duplicate;
            record.reason =
                "a plugin named '" + record.name + "' was already found at " + other.path;
            registry.records.push_back(record);
            return;
        }
    }
    // Checked before the loader sees it: a FIFO would block it and a truncated ELF file is SIGBUS.
    if (const std::string problem = loadable::why_not_loadable(record.path); !problem.empty()) {
        record.status = PluginStatus::LoadError;
        record.reason = record.path + ": " + problem;
        registry.records.push_back(record);
        return;
    }
    boost::dll::shared_library library;
    try {
        library.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& error) {
        record.status = PluginStatus::LoadError;
        record.reason = loader_message(error.what());
        registry.records.push_back(record);
        return;
    }
    if (!library.has(KAEL_PLUGIN_ENTRY_NAME)) {
        record.status = PluginStatus::MissingEntry;
        record.reason = std::string("the library does not export ") + KAEL_PLUGIN_ENTRY_NAME;
        registry.libraries->push_back(std::move(library));
        registry.records.push_back(record);
        return;
    }
    const auto query =
        library.get<const kael_plugin*(std::uint32_t, std::uint32_t)>(KAEL_PLUGIN_ENTRY_NAME);
    registry.libraries->push_back(std::move(library));
    const kael_plugin* table = nullptr;
    try {
        table = query(KAEL_ABI_MAJOR, KAEL_ABI_MINOR);
    } catch (...) {
        table = nullptr;
    }
    if (table == nullptr) {
        record.status = PluginStatus::LoadError;
        record.reason = std::string(KAEL_PLUGIN_ENTRY_NAME) + " returned no plugin table";
        registry.records.push_back(record);
        return;
    }
    const bool usable = admit(table, record);
    registry.records.push_back(record);
    if (usable) {
        registry.backends.emplace_back(table, registry.records.size() - 1);
    }
}

void scan_folder(RegistryState& registry, const std::string& folder, const std::string& origin) {
    DiscoveryStep step;
    step.folder = folder;
    step.origin = origin;
    std::error_code error;
    const fs::file_status status = fs::status(folder, error);  // follows symbolic links
    step.exists = fs::is_directory(status);
    if (!fs::exists(status)) {
        step.reason = "does not exist";
    } else if (fs::is_regular_file(status)) {
        step.reason = "is a regular file, not a folder (list folders, not plugin files)";
    } else if (!step.exists) {
        step.reason = "is not a folder";
    }
    std::vector<fs::path> files;
    if (step.exists) {
        for (const auto& entry : fs::directory_iterator(folder, error)) {
            if (looks_like_plugin(entry.path())) {
                files.push_back(entry.path());
            }
        }
        if (error) {
            step.reason = "cannot be read: " + error.message();
        }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        step.candidates.push_back(file.string());
        try_candidate(registry, file, origin);
    }
    registry.steps.push_back(step);
}

void shutdown_plugins() {
    RegistryState& registry = state();
    const std::lock_guard lock(registry.mutex);
    registry.shut_down = true;
    for (const Backend& backend : registry.backends) {
        if (KAEL_HAS_SLOT(backend.table(), shutdown)) {
            try {
                backend.table()->shutdown();
            } catch (...) {
            }
        }
    }
}

std::string default_plugin_folder() {
    const fs::path core = boost::dll::this_line_location();
    return fs::weakly_canonical(core.parent_path() / "kael" / "plugins").string();
}

}  // namespace

// Per device type: the plugin set_device_plugin or KAEL_DEVICE_PLUGIN chose when it has devices
// for that type, else the highest priority among those with devices.
void select_backends(RegistryState& registry) {
    registry.serving.clear();
    registry.serving_reason.clear();
    registry.choice_warnings.clear();
    for (PluginRecord& record : registry.records) {
        record.selected = false;
    }
    const std::map<std::string, std::string> from_env = plugin_choices_from_env();
    for (Backend& backend : registry.backends) {
        const PluginRecord& record = registry.records[backend.record_index()];
        auto found = registry.serving.find(record.device_type);
        if (record.device_count > 0 &&
            (found == registry.serving.end() ||
             registry.records[found->second->record_index()].priority < record.priority)) {
            registry.serving[record.device_type] = &backend;
            registry.serving_reason[record.device_type] =
                "highest priority with devices (" + std::to_string(record.priority) + ")";
        }
    }
    for (const auto& [choices, origin] : {std::pair{from_env, "KAEL_DEVICE_PLUGIN"},
                                          std::pair{registry.chosen, "set_device_plugin"}}) {
        for (const auto& [type, plugin] : choices) {
            bool honoured = false;
            for (Backend& backend : registry.backends) {
                const PluginRecord& record = registry.records[backend.record_index()];
                if (record.name == plugin && record.device_type == type &&
                    record.device_count > 0) {
                    registry.serving[type] = &backend;
                    registry.serving_reason[type] = std::string("chosen by ") + origin;
                    honoured = true;
                }
            }
            if (!honoured) {
                const auto kept = registry.serving.find(type);
                registry.serving_reason[type] =
                    std::string(origin) + " names plugin '" + plugin + "' for '" + type +
                    "', but no loaded plugin of that name has devices of that type; " +
                    (kept == registry.serving.end() ? std::string("none serves it")
                                                    : "'" + kept->second->name() + "' serves it");
                registry.choice_warnings.push_back(registry.serving_reason[type]);
            }
        }
    }
    for (const auto& [type, backend] : registry.serving) {
        registry.records[backend->record_index()].selected = true;
    }
    // Each entry is stored once, so a concurrent backend_for never sees a type unserved.
    std::array<Backend*, std::tuple_size_v<decltype(registry.serving_by_type)>> next{};
    for (const auto& [type, backend] : registry.serving) {
        next[static_cast<std::size_t>(Device(type, 0).type_id())] = backend;
    }
    for (std::size_t id = 0; id < next.size(); ++id) {
        registry.serving_by_type[id].store(next[id], std::memory_order_release);
    }
}

RegistryState& discovered() {
    RegistryState& registry = state();
    std::call_once(registry.discovered, [&registry] {
        const std::lock_guard lock(registry.mutex);
        for (const auto& [folder, origin] : registry.api_folders) {
            scan_folder(registry, folder, origin);
        }
        for (const std::string& folder : split(env("KAEL_PLUGIN_PATH"), ':')) {
            scan_folder(registry, folder, "KAEL_PLUGIN_PATH");
        }
        scan_folder(registry, default_plugin_folder(), "default");
        add_not_found_records(registry);
        select_backends(registry);
        std::atexit(shutdown_plugins);
    });
    return registry;
}

std::vector<PluginRecord> load_folder_now(const std::string& folder, const std::string& origin) {
    RegistryState& registry = discovered();
    const std::lock_guard lock(registry.mutex);
    drop_not_found_records(registry);
    const std::size_t before = registry.records.size();
    scan_folder(registry, folder, origin);
    std::vector<PluginRecord> added(registry.records.begin() + static_cast<std::ptrdiff_t>(before),
                                    registry.records.end());
    add_not_found_records(registry);
    select_backends(registry);
    return added;
}

}  // namespace detail

void add_plugin_folder(const std::string& folder) { add_plugin_folder(folder, "api"); }

void add_plugin_folder(const std::string& folder, const std::string& origin) {
    detail::RegistryState& registry = detail::state();
    const std::lock_guard lock(registry.mutex);
    registry.api_folders.emplace_back(folder, origin.empty() ? "api" : origin);
}

std::vector<PluginRecord> load_plugin_folder(const std::string& folder) {
    return detail::load_folder_now(folder, "api");
}

std::vector<PluginRecord> load_plugin_folder(const std::string& folder, const std::string& origin) {
    return detail::load_folder_now(folder, origin.empty() ? "api" : origin);
}

}  // namespace kael
