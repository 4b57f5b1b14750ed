#pragma once
// The checks of a safetensors header, shared by the reader and its tests (not installed).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kael/safetensors.h"

namespace kael::detail {

// The largest header the reference implementation accepts.
inline constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;

// Bytes per element of a dtype the format defines ("F16" -> 2), or 0 for one it does not.
[[nodiscard]] std::uint64_t safetensors_itemsize(const std::string& dtype);

struct SafetensorsHeader {
    std::vector<SafetensorsEntry> entries;  // in data-offset order
    std::map<std::string, std::string> metadata;
};

// Parses and checks the JSON header of path (named in every ValueError) against a data section
// of data_size bytes: unique names, exactly dtype/shape/data_offsets per tensor, known dtypes,
// byte lengths that match, and ranges covering the data exactly.
[[nodiscard]] SafetensorsHeader parse_safetensors_header(std::string_view json,
                                                         std::uint64_t data_size,
                                                         const std::string& path);

// ValueError "load_safetensors: '<path>' is not a valid safetensors file: <what>".
[[noreturn]] void throw_invalid_safetensors(const std::string& path, const std::string& what);

}  // namespace kael::detail
