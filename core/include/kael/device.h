#pragma once
#include <cstdint>
#include <string>

namespace kael {

enum class DeviceType : std::int32_t { CPU = 0, CUDA = 1 };

// A device is a type and an index within the plugin that serves that type: "cpu", "cuda:1".
struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;

    Device() = default;
    constexpr Device(DeviceType device_type, int device_index = 0)
        : type(device_type), index(device_index) {}
    // Accepts "cpu", "cpu:0", "cuda", "cuda:N"; anything else throws ValueError naming the text.
    explicit Device(const std::string& text);
    Device(const char* text) : Device(std::string(text)) {}

    [[nodiscard]] std::string str() const;
    [[nodiscard]] bool is_cpu() const { return type == DeviceType::CPU; }
    friend bool operator==(const Device&, const Device&) = default;
};

[[nodiscard]] Device parse_device(const std::string& text);
[[nodiscard]] std::string to_string(DeviceType type);
[[nodiscard]] std::string to_string(const Device& device);

inline const Device kCPU{DeviceType::CPU, 0};

}  // namespace kael
