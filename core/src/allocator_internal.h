#pragma once
#include <cstdint>
#include <memory>

namespace kael::detail {

class Backend;
// Blocks of at least bytes from the device's cache (or straight from the plugin).
[[nodiscard]] void* allocate_block(const Backend& backend, int device, std::int64_t bytes);
void release_block(const Backend& backend, int device, void* block, std::int64_t bytes) noexcept;

// The blocks of one device-graph recording: while open on a thread, that thread's allocations
// on its device come from it, and its blocks, once freed, serve only later allocations of the
// same recording (a replay writes them in the recorded order, so nothing else may have them).
class RecordingPool;
// Opens a pool for this thread's allocations on (backend, device) until close_recording_pool.
[[nodiscard]] std::shared_ptr<RecordingPool> open_recording_pool(const Backend& backend,
                                                                 int device);
void close_recording_pool() noexcept;
// The graph is gone: the pool's free blocks go back to the plugin now, the others when freed.
void retire_recording_pool(const std::shared_ptr<RecordingPool>& pool) noexcept;

}  // namespace kael::detail
