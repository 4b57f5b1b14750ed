#pragma once
// Scratch for one multi-block reduction: its partial states and the counters at which its blocks
// meet, so that the last block of each output merges the partials in the same launch. Outside a
// graph recording this is one block per device, kept and grown, whose counters stay zero between
// launches (the last block resets its own): no allocation and no memset per call.
#include <cstdint>
#include <mutex>

namespace kael::cuda {

class Workspace {
public:
    // partial_bytes of scratch and `counters` zeroed counters on the current device, for the
    // launches made before this object is destroyed: it holds the device's workspace until then,
    // so no other thread grows (frees) it under a queued launch.
    Workspace(std::int64_t partial_bytes, std::int64_t counters);
    ~Workspace();
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    [[nodiscard]] void* partials() const { return partials_; }
    [[nodiscard]] unsigned* counters() const { return counters_; }

private:
    std::unique_lock<std::mutex> lock_;
    void* partials_ = nullptr;
    unsigned* counters_ = nullptr;
    void* owned_ = nullptr;  // while recording a graph: this launch's own block
};

}  // namespace kael::cuda
