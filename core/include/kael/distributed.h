#pragma once
// Several processes computing together, as torch.distributed: they meet through a key-value
// store (TCPStore, or FileStore on one machine) and form a ProcessGroup whose collectives run in
// the plugin serving each tensor's device (the cpu plugin's through gloo; see
// KAEL_EXTENSION_COLLECTIVES). The core itself moves no tensor bytes between processes.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kael/tensor.h"

namespace kael::distributed {

// A collective failed: a peer is gone, stalled past the timeout, or disagreed (torch's
// DistBackendError). The message names the op and what the other ranks' heartbeats say.
class DistBackendError : public DeviceError {
public:
    using DeviceError::DeviceError;
};

// c10d's store: set, get (waits for the key until the timeout), add (an atomic counter, created
// at 0), wait. Thread-safe. Errors: DeviceError for a lost connection, TimeoutError-like
// DeviceError naming the key for a timeout.
class Store {
public:
    explicit Store(std::chrono::milliseconds timeout) : timeout_(timeout) {}
    virtual ~Store() = default;
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    virtual void set(const std::string& key, const std::string& value) = 0;
    [[nodiscard]] virtual std::string get(const std::string& key) = 0;
    virtual std::int64_t add(const std::string& key, std::int64_t amount) = 0;
    // Whether every key is set now (no waiting).
    [[nodiscard]] virtual bool check(const std::vector<std::string>& keys) = 0;
    void wait(const std::vector<std::string>& keys);

    [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }
    void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

private:
    std::chrono::milliseconds timeout_;
};

// A store served over TCP by the process that passes is_master (it binds port, 0 picking a free
// one), reached by every process at host:port. Clients retry the connection until the timeout.
class TCPStore : public Store {
public:
    TCPStore(const std::string& host, int port, bool is_master,
             std::chrono::milliseconds timeout = std::chrono::minutes(5));
    ~TCPStore() override;
    void set(const std::string& key, const std::string& value) override;
    [[nodiscard]] std::string get(const std::string& key) override;
    std::int64_t add(const std::string& key, std::int64_t amount) override;
    [[nodiscard]] bool check(const std::vector<std::string>& keys) override;
    // The port served (the one picked when 0 was asked for).
    [[nodiscard]] int port() const;

    struct State;

private:
    std::unique_ptr<State> state_;
};

// A store in one file that every process opens (one machine, or a shared file system); records
// are appended under an exclusive lock.
class FileStore : public Store {
public:
    explicit FileStore(std::string path,
                       std::chrono::milliseconds timeout = std::chrono::minutes(5));
    void set(const std::string& key, const std::string& value) override;
    [[nodiscard]] std::string get(const std::string& key) override;
    std::int64_t add(const std::string& key, std::int64_t amount) override;
    [[nodiscard]] bool check(const std::vector<std::string>& keys) override;

private:
    std::string path_;
};

enum class ReduceOp { Sum, Avg, Product, Min, Max };

// Whether backend ("gloo" or "nccl") can run here: the plugin serving cpu (gloo) or cuda devices
// (nccl) has collectives (KAEL_EXTENSION_COLLECTIVES); a build without gloo, say, has none.
// NCCL itself is loaded at the first communicator, as torch's is_nccl_available is a build fact.
[[nodiscard]] bool backend_available(const std::string& backend);

// size processes, this one being rank, on the collectives of the plugins serving the tensors'
// devices (backend "gloo": cpu tensors; "nccl": cuda tensors). Collectives block until this
// process's part is done; tensors keep their shapes and must have the same on every rank.
class ProcessGroup {
public:
    ProcessGroup(std::shared_ptr<Store> store, int rank, int size, std::string backend,
                 std::chrono::milliseconds timeout = std::chrono::minutes(30),
                 std::string prefix = "default_pg");
    ~ProcessGroup();
    ProcessGroup(const ProcessGroup&) = delete;
    ProcessGroup& operator=(const ProcessGroup&) = delete;

    [[nodiscard]] int rank() const { return rank_; }
    [[nodiscard]] int size() const { return size_; }
    [[nodiscard]] const std::string& backend() const { return backend_; }
    [[nodiscard]] const std::shared_ptr<Store>& store() const { return store_; }

    void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
    void broadcast(const Tensor& tensor, int root);
    // tensor on root = op over every rank's; other ranks' tensors are left as they were.
    void reduce(const Tensor& tensor, int root, ReduceOp op = ReduceOp::Sum);
    // out: size * tensor's first dim (or [size, ...] for a 0-d tensor), ranks in order.
    void all_gather_into_tensor(const Tensor& out, const Tensor& tensor);
    void all_gather(const std::vector<Tensor>& outs, const Tensor& tensor);
    // out = op over every rank's slice `rank` of in (in's first dim is size * out's).
    void reduce_scatter_tensor(const Tensor& out, const Tensor& in, ReduceOp op = ReduceOp::Sum);
    // slice j of out = rank j's slice `rank` of in (both split evenly along dim 0).
    void all_to_all_single(const Tensor& out, const Tensor& in);
    // Uneven: in_splits[j] rows of in (dim 0) go to rank j, out_splits[j] rows of out come from
    // rank j; an empty list splits that side evenly. Rows of in and out hold equal elements.
    void all_to_all_single(const Tensor& out, const Tensor& in,
                           const std::vector<std::int64_t>& out_splits,
                           const std::vector<std::int64_t>& in_splits);
    void send(const Tensor& tensor, int dst, int tag = 0);
    void recv(const Tensor& tensor, int src, int tag = 0);
    void barrier();

    struct Communicators;

private:
    std::shared_ptr<Store> store_;
    int rank_;
    int size_;
    std::string backend_;
    std::chrono::milliseconds timeout_;
    std::string prefix_;
    std::unique_ptr<Communicators> communicators_;  // and the heartbeat (distributed_health.h)
};

}  // namespace kael::distributed
