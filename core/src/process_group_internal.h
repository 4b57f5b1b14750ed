#pragma once
// What process_group.cpp (the collectives) and process_group_setup.cpp (joining, the
// communicators, the errors) share.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend.h"
#include "distributed_health.h"
#include "kael/distributed.h"

namespace kael::distributed {

struct ProcessGroup::Communicators {
    struct One {
        const detail::Backend* backend = nullptr;
        const kael_collectives* collectives = nullptr;
        void* handle = nullptr;
    };
    std::mutex mutex;
    std::map<std::string, One> by_device;
    std::unique_ptr<Heartbeat> heartbeat;  // null in a world of one
};

// The plugin, collectives table and communicator that serve tensor's device for op.
struct Call {
    const detail::Backend* backend;
    const kael_collectives* collectives;
    void* handle;
};
Call communicator_for(ProcessGroup& group, ProcessGroup::Communicators& communicators,
                      const Tensor& tensor, const char* op, std::chrono::milliseconds timeout,
                      const std::string& prefix);

// Counts a collective started on this process (each rank's heartbeat reports its count and
// what it was: "all_reduce of 1000 float32").
void start_collective(ProcessGroup::Communicators& communicators, const char* op,
                      const Tensor& tensor);

// status of op: OK, or a DistBackendError naming what the other ranks' heartbeats say.
void check_collective(ProcessGroup::Communicators& communicators, const detail::Backend& backend,
                      kael_status status, const char* op, int size);

}  // namespace kael::distributed
