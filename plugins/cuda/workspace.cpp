#include "workspace.h"

#include <algorithm>
#include <map>
#include <memory>

#include "cuda_context.h"
#include "graphs.h"

namespace kael::cuda {
namespace {

constexpr std::int64_t kAlign = 256;

std::int64_t aligned(std::int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

struct DeviceWorkspace {
    std::mutex mutex;
    void* block = nullptr;
    std::int64_t counter_bytes = 0;  // the zeroed counters lead the block
    std::int64_t partial_bytes = 0;
};

// Never destroyed: at exit the runtime may be gone before a destructor could free the blocks.
DeviceWorkspace& device_workspace(std::int32_t device) {
    static auto* const mutex = new std::mutex;
    static auto* const workspaces = new std::map<std::int32_t, std::unique_ptr<DeviceWorkspace>>;
    const std::lock_guard lock(*mutex);
    auto& slot = (*workspaces)[device];
    if (!slot) {
        slot = std::make_unique<DeviceWorkspace>();
    }
    return *slot;
}

}  // namespace

Workspace::Workspace(std::int64_t partial_bytes, std::int64_t counters) {
    const std::int64_t counter_bytes = aligned(counters * std::int64_t{sizeof(unsigned)});
    partial_bytes = aligned(partial_bytes);
    if (recording_graph()) {
        // A replay must not see a block that a later call freed: this launch gets its own, which
        // the graph keeps (device_free), with counters from the recording's zeroed arena, or
        // zeroed by a recorded memset once that is spent.
        unsigned* const arena = counters > 0 ? recorded_counters(counters) : nullptr;
        const std::int64_t own_counters = arena != nullptr ? 0 : counter_bytes;
        owned_ = device_malloc(std::max<std::int64_t>(own_counters + partial_bytes, 1));
        if (own_counters > 0) {
            KAEL_CUDA_CHECK(
                cudaMemsetAsync(owned_, 0, static_cast<size_t>(own_counters), launch_stream()));
        }
        counters_ = arena != nullptr ? arena : static_cast<unsigned*>(owned_);
        partials_ = static_cast<char*>(owned_) + own_counters;
        return;
    }
    DeviceWorkspace& workspace = device_workspace(current_device());
    lock_ = std::unique_lock(workspace.mutex);
    if (counter_bytes > workspace.counter_bytes || partial_bytes > workspace.partial_bytes) {
        // Grows by doubling; the old block is freed in stream order, after the launches that
        // used it. Zeroing the counters is ordered before any launch that uses the new one.
        const std::int64_t new_counters =
            counter_bytes > workspace.counter_bytes
                ? std::max(counter_bytes, 2 * workspace.counter_bytes) : workspace.counter_bytes;
        const std::int64_t new_partials =
            partial_bytes > workspace.partial_bytes
                ? std::max(partial_bytes, 2 * workspace.partial_bytes) : workspace.partial_bytes;
        void* block = device_malloc(new_counters + new_partials);
        KAEL_CUDA_CHECK(cudaMemsetAsync(block, 0, static_cast<size_t>(new_counters),
                                        launch_stream()));
        device_free(workspace.block);
        workspace.block = block;
        workspace.counter_bytes = new_counters;
        workspace.partial_bytes = new_partials;
    }
    counters_ = static_cast<unsigned*>(workspace.block);
    partials_ = static_cast<char*>(workspace.block) + workspace.counter_bytes;
}

Workspace::~Workspace() {
    if (owned_ != nullptr) {
        device_free(owned_);
    }
}

}  // namespace kael::cuda
