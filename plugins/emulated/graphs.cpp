// Device graphs on the emulated device, as CUDA graphs behave: between capture_begin and
// capture_end every task the thread launches (and every copy within the device, every index
// check) is recorded, not run; graph_launch runs the recording in order. Scratch and blocks
// freed while recording stay allocated until the graph is released, since replays use them.
// Copies to or from the host and synchronize are refused while recording, as CUDA refuses them
// in a capture, so the core's own checks are exercised without a GPU.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "emulated_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

struct Graph {
    std::vector<std::function<void()>> work;
    std::vector<void*> kept_blocks;
    std::string failure;  // the first refused call while recording
};
thread_local Graph* recording = nullptr;

}  // namespace

bool recording_graph() {
    return recording != nullptr;
}

void record_work(std::function<void()> work) {
    recording->work.push_back(std::move(work));
}

void run_or_record(std::function<void()> work) {
    if (recording != nullptr) {
        recording->work.push_back(std::move(work));
    } else {
        work();
    }
}

bool keep_for_graph(void* block) {
    if (recording == nullptr) {
        return false;
    }
    recording->kept_blocks.push_back(block);
    return true;
}

void refuse_while_recording(const char* call) {
    if (recording == nullptr) {
        return;
    }
    if (recording->failure.empty()) {
        recording->failure = call;
    }
    throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR,
                              std::string(call) +
                                  ": operation not permitted while the thread records a "
                                  "device graph");
}

kael_status capture_begin(int32_t device) {
    return plugin::guarded("emulated.capture_begin", [&] {
        check_device(device);
        if (recording != nullptr) {
            plugin::invalid("this thread is already recording a graph on cuda:0");
        }
        recording = new Graph();
    });
}

kael_status capture_end(int32_t device, void** graph) {
    return plugin::guarded("emulated.capture_end", [&] {
        check_device(device);
        if (graph == nullptr) {
            plugin::invalid("capture_end: graph is null");
        }
        if (recording == nullptr) {
            plugin::invalid("capture_end: this thread is not recording");
        }
        std::unique_ptr<Graph> ended(recording);
        recording = nullptr;
        if (!ended->failure.empty()) {
            for (void* block : ended->kept_blocks) {
                release_block(block);
            }
            throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR, "the recording failed: " +
                                                                    ended->failure +
                                                                    " was called inside it");
        }
        *graph = ended.release();
    });
}

kael_status graph_launch(int32_t device, void* graph) {
    return plugin::guarded("emulated.graph_launch", [&] {
        check_device(device);
        if (graph == nullptr) {
            plugin::invalid("graph_launch: graph is null");
        }
        refuse_while_recording("graph_launch");
        for (const std::function<void()>& work : static_cast<Graph*>(graph)->work) {
            work();
        }
    });
}

void graph_release(int32_t /*device*/, void* graph) {
    const std::unique_ptr<Graph> released(static_cast<Graph*>(graph));
    if (released != nullptr) {
        for (void* block : released->kept_blocks) {
            release_block(block);
        }
    }
}

}  // namespace kael::emulated
