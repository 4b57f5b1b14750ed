#pragma once
// The health of a ProcessGroup's peers, for errors that name the rank at fault (as PyTorch's
// desync debugging does): each process publishes a heartbeat to the store every second, with
// the number of collectives it has started; when a collective fails, the others' heartbeats
// tell a rank that is gone (its beat stopped) from one that is alive but has not reached this
// collective.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kael/distributed.h"

namespace kael::distributed {

class Heartbeat {
public:
    // Publishes "<beat> <collectives started> <the last one>" under prefix + "alive/<rank>"
    // every period.
    Heartbeat(std::shared_ptr<Store> store, std::string prefix, int rank,
              std::chrono::milliseconds period);
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    // Counts one more collective started by this process: op (a literal) of count elements of
    // dtype, published as "all_reduce of 1000 float32" (formatted only when published).
    void start_collective(const char* op, std::int64_t count, DType dtype);

    // What the other ranks' heartbeats say after a failed collective (waits two periods, so a
    // rank that died just now is seen to be silent): "rank 2 stopped responding; ...".
    [[nodiscard]] std::string diagnose(int size) const;

private:
    void publish(std::int64_t beat);

    std::shared_ptr<Store> store_;
    std::string prefix_;
    int rank_;
    std::chrono::milliseconds period_;
    mutable std::mutex mutex_;  // guards started_, current_, stopping_
    std::int64_t started_ = 0;
    const char* op_ = "";
    std::int64_t count_ = 0;
    DType dtype_ = DType::F32;
    [[nodiscard]] std::string current() const;  // the last collective, described; mutex_ held
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace kael::distributed
