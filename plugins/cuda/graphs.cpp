// Device graphs: between capture_begin and capture_end every launch, memset, copy and library
// call of the thread goes to a non-blocking capture stream (launch_stream) and is recorded, not
// run; graph_launch queues the recording on the legacy stream, so it is ordered with all other
// kael work. Work of other threads stays on the legacy stream and neither joins the recording
// nor waits for it (cudaStreamCaptureModeThreadLocal).
#include "graphs.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cublas_loader.h"
#include "cuda_context.h"
#include "index_check.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cuda {
namespace {

// Counters a recording hands out (recorded_counters): 4096, 16 KiB, far more than a step uses.
constexpr std::int64_t kArenaCounters = 4096;

struct Recording {
    std::int32_t device = -1;
    cudaStream_t stream = nullptr;
    std::vector<void*> kept_blocks;  // freed by the recorded work: replays still use them
    unsigned* counters = nullptr;    // the arena, also in kept_blocks
    std::int64_t counters_used = 0;
};
thread_local Recording* recording = nullptr;

struct Graph {
    std::int32_t device = -1;
    cudaGraphExec_t executable = nullptr;
    std::vector<void*> kept_blocks;
};

void free_blocks(const std::vector<void*>& blocks) {
    for (void* block : blocks) {
        device_free(block);  // stream-ordered after every replay already queued
    }
}

}  // namespace

cudaStream_t launch_stream() {
    return recording != nullptr ? recording->stream : nullptr;
}

bool recording_graph() {
    return recording != nullptr;
}

unsigned* recorded_counters(std::int64_t count) {
    if (recording == nullptr || recording->counters == nullptr ||
        count > kArenaCounters - recording->counters_used) {
        return nullptr;
    }
    unsigned* const taken = recording->counters + recording->counters_used;
    recording->counters_used += count;
    return taken;
}

bool keep_for_graph(void* block) {
    if (recording == nullptr) {
        return false;
    }
    try {
        recording->kept_blocks.push_back(block);
        return true;
    } catch (...) {
        return false;  // no room to remember it: freed now (the replay would see a reused block)
    }
}

kael_status capture_begin(int32_t device) {
    return plugin::guarded("cuda.capture_begin", [&] {
        use_device(device);  // queues a held index check on the legacy stream, outside
        if (recording != nullptr) {
            plugin::invalid("this thread is already recording a graph on cuda:" +
                            std::to_string(recording->device));
        }
        prepare_cublas_handle();
        auto next = std::make_unique<Recording>();
        next->device = device;
        // Zeroed on the legacy stream, before any replay that it orders.
        const auto arena_bytes = static_cast<std::size_t>(kArenaCounters) * sizeof(unsigned);
        next->counters =
            static_cast<unsigned*>(device_malloc(static_cast<std::int64_t>(arena_bytes)));
        next->kept_blocks.push_back(next->counters);
        const cudaError_t zeroed = cudaMemsetAsync(next->counters, 0, arena_bytes, nullptr);
        const cudaError_t created =
            zeroed == cudaSuccess ? cudaStreamCreateWithFlags(&next->stream, cudaStreamNonBlocking)
                                  : zeroed;
        if (created != cudaSuccess) {
            free_blocks(next->kept_blocks);
            fail_call(created, zeroed != cudaSuccess ? "cudaMemsetAsync" : "cudaStreamCreate",
                      __FILE__, __LINE__);
        }
        const cudaError_t began =
            cudaStreamBeginCapture(next->stream, cudaStreamCaptureModeThreadLocal);
        if (began != cudaSuccess) {
            static_cast<void>(cudaStreamDestroy(next->stream));
            free_blocks(next->kept_blocks);
            fail_call(began, "cudaStreamBeginCapture", __FILE__, __LINE__);
        }
        recording = next.release();
    });
}

kael_status capture_end(int32_t device, void** graph) {
    return plugin::guarded("cuda.capture_end", [&] {
        if (graph == nullptr) {
            plugin::invalid("graph is null");
        }
        *graph = nullptr;
        if (recording == nullptr || recording->device != device) {
            plugin::invalid("this thread is not recording a graph on cuda:" +
                            std::to_string(device));
        }
        // The last op's held index check belongs to the recording.
        launch_held_index_check();
        const std::unique_ptr<Recording> ended(recording);
        recording = nullptr;
        cudaGraph_t captured = nullptr;
        const cudaError_t status = cudaStreamEndCapture(ended->stream, &captured);
        static_cast<void>(cudaStreamDestroy(ended->stream));
        cudaGraphExec_t executable = nullptr;
        const cudaError_t instantiated =
            status == cudaSuccess ? cudaGraphInstantiate(&executable, captured, 0) : status;
        if (captured != nullptr) {
            static_cast<void>(cudaGraphDestroy(captured));
        }
        if (instantiated != cudaSuccess) {
            static_cast<void>(cudaGetLastError());
            free_blocks(ended->kept_blocks);  // never replayed: nothing uses them
            throw plugin::StatusError(
                KAEL_STATUS_DEVICE_ERROR,
                std::string("the recording failed (") + cudaGetErrorString(instantiated) +
                    "): a call inside it waited for the device or copied host memory");
        }
        auto made = std::make_unique<Graph>();
        made->device = device;
        made->executable = executable;
        made->kept_blocks = std::move(ended->kept_blocks);
        *graph = made.release();
    });
}

kael_status graph_launch(int32_t device, void* graph) {
    return plugin::guarded("cuda.graph_launch", [&] {
        auto* held = static_cast<Graph*>(graph);
        if (held == nullptr || held->device != device) {
            plugin::invalid("not a graph recorded on cuda:" + std::to_string(device));
        }
        use_device(device);
        KAEL_CUDA_CHECK(cudaGraphLaunch(held->executable, launch_stream()));
        if (sync_after_launch()) {
            KAEL_CUDA_CHECK(cudaStreamSynchronize(launch_stream()));
        }
    });
}

void graph_release(int32_t device, void* graph) {
    auto* held = static_cast<Graph*>(graph);
    if (held == nullptr) {
        return;
    }
    try {
        use_device(device);
    } catch (...) {
    }
    // Destroying a graph still queued is allowed: CUDA frees it once those launches finish.
    static_cast<void>(cudaGraphExecDestroy(held->executable));
    static_cast<void>(cudaGetLastError());
    free_blocks(held->kept_blocks);
    delete held;
}

}  // namespace kael::cuda
