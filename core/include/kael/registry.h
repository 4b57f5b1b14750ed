#pragma once
// Plugin discovery and the status record of every candidate. The same records are shown by
// kael-info, the C++ API and Python.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kael/device.h"

namespace kael {

enum class PluginStatus {
    Loaded,            // loaded and serving at least one device
    NoDevices,         // loaded, 0 devices; reason says why
    IncompatibleAbi,   // ABI major differs; reason gives both versions
    LoadError,         // the loader failed; reason is its message (e.g. a missing dependency),
                       // or the file was not given to it: not a regular file, a truncated ELF
    MissingEntry,      // the file loaded but does not export kael_plugin_query
    InitFailed,        // init() or probe() returned an error or threw; reason is its message
    Disabled,          // excluded by KAEL_PLUGINS
    Duplicate,         // another plugin with the same name was found first
    NotFound,          // named in KAEL_PLUGINS, but no candidate file has that name; path is ""
};
[[nodiscard]] std::string to_string(PluginStatus status);

struct PluginRecord {
    std::string path;          // the file that was tried
    std::string origin;        // its folder's DiscoveryStep::origin; "" for NotFound
    std::string name;          // from the table, or from the file name when it did not load
    std::string version;
    std::string kind;          // "cpu", "gpu", "emulated", or "" when unknown
    std::string device_type;   // the Device type it declares: "cpu", "cuda", "toy"...; or ""
    std::string build_info;
    int priority = 0;
    std::uint32_t abi_major = 0;  // the plugin's; 0 when unknown
    std::uint32_t abi_minor = 0;
    PluginStatus status = PluginStatus::LoadError;
    std::string reason;        // empty for Loaded
    int device_count = 0;
    bool selected = false;     // serves its device type (see device_type_servers)
    bool host_addressable = false;  // the core may touch its memory directly
    int dlpack_device_type = 0;     // DLPack's DLDeviceType of its memory; 0 for none
};

// Which plugin serves a device type, and why: "highest priority with devices (100)", "chosen
// by KAEL_DEVICE_PLUGIN", "chosen by set_device_plugin", or why a choice was not honoured.
struct DeviceTypeServer {
    std::string device_type;
    std::string plugin;  // "" when none serves it
    std::string reason;
};

struct DeviceInfo {
    Device device;
    std::string name;
    std::uint64_t memory_total = 0;
    std::uint64_t memory_free = 0;
    int capability_major = 0;
    int capability_minor = 0;
    std::string plugin;        // the plugin serving it
    bool emulated = false;
};

struct DiscoveryStep {
    std::string folder;
    std::string origin;        // "api" (or the label given to add_plugin_folder),
                               // "KAEL_PLUGIN_PATH", "default"
    bool exists = false;       // is a folder (following symbolic links)
    std::string reason;        // why it was not searched, or not fully: "does not exist",
                               // "is a regular file, not a folder ...", "cannot be read: ..."
    std::vector<std::string> candidates;
};

// Loads plugins (once) from: folders given to add_plugin_folder before first use, then
// KAEL_PLUGIN_PATH, then <dir of libkael_core>/kael/plugins. Never the current directory.
void add_plugin_folder(const std::string& folder);
// The same, with the origin discovery_steps() and plugins() show for it instead of "api": who
// asked, e.g. "entry point kael_cuda (kael-cuda 0.1.0)" for a Python distribution's folder.
void add_plugin_folder(const std::string& folder, const std::string& origin);
// Loads one more folder now, after discovery; returns the records it added.
std::vector<PluginRecord> load_plugin_folder(const std::string& folder);
std::vector<PluginRecord> load_plugin_folder(const std::string& folder, const std::string& origin);

[[nodiscard]] std::vector<PluginRecord> plugins();
[[nodiscard]] std::vector<DeviceInfo> devices();
[[nodiscard]] std::vector<DiscoveryStep> discovery_steps();
[[nodiscard]] bool is_available(const Device& device);
// Throws DeviceError with the reason when no plugin serves the device.
void require_device(const Device& device);
[[nodiscard]] std::vector<DeviceTypeServer> device_type_servers();
// What a user should fix even though kael runs: no cpu plugin, a cpu plugin older than the core
// (the fallback for every device then lacks the newer slots), a plugin choice not honoured.
[[nodiscard]] std::vector<std::string> plugin_warnings();
// Makes plugin serve device_type from now on, as KAEL_DEVICE_PLUGIN="type=plugin" does at
// discovery. ValueError unless plugin is loaded, declares that type and has devices; Error when
// the type's current plugin already allocated memory (its tensors would change plugin).
void set_device_plugin(const std::string& device_type, const std::string& plugin);
// DLPack: the DLDeviceType of a device's memory (0: none), and the device of a DLPack
// (device_type, device_id) pair, when some serving plugin declares that memory type.
[[nodiscard]] int dlpack_device_type(const Device& device);
[[nodiscard]] std::optional<Device> device_for_dlpack(int dlpack_device_type, int device_id);
[[nodiscard]] std::string core_abi_version();
[[nodiscard]] std::string core_version();

// Kernel calls served by the cpu plugin through copies because the device's plugin left the
// slot empty, keyed "plugin:slot".
[[nodiscard]] std::map<std::string, std::int64_t> fallback_counts();
void reset_fallback_counts();

// Waits for all queued work on the device.
void synchronize(const Device& device);

// Host threads the plugins' kernels may use, as torch.set_num_threads: every loaded plugin with
// the host_threads slot (the cpu plugin: its pool and OpenBLAS) takes count, 1 to 256
// (else ValueError). KAEL_NUM_THREADS sets the starting count. num_threads() is the cpu
// plugin's count in force.
void set_num_threads(int count);
[[nodiscard]] int num_threads();

}  // namespace kael
