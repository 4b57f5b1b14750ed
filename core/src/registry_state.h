#pragma once
// The registry's shared state, private to the core.
#include <array>
#include <atomic>
#include <boost/dll/shared_library.hpp>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backend.h"
#include "kael/registry.h"

namespace kael::detail {

struct RegistryState {
    std::mutex mutex;
    std::once_flag discovered;
    bool shut_down = false;
    std::vector<std::pair<std::string, std::string>> api_folders;  // folder, origin
    std::vector<PluginRecord> records;
    std::vector<DiscoveryStep> steps;
    // Never destroyed: unloading plugins at exit crashes every system that tried it.
    std::vector<boost::dll::shared_library>* libraries =
        new std::vector<boost::dll::shared_library>();
    std::deque<Backend> backends;               // stable addresses
    std::map<std::string, Backend*> serving;    // device type -> selected backend
    std::map<std::string, std::string> serving_reason;  // device type -> why that backend
    std::vector<std::string> choice_warnings;  // choices select_backends could not honour
    std::map<std::string, std::string> chosen;  // device type -> plugin, by set_device_plugin
    // serving by Device::type_id(), for backend_for's lock-free fast path (every allocation).
    std::array<std::atomic<Backend*>, 64> serving_by_type{};
    std::mutex fallback_mutex;
    std::map<std::string, std::int64_t> fallbacks;
};

RegistryState& state();
RegistryState& discovered();
std::vector<PluginRecord> load_folder_now(const std::string& folder,
                                          const std::string& origin);

// registry_setting.cpp: the environment's text.
std::string env(const char* name);
std::vector<std::string> split(const std::string& text, char separator);
bool enabled_by_env(const std::string& name);
void add_not_found_records(RegistryState& registry);
void drop_not_found_records(RegistryState& registry);
// KAEL_DEVICE_PLUGIN="cuda=emulated,toy=toy": device type -> plugin name.
std::map<std::string, std::string> plugin_choices_from_env();
void select_backends(RegistryState& registry);
// registered_device_types() for a caller holding registry.mutex.
std::vector<std::string> registered_types_locked(const RegistryState& registry);

}  // namespace kael::detail
