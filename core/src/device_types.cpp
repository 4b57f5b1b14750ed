// Device types as the plugins declare them: the registered names, which plugin serves each and
// why, choosing another one, and the DLPack memory types the plugins declare.
#include <algorithm>

#include "backend.h"
#include "kael/error.h"
#include "registry_state.h"

namespace kael {
namespace detail {

// Types of every plugin whose table was admitted (with or without devices); "cpu" first.
std::vector<std::string> registered_types_locked(const RegistryState& registry) {
    std::vector<std::string> types;
    for (const Backend& backend : registry.backends) {
        const std::string& type = registry.records[backend.record_index()].device_type;
        if (type != "cpu" && std::find(types.begin(), types.end(), type) == types.end()) {
            types.push_back(type);
        }
    }
    std::sort(types.begin(), types.end());
    types.insert(types.begin(), "cpu");
    return types;
}

}  // namespace detail

std::vector<std::string> registered_device_types() {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    return detail::registered_types_locked(registry);
}

std::vector<DeviceTypeServer> device_type_servers() {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    std::vector<DeviceTypeServer> servers;
    for (const std::string& type : detail::registered_types_locked(registry)) {
        DeviceTypeServer server;
        server.device_type = type;
        const auto found = registry.serving.find(type);
        server.plugin = found == registry.serving.end() ? "" : found->second->name();
        const auto reason = registry.serving_reason.find(type);
        server.reason = reason != registry.serving_reason.end() ? reason->second
                        : server.plugin.empty() ? "no plugin of this type has devices"
                                                : "";
        servers.push_back(server);
    }
    return servers;
}

std::vector<std::string> plugin_warnings() {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    std::vector<std::string> warnings;
    const auto cpu = registry.serving.find("cpu");
    if (cpu == registry.serving.end()) {
        warnings.push_back(
            "no cpu plugin is loaded: kael has no host device and no fallback "
            "for kernels a device plugin lacks");
    } else {
        const PluginRecord& record = registry.records[cpu->second->record_index()];
        if (record.abi_minor < KAEL_ABI_MINOR) {
            warnings.push_back("the cpu plugin (" + record.path + ") has ABI " +
                               std::to_string(record.abi_major) + "." +
                               std::to_string(record.abi_minor) + ", older than the core's " +
                               core_abi_version() +
                               ": it is the fallback for every device, and "
                               "calls needing a newer slot will fail; install the cpu plugin "
                               "built with this core");
        }
    }
    warnings.insert(warnings.end(), registry.choice_warnings.begin(),
                    registry.choice_warnings.end());
    return warnings;
}

void set_device_plugin(const std::string& device_type, const std::string& plugin) {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    std::string candidates;
    const detail::Backend* chosen = nullptr;
    for (const detail::Backend& backend : registry.backends) {
        const PluginRecord& record = registry.records[backend.record_index()];
        if (record.device_type != device_type || record.device_count <= 0) {
            continue;
        }
        candidates += (candidates.empty() ? "'" : ", '") + record.name + "'";
        if (record.name == plugin) {
            chosen = &backend;
        }
    }
    if (chosen == nullptr) {
        throw ValueError("set_device_plugin: no loaded plugin '" + plugin +
                         "' with devices of type '" + device_type + "' (plugins that have: " +
                         (candidates.empty() ? std::string("none") : candidates) +
                         "; see kael-info)");
    }
    const auto current = registry.serving.find(device_type);
    if (current != registry.serving.end() && current->second != chosen &&
        current->second->has_allocated()) {
        throw Error("set_device_plugin: plugin '" + current->second->name() +
                    "' already holds memory for device type '" + device_type +
                    "'; choose the plugin before the first tensor on " + device_type +
                    " (or with KAEL_DEVICE_PLUGIN=" + device_type + "=" + plugin + ")");
    }
    registry.chosen[device_type] = plugin;
    detail::select_backends(registry);
}

int dlpack_device_type(const Device& device) {
    return detail::backend_for(device).dlpack_device_type();
}

std::optional<Device> device_for_dlpack(int dlpack_type, int device_id) {
    if (dlpack_type == 0) {
        return std::nullopt;
    }
    detail::RegistryState& registry = detail::discovered();
    std::string type;
    {
        const std::lock_guard lock(registry.mutex);
        for (const auto& [name, backend] : registry.serving) {
            // The host's own device wins when another plugin's memory is host memory too.
            if (backend->dlpack_device_type() == dlpack_type && (type.empty() || name == "cpu")) {
                type = name;
            }
        }
    }
    if (type.empty()) {
        return std::nullopt;
    }
    return Device(type, device_id);
}

}  // namespace kael
