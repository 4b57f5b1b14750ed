// Checked calls into plugins and the public views of the registry.
#include "backend.h"

#include <algorithm>
#include <cstring>

#include "kael/error.h"
#include "kael/plugin_kit.h"
#include "registry_state.h"

namespace kael {
namespace detail {

MemoryKind memory_kind(const kael_plugin* table) {
    if (KAEL_HAS_FIELD(table, dlpack_device_type)) {
        return {(table->memory_flags & KAEL_MEMORY_HOST_ADDRESSABLE) != 0,
                table->dlpack_device_type};
    }
    const bool host = table->kind == KAEL_PLUGIN_KIND_CPU;
    return {host, host ? 1 : 0};  // 1: DLPack's kDLCPU
}

namespace {

// The table's own bytes (up to its struct_size; the rest zero), with its model extension's
// kernels in their slots (plugin_kit.h's with_model_slots, which plugins give older cores).
kael_plugin with_extensions(const kael_plugin* table) {
    kael_plugin copy{};
    std::memcpy(&copy, table, std::min(table->struct_size, sizeof copy));
    return plugin::with_model_slots(copy);
}

}  // namespace

Backend::Backend(const kael_plugin* table, std::size_t record_index)
    : table_(with_extensions(table)),
      record_index_(record_index),
      memory_(memory_kind(table)) {}

const void* Backend::extension(const char* name, std::size_t least_size) const {
    if (!KAEL_HAS_SLOT(&table_, extension) || table_.extension == nullptr) {
        return nullptr;
    }
    const void* found = table_.extension(name);
    // Every extension struct starts with its struct_size.
    return found != nullptr && *static_cast<const std::size_t*>(found) >= least_size ? found
                                                                                     : nullptr;
}

bool Backend::served(kael_status status, const char* what) const {
    if (status == KAEL_STATUS_UNSUPPORTED) {
        return false;
    }
    check(status, what);
    return true;
}

void Backend::check(kael_status status, const char* what) const {
    if (status == KAEL_STATUS_OK) {
        return;
    }
    const char* raw = table_.last_error();
    if (status == KAEL_STATUS_INDEX_ERROR) {
        // The plugin's message names the user's op; a deferred check may surface here, later.
        throw IndexError(raw != nullptr ? raw : "index out of range");
    }
    const std::string message = std::string(what) + " on plugin '" + name() +
                                "' failed: " + (raw != nullptr ? raw : "no message");
    switch (status) {
        case KAEL_STATUS_INVALID_ARGUMENT: throw ValueError(message);
        case KAEL_STATUS_UNSUPPORTED: throw UnsupportedByPlugin(message);
        case KAEL_STATUS_OUT_OF_MEMORY: throw OutOfMemoryError(message);
        case KAEL_STATUS_DEVICE_ERROR: throw DeviceError(message);
        default: throw Error(message);
    }
}

void* Backend::allocate(int device, std::int64_t bytes) const {
    void* block = nullptr;
    check(table_.allocate(device, bytes, &block), "allocate");
    allocated_.store(true, std::memory_order_relaxed);
    return block;
}

void Backend::release(int device, void* block) const noexcept {
    if (state().shut_down) {
        return;  // the plugin already released everything in shutdown()
    }
    table_.release(device, block);
}

void Backend::copy_to_device(int device, void* target, const void* source,
                             std::int64_t bytes) const {
    check(table_.copy_to_device(device, target, source, bytes), "copy_to_device");
}

void Backend::copy_to_host(int device, void* target, const void* source, std::int64_t bytes) const {
    check(table_.copy_to_host(device, target, source, bytes), "copy_to_host");
}

void Backend::copy_within(int device, void* target, const void* source, std::int64_t bytes) const {
    check(table_.copy_within_device(device, target, source, bytes), "copy_within_device");
}

void Backend::synchronize(int device) const {
    check(table_.synchronize(device), "synchronize");
}

namespace {

std::string missing_reason(const RegistryState& registry, const std::string& type) {
    std::string reasons;
    for (const PluginRecord& record : registry.records) {
        if (record.device_type == type || record.name == type) {
            reasons += (reasons.empty() ? "" : "; ") + record.name + " (" + record.path +
                       "): " + to_string(record.status) +
                       (record.reason.empty() ? "" : ", " + record.reason);
        }
    }
    return reasons.empty() ? "no plugin for it was found in any plugin folder (see kael-info)"
                           : reasons;
}

}  // namespace

const Backend& backend_for(const Device& device) {
    RegistryState& registry = discovered();
    const Backend* backend =
        registry.serving_by_type[static_cast<std::size_t>(device.type_id())].load(
            std::memory_order_acquire);
    if (backend != nullptr && device.index >= 0 &&
        device.index < registry.records[backend->record_index()].device_count) {
        return *backend;
    }
    const std::lock_guard lock(registry.mutex);
    const std::string& type = device.type();
    const auto found = registry.serving.find(type);
    if (found == registry.serving.end()) {
        throw DeviceError("device " + device.str() +
                          " is not available: " + missing_reason(registry, type));
    }
    const PluginRecord& record = registry.records[found->second->record_index()];
    if (device.index < 0 || device.index >= record.device_count) {
        throw DeviceError("device " + device.str() + " is not available: plugin '" + record.name +
                          "' has " + std::to_string(record.device_count) + " device(s)");
    }
    return *found->second;
}

const Backend& cpu_backend() {
    return backend_for(kCPU);
}

void throw_missing_on_cpu(const Backend& host, const char* slot) {
    const PluginRecord& record = state().records[host.record_index()];
    throw TypeError(std::string("'") + slot + "' is missing from the cpu plugin (" + record.name +
                    " " + record.version + ", ABI " + std::to_string(record.abi_major) + "." +
                    std::to_string(record.abi_minor) + ", " + record.path +
                    "), the fallback for every device; the core has ABI " + core_abi_version() +
                    ": install the cpu plugin built with this core");
}

void count_fallback(const Backend& backend, const char* slot) {
    RegistryState& registry = state();
    const std::lock_guard lock(registry.fallback_mutex);
    ++registry.fallbacks[backend.name() + ":" + slot];
}

}  // namespace detail

std::string to_string(PluginStatus status) {
    switch (status) {
        case PluginStatus::Loaded: return "loaded";
        case PluginStatus::NoDevices: return "no devices";
        case PluginStatus::IncompatibleAbi: return "incompatible ABI";
        case PluginStatus::LoadError: return "load error";
        case PluginStatus::MissingEntry: return "missing entry symbol";
        case PluginStatus::InitFailed: return "init failed";
        case PluginStatus::Disabled: return "disabled";
        case PluginStatus::Duplicate: return "duplicate";
        case PluginStatus::NotFound: return "not found";
    }
    return "unknown";
}

std::vector<PluginRecord> plugins() {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    return registry.records;
}

std::vector<DiscoveryStep> discovery_steps() {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    return registry.steps;
}

std::vector<DeviceInfo> devices() {
    detail::RegistryState& registry = detail::discovered();
    const std::lock_guard lock(registry.mutex);
    std::vector<DeviceInfo> result;
    for (const std::string& type : detail::registered_types_locked(registry)) {
        const auto found = registry.serving.find(type);
        if (found == registry.serving.end()) {
            continue;
        }
        const detail::Backend& backend = *found->second;
        const PluginRecord& record = registry.records[backend.record_index()];
        for (int index = 0; index < record.device_count; ++index) {
            DeviceInfo info;
            info.device = Device(type, index);
            info.plugin = record.name;
            info.emulated = record.kind == "emulated";
            kael_device_properties properties{};
            properties.struct_size = sizeof(properties);
            if (backend.table()->device_properties(index, &properties) == KAEL_STATUS_OK) {
                properties.name[sizeof(properties.name) - 1] = '\0';
                info.name = properties.name;
                info.memory_total = properties.memory_total;
                info.memory_free = properties.memory_free;
                info.capability_major = properties.capability_major;
                info.capability_minor = properties.capability_minor;
            } else {
                info.name =
                    "(properties unavailable: " + std::string(backend.table()->last_error()) + ")";
            }
            result.push_back(info);
        }
    }
    return result;
}

bool is_available(const Device& device) {
    try {
        (void)detail::backend_for(device);
        return true;
    } catch (const DeviceError&) {
        return false;
    }
}

void require_device(const Device& device) {
    (void)detail::backend_for(device);
}

std::string core_abi_version() {
    return std::to_string(KAEL_ABI_MAJOR) + "." + std::to_string(KAEL_ABI_MINOR);
}

std::string core_version() {
    return KAEL_VERSION;
}

std::map<std::string, std::int64_t> fallback_counts() {
    detail::RegistryState& registry = detail::state();
    const std::lock_guard lock(registry.fallback_mutex);
    return registry.fallbacks;
}

void reset_fallback_counts() {
    detail::RegistryState& registry = detail::state();
    const std::lock_guard lock(registry.fallback_mutex);
    registry.fallbacks.clear();
}

void synchronize(const Device& device) {
    detail::backend_for(device).synchronize(device.index);
}

void set_num_threads(int count) {
    if (count < 1 || count > 256) {
        throw ValueError("set_num_threads: expected 1 to 256 threads, got " +
                         std::to_string(count));
    }
    detail::RegistryState& registry = detail::discovered();
    std::vector<const detail::Backend*> backends;
    {
        const std::lock_guard lock(registry.mutex);
        for (const detail::Backend& backend : registry.backends) {
            backends.push_back(&backend);
        }
    }
    for (const detail::Backend* backend : backends) {
        if (KAEL_HAS_SLOT(backend->table(), host_threads)) {
            std::int32_t current = 0;
            backend->check(backend->table()->host_threads(count, &current), "set_num_threads");
        }
    }
}

int num_threads() {
    const detail::Backend& cpu = detail::cpu_backend();
    std::int32_t current = 1;
    if (KAEL_HAS_SLOT(cpu.table(), host_threads)) {
        cpu.check(cpu.table()->host_threads(0, &current), "num_threads");
    }
    return current;
}

}  // namespace kael
