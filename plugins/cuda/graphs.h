#pragma once
// Device graphs (the capture and replay slots): a thread's queued work recorded into a CUDA
// graph and replayed with one launch.
#include <cstdint>

#include "kael/kernels/plugin_entries.h"

namespace kael::cuda {

KAEL_DECLARE_ENTRY(capture_begin);
KAEL_DECLARE_ENTRY(capture_end);
KAEL_DECLARE_ENTRY(graph_launch);
KAEL_DECLARE_ENTRY(graph_release);

// While this thread records, a block device_free is given is kept until the graph is released
// (its replays still use it); true when it was kept.
bool keep_for_graph(void* block);

// While this thread records: `count` counters from the recording's arena, zeroed before the
// recording began (a multi-block reduction's last block resets its counters, so each replay
// finds them zero again: no recorded memset); null when not recording or the arena is spent.
unsigned* recorded_counters(std::int64_t count);

}  // namespace kael::cuda
