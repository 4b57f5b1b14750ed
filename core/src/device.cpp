// Device names: type names interned into ids, and the parser that accepts the registered ones.
#include "kael/device.h"

#include <array>
#include <atomic>
#include <charconv>
#include <mutex>

#include "kael/error.h"
#include "kael/registry.h"

namespace kael {

namespace {

// Ids index fixed arrays (the registry's fast path), so the table never moves or shrinks.
constexpr std::int32_t kMaxDeviceTypes = 64;

struct TypeNames {
    std::mutex mutex;
    std::int32_t count = 1;
    std::array<std::atomic<const std::string*>, kMaxDeviceTypes> names{};
    TypeNames() { names[0].store(new std::string("cpu")); }
};

TypeNames& type_names() {
    static auto* table = new TypeNames();  // leaked: tensors may outlive static destruction
    return *table;
}

bool valid_type_name(std::string_view name) {
    if (name.empty() || name.size() > 32) {
        return false;
    }
    for (const char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            return false;
        }
    }
    return name.front() >= 'a' && name.front() <= 'z';
}

std::int32_t intern(std::string_view name) {
    TypeNames& table = type_names();
    const std::lock_guard lock(table.mutex);
    for (std::int32_t id = 0; id < table.count; ++id) {
        if (*table.names[static_cast<std::size_t>(id)].load(std::memory_order_relaxed) == name) {
            return id;
        }
    }
    if (!valid_type_name(name)) {
        throw ValueError("invalid device type name '" + std::string(name) +
                         "': expected lowercase letters, digits and '_', starting with a letter");
    }
    if (table.count == kMaxDeviceTypes) {
        throw ValueError("too many device type names (" + std::to_string(kMaxDeviceTypes) +
                         "); cannot add '" + std::string(name) + "'");
    }
    table.names[static_cast<std::size_t>(table.count)].store(new std::string(name),
                                                             std::memory_order_release);
    return table.count++;
}

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) {
        text += (text.empty() ? "'" : ", '") + name + "'";
    }
    return text;
}

[[noreturn]] void reject(const std::string& text, const std::string& why) {
    throw ValueError("invalid device '" + text + "': " + why + " (registered device types: " +
                     joined(registered_device_types()) + "; see kael-info)");
}

}  // namespace

Device::Device(std::string_view type, int device_index)
    : index(device_index), type_id_(intern(type)) {}

Device parse_device(const std::string& text) {
    const std::size_t colon = text.find(':');
    const std::string type_name = text.substr(0, colon);
    const std::vector<std::string> registered = registered_device_types();
    bool known = false;
    for (const std::string& name : registered) {
        known = known || name == type_name;
    }
    if (!known) {
        reject(text, "unknown device type '" + type_name + "'");
    }
    int index = 0;
    if (colon != std::string::npos) {
        const std::string digits = text.substr(colon + 1);
        const char* end = digits.data() + digits.size();
        const auto [position, error] = std::from_chars(digits.data(), end, index);
        if (digits.empty() || error != std::errc() || position != end || index < 0 ||
            digits.front() == '+' || digits.front() == '-') {
            reject(text, "expected '" + type_name + "' or '" + type_name +
                             ":N' with N a non-negative integer");
        }
    }
    return {type_name, index};
}

Device::Device(const std::string& text) : Device(parse_device(text)) {}

const std::string& Device::type() const {
    return *type_names().names[static_cast<std::size_t>(type_id_)].load(std::memory_order_acquire);
}

std::string Device::str() const {
    // The host is one device: "cpu", as PyTorch prints it.
    return is_cpu() && index == 0 ? type() : type() + ":" + std::to_string(index);
}

std::string to_string(const Device& device) {
    return device.str();
}

}  // namespace kael
