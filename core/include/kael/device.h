#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kael {

// A device is a type and an index within the plugin that serves that type: "cpu", "cuda:1",
// "toy:0". The type is a name a plugin declares when it loads; the core keeps no list of its
// own. Names are interned into small ids, so a Device copies and compares as two integers.
struct Device {
    int index = 0;

    Device() = default;  // cpu:0, the host device the cpu plugin always serves
    // Any type name, registered or not: is_available() says whether a plugin serves it.
    Device(std::string_view type, int device_index);
    // Parses "type" or "type:N" with a type some loaded plugin declared; anything else throws
    // ValueError naming the text and the registered types.
    explicit Device(const std::string& text);
    Device(const char* text) : Device(std::string(text)) {}

    [[nodiscard]] const std::string& type() const;
    [[nodiscard]] std::int32_t type_id() const { return type_id_; }
    [[nodiscard]] std::string str() const;
    [[nodiscard]] bool is_cpu() const { return type_id_ == 0; }
    friend bool operator==(const Device&, const Device&) = default;

private:
    std::int32_t type_id_ = 0;
};

[[nodiscard]] Device parse_device(const std::string& text);
[[nodiscard]] std::string to_string(const Device& device);
// The device types the loaded plugins declare (with or without devices), sorted; "cpu" first.
[[nodiscard]] std::vector<std::string> registered_device_types();

inline const Device kCPU{};

}  // namespace kael
