// ProcessGroup (kael/distributed.h): the core checks and lays out tensors, and the plugin serving
// their device moves them through its KAEL_EXTENSION_COLLECTIVES communicator, made on first use
// per device through the store (keys "<prefix>/<device>/...").
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "backend.h"
#include "distributed_health.h"
#include "kael/autograd.h"
#include "kael/distributed.h"
#include "kael/error.h"
#include "kael/ops.h"
#include "kernel_calls.h"

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
        view->store->set(view->prefix + key,
                         std::string(static_cast<const char*>(value),
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

kael_collective_op abi_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: return KAEL_COLLECTIVE_SUM;
        case ReduceOp::Product: return KAEL_COLLECTIVE_PRODUCT;
        case ReduceOp::Min: return KAEL_COLLECTIVE_MIN;
        case ReduceOp::Max: return KAEL_COLLECTIVE_MAX;
    }
    return KAEL_COLLECTIVE_SUM;
}

}  // namespace

struct ProcessGroup::Communicators {
    struct One {
        const Backend* backend = nullptr;
        const kael_collectives* collectives = nullptr;
        void* handle = nullptr;
    };
    std::mutex mutex;
    std::map<std::string, One> by_device;
    std::unique_ptr<Heartbeat> heartbeat;  // null in a world of one
};

namespace {

// Heartbeats every second: a failed collective then finds the silent rank in about two.
constexpr std::chrono::milliseconds kHeartbeatPeriod{1000};

// Counts a collective started on this process (each rank's heartbeat reports its count and
// what it was: "all_reduce of 1000 float32").
void start_collective(ProcessGroup::Communicators& communicators, const char* op,
                      const Tensor& tensor) {
    if (communicators.heartbeat) {
        communicators.heartbeat->start_collective(std::string(op) + " of " +
                                                  std::to_string(tensor.numel()) + " " +
                                                  to_string(tensor.dtype()));
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

}  // namespace

ProcessGroup::ProcessGroup(std::shared_ptr<Store> store, int rank, int size, std::string backend,
                           std::chrono::milliseconds timeout, std::string prefix)
    : store_(std::move(store)), rank_(rank), size_(size), backend_(std::move(backend)),
      timeout_(timeout), prefix_(std::move(prefix)),
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
        communicators_->heartbeat = std::make_unique<Heartbeat>(
            store_, prefix_ + "/", rank_, kHeartbeatPeriod);
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

namespace {

// The communicator for tensor's device, made through the store on first use.
struct Call {
    const Backend* backend;
    const kael_collectives* collectives;
    void* handle;
};

}  // namespace

static Call communicator_for(ProcessGroup& group, ProcessGroup::Communicators& communicators,
                             const Tensor& tensor, const char* op, std::chrono::milliseconds timeout,
                             const std::string& prefix) {
    const std::string wanted = group.backend() == "gloo" ? "cpu" : "cuda";
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
        const kael_plugin* table = one.backend->table();
        const void* extension = KAEL_HAS_SLOT(table, extension) && table->extension != nullptr
                                    ? table->extension(KAEL_EXTENSION_COLLECTIVES)
                                    : nullptr;
        one.collectives = static_cast<const kael_collectives*>(extension);
        if (one.collectives == nullptr) {
            throw DeviceError(std::string(op) + ": plugin '" + one.backend->name() +
                              "' (serving " + device + ") has no collectives (" +
                              KAEL_EXTENSION_COLLECTIVES + ")");
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

namespace {

// tensor itself when contiguous, else a contiguous copy (written back by finish).
Tensor dense(const Tensor& tensor) {
    return tensor.is_contiguous() ? tensor : tensor.contiguous();
}
void finish(const Tensor& dense_tensor, const Tensor& tensor) {
    if (dense_tensor.impl_ptr() != tensor.impl_ptr()) {
        const NoGradGuard no_grad;
        Tensor target = tensor;
        target.copy_(dense_tensor);
    }
}

kael_dtype abi(DType dtype) {
    return static_cast<kael_dtype>(dtype);
}

}  // namespace

void ProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
    if (op == ReduceOp::Avg && !is_floating(tensor.dtype())) {
        throw TypeError("all_reduce: AVG takes floating tensors, got " +
                        to_string(tensor.dtype()));
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "all_reduce", timeout_,
                                       prefix_);
    const Tensor data = dense(tensor);
    start_collective(*communicators_, "all_reduce", data);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_reduce(call.handle, abi(data.dtype()), abi_op(op),
                                                     data.device_data(), data.numel()),
                     "all_reduce", size_);
    if (op == ReduceOp::Avg) {
        const NoGradGuard no_grad;
        Tensor target = data;
        target.copy_(data / static_cast<double>(size_));
    }
    finish(data, tensor);
}

void ProcessGroup::broadcast(const Tensor& tensor, int root) {
    if (root < 0 || root >= size_) {
        throw ValueError("broadcast: root " + std::to_string(root) + " is not a rank");
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "broadcast", timeout_,
                                       prefix_);
    const Tensor data = dense(tensor);
    start_collective(*communicators_, "broadcast", data);
    check_collective(*communicators_, *call.backend,
                     call.collectives->broadcast(call.handle, abi(data.dtype()),
                                                    data.device_data(), data.numel(), root),
                     "broadcast", size_);
    finish(data, tensor);
}

void ProcessGroup::reduce(const Tensor& tensor, int root, ReduceOp op) {
    if (root < 0 || root >= size_) {
        throw ValueError("reduce: root " + std::to_string(root) + " is not a rank");
    }
    const Tensor result = tensor.detach().clone();
    all_reduce(result, op);
    if (rank_ == root) {
        finish(result, tensor);
    }
}

void ProcessGroup::all_gather_into_tensor(const Tensor& out, const Tensor& tensor) {
    if (out.numel() != tensor.numel() * size_ || out.dtype() != tensor.dtype()) {
        throw ValueError("all_gather_into_tensor: out must hold " + std::to_string(size_) +
                         " times the tensor's " + std::to_string(tensor.numel()) +
                         " elements of " + to_string(tensor.dtype()) + ", got " +
                         std::to_string(out.numel()) + " of " + to_string(out.dtype()));
    }
    detail::check_same_device({out, tensor}, "all_gather_into_tensor");
    const Call call = communicator_for(*this, *communicators_, tensor, "all_gather", timeout_,
                                       prefix_);
    const Tensor in = dense(tensor);
    const Tensor gathered = dense(out);
    start_collective(*communicators_, "all_gather", in);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_gather(call.handle, abi(in.dtype()),
                                                     gathered.device_data(), in.device_data(),
                                                     in.numel()),
                     "all_gather", size_);
    finish(gathered, out);
}

void ProcessGroup::all_gather(const std::vector<Tensor>& outs, const Tensor& tensor) {
    if (outs.size() != static_cast<std::size_t>(size_)) {
        throw ValueError("all_gather: expected " + std::to_string(size_) + " output tensors, got " +
                         std::to_string(outs.size()));
    }
    Shape shape = tensor.shape();
    shape.insert(shape.begin(), size_);
    const Tensor gathered = empty(shape, tensor.dtype(), tensor.device());
    all_gather_into_tensor(gathered, tensor);
    const NoGradGuard no_grad;
    for (int r = 0; r < size_; ++r) {
        Tensor target = outs[static_cast<std::size_t>(r)];
        target.copy_(gathered.select(0, r));
    }
}

void ProcessGroup::reduce_scatter_tensor(const Tensor& out, const Tensor& in, ReduceOp op) {
    if (in.numel() != out.numel() * size_ || out.dtype() != in.dtype()) {
        throw ValueError("reduce_scatter_tensor: the input must hold " + std::to_string(size_) +
                         " times the output's " + std::to_string(out.numel()) + " elements of " +
                         to_string(out.dtype()));
    }
    if (op == ReduceOp::Avg && !is_floating(in.dtype())) {
        throw TypeError("reduce_scatter_tensor: AVG takes floating tensors");
    }
    detail::check_same_device({out, in}, "reduce_scatter_tensor");
    const Call call = communicator_for(*this, *communicators_, in, "reduce_scatter", timeout_,
                                       prefix_);
    const Tensor source = dense(in);
    const Tensor result = dense(out);
    start_collective(*communicators_, "reduce_scatter", source);
    check_collective(*communicators_, *call.backend,
                     call.collectives->reduce_scatter(call.handle, abi(in.dtype()), abi_op(op),
                                                         result.device_data(),
                                                         source.device_data(), result.numel()),
                     "reduce_scatter", size_);
    if (op == ReduceOp::Avg) {
        const NoGradGuard no_grad;
        Tensor target = result;
        target.copy_(result / static_cast<double>(size_));
    }
    finish(result, out);
}

void ProcessGroup::all_to_all_single(const Tensor& out, const Tensor& in) {
    if (in.numel() != out.numel() || in.dtype() != out.dtype() || in.numel() % size_ != 0) {
        throw ValueError("all_to_all_single: input and output must have the same dtype and a "
                         "number of elements divisible by the world size " +
                         std::to_string(size_));
    }
    detail::check_same_device({out, in}, "all_to_all_single");
    const Call call = communicator_for(*this, *communicators_, in, "all_to_all", timeout_,
                                       prefix_);
    const Tensor source = dense(in);
    const Tensor result = dense(out);
    start_collective(*communicators_, "all_to_all", source);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_to_all(call.handle, abi(in.dtype()),
                                                     result.device_data(), source.device_data(),
                                                     in.numel() / size_),
                     "all_to_all", size_);
    finish(result, out);
}

void ProcessGroup::send(const Tensor& tensor, int dst, int tag) {
    if (dst < 0 || dst >= size_ || dst == rank_) {
        throw ValueError("send: destination " + std::to_string(dst) + " is not another rank");
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "send", timeout_, prefix_);
    const Tensor data = dense(tensor);
    check_collective(*communicators_, *call.backend,
                     call.collectives->send(call.handle, abi(data.dtype()), data.device_data(),
                                               data.numel(), dst, tag),
                     "send", size_);
}

void ProcessGroup::recv(const Tensor& tensor, int src, int tag) {
    if (src < 0 || src >= size_ || src == rank_) {
        throw ValueError("recv: source " + std::to_string(src) + " is not another rank");
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "recv", timeout_, prefix_);
    const Tensor data = dense(tensor);
    check_collective(*communicators_, *call.backend,
                     call.collectives->recv(call.handle, abi(data.dtype()), data.device_data(),
                                               data.numel(), src, tag),
                     "recv", size_);
    finish(data, tensor);
}

void ProcessGroup::barrier() {
    const Tensor token = zeros({1}, DType::F32, (backend_ == "gloo" ? kCPU : Device("cuda")));
    const Call call = communicator_for(*this, *communicators_, token, "barrier", timeout_, prefix_);
    start_collective(*communicators_, "barrier", token);
    check_collective(*communicators_, *call.backend, call.collectives->barrier(call.handle),
                     "barrier", size_);
}

}  // namespace kael::distributed
