#include "kael/device.h"

#include <charconv>

#include "kael/error.h"

namespace kael {

namespace {

[[noreturn]] void reject(const std::string& text) {
    throw ValueError("invalid device '" + text +
                     "': expected 'cpu', 'cuda' or 'cuda:N' with N a non-negative integer");
}

}  // namespace

Device parse_device(const std::string& text) {
    const std::size_t colon = text.find(':');
    const std::string type_name = text.substr(0, colon);
    DeviceType type{};
    if (type_name == "cpu") {
        type = DeviceType::CPU;
    } else if (type_name == "cuda") {
        type = DeviceType::CUDA;
    } else {
        reject(text);
    }
    int index = 0;
    if (colon != std::string::npos) {
        const std::string digits = text.substr(colon + 1);
        const char* end = digits.data() + digits.size();
        const auto [position, error] = std::from_chars(digits.data(), end, index);
        if (digits.empty() || error != std::errc() || position != end || index < 0 ||
            digits.front() == '+' || digits.front() == '-') {
            reject(text);
        }
        if (type == DeviceType::CPU && index != 0) {
            reject(text);
        }
    }
    return {type, index};
}

Device::Device(const std::string& text) : Device(parse_device(text)) {}

std::string to_string(DeviceType type) { return type == DeviceType::CPU ? "cpu" : "cuda"; }

std::string Device::str() const {
    return type == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index);
}

std::string to_string(const Device& device) { return device.str(); }

}  // namespace kael
