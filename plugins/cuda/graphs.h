#pragma once
// Device graphs (the capture and replay slots): a thread's queued work recorded into a CUDA
// graph and replayed with one launch.
#include "kael/plugin_api.h"

namespace kael::cuda {

kael_status capture_begin(int32_t device);
kael_status capture_end(int32_t device, void** graph);
kael_status graph_launch(int32_t device, void* graph);
void graph_release(int32_t device, void* graph);

// While this thread records, a block device_free is given is kept until the graph is released
// (its replays still use it); true when it was kept.
bool keep_for_graph(void* block);

}  // namespace kael::cuda
