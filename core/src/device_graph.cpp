// DeviceGraph: the plugin records (capture_begin .. capture_end) while the core routes the
// thread's allocations to a pool only the recording uses (allocator_internal.h), because a
// replay writes every block the recorded ops touched, in their order.
#include "kael/device_graph.h"

#include <string>

#include "allocator_internal.h"
#include "backend.h"
#include "kael/error.h"
#include "registry_state.h"

namespace kael {

namespace {
thread_local bool recording = false;
}  // namespace

struct DeviceGraph::State {
    Device device;
    const detail::Backend* backend = nullptr;
    void* graph = nullptr;
    std::shared_ptr<detail::RecordingPool> pool;

    State(const Device& on, const detail::Backend* serving) : device(on), backend(serving) {}
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
        if (!detail::state().shut_down) {  // else the plugin released everything already
            backend->table()->graph_release(device.index, graph);
        }
        detail::retire_recording_pool(pool);
    }
};

bool DeviceGraph::supported(const Device& device) {
    const kael_plugin* table = detail::backend_for(device).table();
    return KAEL_HAS_SLOT(table, capture_begin) && KAEL_HAS_SLOT(table, capture_end) &&
           KAEL_HAS_SLOT(table, graph_launch) && KAEL_HAS_SLOT(table, graph_release);
}

bool recording_device_graph() {
    return recording;
}

void check_not_recording(const char* op) {
    if (recording_device_graph()) {
        throw ValueError(std::string(op) +
                         ": an optimizer step inside a device graph recording would replay this "
                         "step's count, bias corrections and learning rate unchanged; step the "
                         "optimizer outside the recording");
    }
}

DeviceGraph DeviceGraph::record(const Device& device, const std::function<void()>& work) {
    const detail::Backend& backend = detail::backend_for(device);
    if (!supported(device)) {
        throw TypeError("DeviceGraph.record: the " + backend.name() + " plugin serving " +
                        device.str() +
                        " cannot record device graphs (it lacks the graph "
                        "slots); run the work directly");
    }
    if (recording) {
        throw ValueError("DeviceGraph.record: this thread is already recording a device graph");
    }
    auto state = std::make_shared<State>(device, &backend);
    const kael_plugin* table = backend.table();
    state->pool = detail::open_recording_pool(backend, device.index);
    const kael_status began = table->capture_begin(device.index);
    if (began != KAEL_STATUS_OK) {
        detail::close_recording_pool();
        backend.check(began, "DeviceGraph.record: capture_begin");
    }
    recording = true;
    const auto end = [&] {
        recording = false;
        detail::close_recording_pool();
        return table->capture_end(device.index, &state->graph);
    };
    try {
        work();
    } catch (...) {
        static_cast<void>(end());  // the work's own error is the one to report
        throw;
    }
    backend.check(end(), "DeviceGraph.record: capture_end");
    return DeviceGraph(std::move(state));
}

void DeviceGraph::replay() const {
    state_->backend->check(
        state_->backend->table()->graph_launch(state_->device.index, state_->graph),
        "DeviceGraph.replay");
}

const Device& DeviceGraph::device() const {
    return state_->device;
}

}  // namespace kael
