#pragma once
#include <cstdint>

namespace kael::detail {

class Backend;
// Blocks of at least bytes from the device's cache (or straight from the plugin).
[[nodiscard]] void* allocate_block(const Backend& backend, int device, std::int64_t bytes);
void release_block(const Backend& backend, int device, void* block, std::int64_t bytes) noexcept;

}  // namespace kael::detail
