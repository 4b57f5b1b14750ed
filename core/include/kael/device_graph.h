#pragma once
// Device work recorded once and replayed with one launch (a cudaGraph on the cuda plugin): for
// a fixed sequence of small ops, such as one decoding step of a model, whose per-op launch cost
// exceeds their work. Like torch.cuda.CUDAGraph.
#include <functional>
#include <memory>

#include "kael/device.h"

namespace kael {

class DeviceGraph {
public:
    // Whether device's plugin can record (the graph slots capture_begin and friends).
    [[nodiscard]] static bool supported(const Device& device);
    // Calls work with every op it queues on device recorded instead of run. What it computes
    // is therefore not there yet: tensors it makes hold their values only after replay(), and
    // keep their addresses for the graph's life, so replays rewrite them in place. Tensors it
    // reads must stay alive while the graph lives; a replay reads whatever they hold then.
    // work may not copy to or from the host, wait for the device (item(), to_vector(), print)
    // or run an op the plugin lacks (a cpu fallback copies): those throw, and so does record.
    // TypeError when the device cannot record, ValueError inside another recording.
    [[nodiscard]] static DeviceGraph record(const Device& device,
                                            const std::function<void()>& work);
    // Queues the recorded ops again, after the work queued before it.
    void replay() const;
    [[nodiscard]] const Device& device() const;

private:
    struct State;
    explicit DeviceGraph(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

// Whether this thread is inside DeviceGraph::record (caches of tensors must not serve it).
[[nodiscard]] bool recording_device_graph();
// ValueError naming op when this thread records: op reads host state (an optimizer's step
// count, bias corrections, learning rate) that every replay would repeat unchanged.
void check_not_recording(const char* op);

}  // namespace kael
