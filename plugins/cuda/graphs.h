#pragma once
// Device graphs (the capture and replay slots): a thread's queued work recorded into a CUDA
// graph and replayed with one launch.
#include "kael/kernels/plugin_entries.h"

namespace kael::cuda {

KAEL_DECLARE_ENTRY(capture_begin);
KAEL_DECLARE_ENTRY(capture_end);
KAEL_DECLARE_ENTRY(graph_launch);
KAEL_DECLARE_ENTRY(graph_release);

// While this thread records, a block device_free is given is kept until the graph is released
// (its replays still use it); true when it was kept.
bool keep_for_graph(void* block);

}  // namespace kael::cuda
