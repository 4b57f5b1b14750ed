// KAEL_PLUGINS and KAEL_PLUGIN_PATH as text: names with blanks trimmed, which names are enabled,
// and a record for each name that matched no file.
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "kael/plugin_api.h"
#include "registry_state.h"

namespace kael::detail {

namespace {

std::string trimmed(const std::string& text) {
    const char* const blanks = " \t\n\r\f\v";
    const std::size_t first = text.find_first_not_of(blanks);
    if (first == std::string::npos) {
        return "";
    }
    return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

// The plugin names KAEL_PLUGINS mentions, allowed or denied.
std::vector<std::string> names_in_setting() {
    std::vector<std::string> names;
    for (const std::string& entry : split(env("KAEL_PLUGINS"), ',')) {
        names.push_back(entry.front() == '-' ? trimmed(entry.substr(1)) : entry);
    }
    return names;
}

}  // namespace

// Non-empty parts, without surrounding blanks: "KAEL_PLUGINS= cpu , emulated " means cpu,emulated.
std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::stringstream stream(text);
    std::string part;
    while (std::getline(stream, part, separator)) {
        part = trimmed(part);
        if (!part.empty()) {
            parts.push_back(part);
        }
    }
    return parts;
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

// KAEL_PLUGINS="cpu,cuda" keeps only those; "-emulated" drops one and keeps the rest.
bool enabled_by_env(const std::string& name) {
    const std::string setting = env("KAEL_PLUGINS");
    if (setting.empty()) {
        return true;
    }
    bool has_allow_list = false;
    bool allowed = false;
    for (const std::string& entry : split(setting, ',')) {
        if (entry.front() == '-') {
            if (trimmed(entry.substr(1)) == name) {
                return false;
            }
        } else {
            has_allow_list = true;
            allowed = allowed || entry == name;
        }
    }
    return !has_allow_list || allowed;
}

std::map<std::string, std::string> plugin_choices_from_env() {
    std::map<std::string, std::string> choices;
    for (const std::string& entry : split(env("KAEL_DEVICE_PLUGIN"), ',')) {
        const std::size_t equals = entry.find('=');
        if (equals != std::string::npos) {
            choices[trimmed(entry.substr(0, equals))] = trimmed(entry.substr(equals + 1));
        }
    }
    return choices;
}

// A name in KAEL_PLUGINS that matches no candidate file is most likely a typo: it gets a record.
void add_not_found_records(RegistryState& registry) {
    for (const std::string& name : names_in_setting()) {
        const bool known =
            std::any_of(registry.records.begin(), registry.records.end(),
                        [&name](const PluginRecord& record) { return record.name == name; });
        if (known) {
            continue;
        }
        PluginRecord record;
        record.name = name;
        record.status = PluginStatus::NotFound;
        record.reason = "KAEL_PLUGINS=" + env("KAEL_PLUGINS");
        record.reason.append(" names '").append(name).append("', but no folder searched has ");
        record.reason.append(KAEL_PLUGIN_FILE_PREFIX).append(name).append(".so");
        registry.records.push_back(record);
    }
}

// Not-found records are always the last ones, so no backend's record index moves.
void drop_not_found_records(RegistryState& registry) {
    while (!registry.records.empty() && registry.records.back().status == PluginStatus::NotFound) {
        registry.records.pop_back();
    }
}

}  // namespace kael::detail
