// ProcessGroup's setup (kael/distributed.h): joining (each rank once, every rank agreeing on the
// world's size), the heartbeat, and the communicator of each device, made on first use through
// the store (keys "<prefix>/<device>/..."); and the errors of a failed collective.
#include <cstdlib>
#include <cstring>

#include "kael/error.h"
#include "process_group_internal.h"

namespace kael::distributed {

using detail::Backend;

namespace {

// The store as kael_store gives it to a plugin: keys under prefix, errors as statuses.
struct StoreView {
    Store* store;
    std::string prefix;
    std::string error;
};

kael_status view_set(void* context, const char* key, const void* value, std::int64_t bytes) {
    auto* view = static_cast<StoreView*>(context);
    try {
        view->store->set(view->prefix + key, std::string(static_cast<const char*>(value),
                                                         static_cast<std::size_t>(bytes)));
        return KAEL_STATUS_OK;
    } catch (const std::exception& error) {
        view->error = error.what();
        return KAEL_STATUS_DEVICE_ERROR;
    }
}

kael_status view_get(void* context, const char* key, void** value, std::int64_t* bytes) {
    auto* view = static_cast<StoreView*>(context);
    try {
        const std::string found = view->store->get(view->prefix + key);
        void* copy = std::malloc(found.empty() ? 1 : found.size());
        if (copy == nullptr) {
            return KAEL_STATUS_OUT_OF_MEMORY;
        }
        std::memcpy(copy, found.data(), found.size());
        *value = copy;
        *bytes = static_cast<std::int64_t>(found.size());
        return KAEL_STATUS_OK;
    } catch (const std::exception& error) {
        view->error = error.what();
        return KAEL_STATUS_DEVICE_ERROR;
    }
}

void view_free(void* /*context*/, void* value) {
    std::free(value);
}

}  // namespace

namespace {

// Heartbeats every second: a failed collective then finds the silent rank in about two.
constexpr std::chrono::milliseconds kHeartbeatPeriod{1000};

}  // namespace

// Counts a collective started on this process (each rank's heartbeat reports its count and
// what it was: "all_reduce of 1000 float32").
void start_collective(ProcessGroup::Communicators& communicators, const char* op,
                      const Tensor& tensor) {
    if (communicators.heartbeat) {
        communicators.heartbeat->start_collective(op, tensor.numel(), tensor.dtype());
    }
}

// status of op: OK, or a DistBackendError naming what the other ranks' heartbeats say.
void check_collective(ProcessGroup::Communicators& communicators, const Backend& backend,
                      kael_status status, const char* op, int size) {
    try {
        backend.check(status, op);
    } catch (const DeviceError& error) {
        const std::string diagnosis = communicators.heartbeat
                                          ? communicators.heartbeat->diagnose(size)
                                          : std::string("this is a world of one process");
        throw DistBackendError(std::string(op) + " failed: " + error.what() + " [" + diagnosis +
                               "]");
    }
}

bool backend_available(const std::string& backend) {
    if (backend != "gloo" && backend != "nccl") {
        return false;
    }
    try {
        return detail::backend_for(backend == "gloo" ? kCPU : Device("cuda", 0))
                   .extension(KAEL_EXTENSION_COLLECTIVES) != nullptr;
    } catch (const Error&) {  // no plugin serves the device type
        return false;
    }
}

ProcessGroup::ProcessGroup(std::shared_ptr<Store> store, int rank, int size, std::string backend,
                           std::chrono::milliseconds timeout, std::string prefix)
    : store_(std::move(store)),
      rank_(rank),
      size_(size),
      backend_(std::move(backend)),
      timeout_(timeout),
      prefix_(std::move(prefix)),
      communicators_(std::make_unique<Communicators>()) {
    if (!store_) {
        throw ValueError("ProcessGroup: store is null");
    }
    if (size < 1 || rank < 0 || rank >= size) {
        throw ValueError("ProcessGroup: rank " + std::to_string(rank) +
                         " is outside a world of size " + std::to_string(size));
    }
    if (backend_ != "gloo" && backend_ != "nccl") {
        throw ValueError("ProcessGroup: unknown backend '" + backend_ +
                         "'; expected 'gloo' (cpu tensors) or 'nccl' (cuda tensors)");
    }
    // Before joining: a world whose ranks cannot run gloo fails here, not at its first barrier.
    if (backend_ == "gloo" && !backend_available("gloo")) {
        throw DeviceError(
            "ProcessGroup: the gloo backend is not available: the plugin serving cpu "
            "has no collectives (" KAEL_EXTENSION_COLLECTIVES
            "; this kael was built without gloo)");
    }
    // Each rank joins once, and every rank's world has rank 0's size (else gloo's rendezvous
    // would wait for ranks that never come, or pair the wrong processes).
    const std::string joined = prefix_ + "/joined/" + std::to_string(rank_);
    if (store_->add(joined, 1) > 1) {
        store_->add(joined, -1);
        throw ValueError("ProcessGroup: rank " + std::to_string(rank_) + " has already joined " +
                         prefix_ + " (two processes were given the same rank?)");
    }
    const std::string size_key = prefix_ + "/world_size";
    if (rank_ == 0) {
        store_->set(size_key, std::to_string(size_));
    } else if (const std::string said = store_->get(size_key); said != std::to_string(size_)) {
        store_->add(joined, -1);
        throw ValueError("ProcessGroup: world_size " + std::to_string(size_) +
                         " here, but rank 0 joined a world of " + said);
    }
    if (size_ > 1) {
        communicators_->heartbeat =
            std::make_unique<Heartbeat>(store_, prefix_ + "/", rank_, kHeartbeatPeriod);
    }
}

ProcessGroup::~ProcessGroup() {
    try {  // the rank may join again (a new group on the same store)
        store_->add(prefix_ + "/joined/" + std::to_string(rank_), -1);
    } catch (const std::exception&) {
        // the store is gone: nothing to undo
    }
    for (auto& [device, one] : communicators_->by_device) {
        if (one.collectives != nullptr && one.collectives->communicator_release != nullptr) {
            one.collectives->communicator_release(one.handle);
        }
    }
}

Call communicator_for(ProcessGroup& group, ProcessGroup::Communicators& communicators,
                      const Tensor& tensor, const char* op, std::chrono::milliseconds timeout,
                      const std::string& prefix) {
    const std::string wanted = group.backend() == "gloo" ? "cpu" : "cuda";  // gloo: staged
    if (tensor.device().type() != wanted) {
        throw DeviceError(std::string(op) + ": the " + group.backend() + " backend takes " +
                          wanted + " tensors, got one on " + tensor.device().str());
    }
    const std::string device = tensor.device().str();
    const std::lock_guard lock(communicators.mutex);
    auto found = communicators.by_device.find(device);
    if (found == communicators.by_device.end()) {
        ProcessGroup::Communicators::One one;
        one.backend = &detail::backend_for(tensor.device());
        one.collectives = static_cast<const kael_collectives*>(
            one.backend->extension(KAEL_EXTENSION_COLLECTIVES));
        if (one.collectives == nullptr) {
            throw DeviceError(std::string(op) + ": plugin '" + one.backend->name() + "' (serving " +
                              device + ") has no collectives (" + KAEL_EXTENSION_COLLECTIVES + ")");
        }
        StoreView view{group.store().get(), prefix + "/" + device + "/", {}};
        const kael_store store{sizeof(kael_store), &view, view_set, view_get, view_free};
        const kael_status status = one.collectives->communicator_create(
            tensor.device().index, &store, group.rank(), group.size(),
            static_cast<std::int64_t>(timeout.count()), &one.handle);
        if (status != KAEL_STATUS_OK && !view.error.empty()) {
            throw DeviceError(std::string(op) + ": rendezvous failed: " + view.error);
        }
        one.backend->check(status, op);
        found = communicators.by_device.emplace(device, one).first;
    }
    return {found->second.backend, found->second.collectives, found->second.handle};
}

}  // namespace kael::distributed
