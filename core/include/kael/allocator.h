#pragma once
// Per-device caching allocator in front of each plugin's allocate/release: freed blocks are kept
// by size class and handed out again, because device allocation calls are slow (cudaFree
// synchronizes the device). Set KAEL_NO_CACHING_ALLOCATOR=1 to call the plugin every time.
#include <cstdint>

#include "kael/device.h"

namespace kael {

struct AllocatorStats {
    std::int64_t in_use_bytes = 0;        // held by live tensors (rounded to size classes)
    std::int64_t cached_bytes = 0;        // freed blocks kept for reuse
    std::int64_t peak_in_use_bytes = 0;
    std::int64_t hits = 0;                // allocations served from the cache
    std::int64_t misses = 0;              // allocations that called the plugin
    std::int64_t system_releases = 0;     // blocks given back to the plugin
};

[[nodiscard]] AllocatorStats allocator_stats(const Device& device);
// Starts peak_in_use_bytes again from the bytes in use now.
void reset_peak_memory_stats(const Device& device);
// Gives every cached block of the device back to its plugin.
void empty_cache(const Device& device);
// Whether freed blocks are kept (false under KAEL_NO_CACHING_ALLOCATOR=1 or sanitizer builds).
[[nodiscard]] bool caching_allocator_enabled();

}  // namespace kael
