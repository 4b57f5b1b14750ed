// Heartbeats of a ProcessGroup's processes and the diagnosis of a failed collective (see
// distributed_health.h).
#include "distributed_health.h"

#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace kael::distributed {

Heartbeat::Heartbeat(std::shared_ptr<Store> store, std::string prefix, int rank,
                     std::chrono::milliseconds period)
    : store_(std::move(store)), prefix_(std::move(prefix)), rank_(rank), period_(period) {
    publish(0);  // before the first collective, so a peer never finds it missing
    thread_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        for (std::int64_t beat = 1; !wake_.wait_for(lock, period_, [this] { return stopping_; });
             ++beat) {
            lock.unlock();
            publish(beat);
            lock.lock();
        }
    });
}

Heartbeat::~Heartbeat() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Heartbeat::start_collective(const char* op, std::int64_t count, DType dtype) {
    const std::lock_guard lock(mutex_);
    ++started_;
    op_ = op;
    count_ = count;
    dtype_ = dtype;
}

std::string Heartbeat::current() const {
    return started_ == 0 ? std::string()
                         : std::string(op_) + " of " + std::to_string(count_) + " " +
                               to_string(dtype_);
}

void Heartbeat::publish(std::int64_t beat) {
    std::string value;
    {
        const std::lock_guard lock(mutex_);
        value = std::to_string(beat) + " " + std::to_string(started_) + " " + current();
    }
    try {
        store_->set(prefix_ + "alive/" + std::to_string(rank_), value);
    } catch (const std::exception&) {
        // The store is gone (its process ended): nothing to publish to; diagnose() says so.
    }
}

namespace {

struct Beat {
    bool seen = false;
    std::string value;  // "<beat> <started> <what>"
    std::int64_t started = 0;
    std::string what;
};

std::map<int, Beat> read_beats(Store& store, const std::string& prefix, int size, int self) {
    std::map<int, Beat> beats;
    for (int r = 0; r < size; ++r) {
        if (r == self) {
            continue;
        }
        const std::string key = prefix + "alive/" + std::to_string(r);
        Beat beat;
        if (store.check({key})) {
            beat.seen = true;
            beat.value = store.get(key);
            std::int64_t number = 0;
            std::istringstream fields(beat.value);
            fields >> number >> beat.started;
            std::getline(fields >> std::ws, beat.what);
        }
        beats[r] = beat;
    }
    return beats;
}

}  // namespace

std::string Heartbeat::diagnose(int size) const {
    std::map<int, Beat> before, after;
    try {
        before = read_beats(*store_, prefix_, size, rank_);
        std::this_thread::sleep_for(2 * period_ + period_ / 5);
        after = read_beats(*store_, prefix_, size, rank_);
    } catch (const std::exception& error) {
        return "the store is unreachable (" + std::string(error.what()) +
               "): the process serving it (rank 0's, for a TCPStore) is probably gone";
    }
    std::int64_t started = 0;
    std::string current;
    {
        const std::lock_guard lock(mutex_);
        started = started_;
        current = this->current();
    }
    std::vector<std::string> findings;
    for (const auto& [r, beat] : after) {
        const Beat& earlier = before[r];
        if (!beat.seen) {
            findings.push_back("rank " + std::to_string(r) + " never joined");
        } else if (earlier.value == beat.value) {
            findings.push_back("rank " + std::to_string(r) + " stopped responding (its process "
                               "is gone or blocked outside kael)");
        } else if (beat.started < started) {
            findings.push_back("rank " + std::to_string(r) + " is alive but has started " +
                               std::to_string(beat.started) + " collectives of this group, this "
                               "rank " + std::to_string(started) +
                               ": it has not reached this one");
        } else if (beat.started == started && beat.what != current) {
            findings.push_back("rank " + std::to_string(r) + " called " + beat.what +
                               " where this rank called " + current);
        }
    }
    if (findings.empty()) {
        return "every other rank is alive and has reached this collective";
    }
    std::string joined;
    for (const std::string& finding : findings) {
        joined += (joined.empty() ? "" : "; ") + finding;
    }
    return joined;
}

}  // namespace kael::distributed
