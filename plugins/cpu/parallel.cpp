// The cpu plugin's threads: one persistent pool, sized from KAEL_NUM_THREADS or the machine.
// A call hands its ranges to the pool's workers and takes some itself; workers spin briefly
// after a job, so back-to-back ops find them awake, then sleep. Starting threads per call cost
// tens of microseconds an op. Calls from several threads at once, and nested calls, run on the
// calling thread alone rather than wait; a forked child starts a pool of its own.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cpu_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {

void check_device(int32_t device) {
    if (device != 0) {
        plugin::invalid("cpu has one device (0), got device " + std::to_string(device));
    }
}

namespace {

constexpr int kMostThreads = 256;

std::atomic<int>& workers_in_force() {
    static std::atomic<int> workers = [] {
        const char* setting = std::getenv("KAEL_NUM_THREADS");
        if (setting != nullptr) {
            char* end = nullptr;
            const long value = std::strtol(setting, &end, 10);
            if (end != setting && *end == '\0' && value >= 1) {
                return static_cast<int>(std::min<long>(value, kMostThreads));
            }
        }
        return static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1U, 64U));
    }();
    return workers;
}

}  // namespace

int worker_count() {
    return workers_in_force().load(std::memory_order_relaxed);
}

namespace {

thread_local bool inside_pool = false;  // a nested call runs inline

// One call's ranges. Workers hold it by shared_ptr, so one that wakes late finds its parts all
// taken and leaves without touching body, which lives only as long as the call.
struct Job {
    const std::function<void(int64_t, int64_t)>* body;
    int64_t count;
    int64_t per;
    int64_t parts;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> remaining;
    std::mutex failure_mutex;
    std::exception_ptr failure;

    Job(const std::function<void(int64_t, int64_t)>& run, int64_t total, int64_t each,
        int64_t pieces)
        : body(&run), count(total), per(each), parts(pieces), remaining(pieces) {}

    void take_parts() {
        inside_pool = true;
        for (int64_t part = next.fetch_add(1); part < parts; part = next.fetch_add(1)) {
            const int64_t begin = part * per;
            try {
                (*body)(begin, std::min(count, begin + per));
            } catch (...) {
                const std::lock_guard lock(failure_mutex);
                if (!failure) {
                    failure = std::current_exception();
                }
            }
            remaining.fetch_sub(1, std::memory_order_acq_rel);
        }
        inside_pool = false;
    }
};

void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

// A waiting round: a pause for the first kPauses rounds, then a yield. The scheduler may put a
// woken worker on the caller's CPU; a waiter that spun there would keep the thread it waits for
// (or the caller) off that CPU for the rest of its time slice (ops 5x slower, milliseconds on).
constexpr int kPauses = 256;

void wait_round(int round) {
    if (round < kPauses) {
        relax();
    } else {
        std::this_thread::yield();
    }
}

class Pool {
public:
    explicit Pool(int threads) {
        for (int i = 1; i < threads; ++i) {
            workers_.emplace_back([this] { work(); });
        }
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // At least threads - 1 workers, added between jobs. Extra ones are never removed: a job
    // has worker_count() parts, so no more threads than that run it at once.
    void grow(int threads) {
        const std::lock_guard busy(busy_);
        while (static_cast<int>(workers_.size()) + 1 < threads) {
            workers_.emplace_back([this] { work(); });
        }
    }

    // Runs body over parts ranges of per elements of [0, count); false when the pool is busy
    // with another caller's job (the caller then runs it alone).
    bool run(int64_t count, int64_t per, int64_t parts,
             const std::function<void(int64_t, int64_t)>& body) {
        const std::unique_lock busy(busy_, std::try_to_lock);
        if (!busy.owns_lock()) {
            return false;
        }
        const auto job = std::make_shared<Job>(body, count, per, parts);
        {
            const std::lock_guard lock(mutex_);
            current_ = job;
            generation_.fetch_add(1, std::memory_order_release);
        }
        if (sleeping_.load(std::memory_order_acquire) > 0) {
            wake_.notify_all();
        }
        job->take_parts();
        for (int round = 0; job->remaining.load(std::memory_order_acquire) != 0; ++round) {
            wait_round(round);  // the parts workers took finish within the op's own time
        }
        {
            const std::lock_guard lock(mutex_);
            current_.reset();
        }
        if (job->failure) {
            std::rethrow_exception(job->failure);
        }
        return true;
    }

private:
    void work() {
        std::uint64_t seen = 0;
        while (true) {
            // About 50 us of spinning after a job: ops come back to back, and waking a sleeping
            // thread costs more than a small op.
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
            for (int round = 0; generation_.load(std::memory_order_acquire) == seen; ++round) {
                wait_round(round);
                if ((round >= kPauses || round % 64 == 63) &&
                    std::chrono::steady_clock::now() > give_up) {
                    break;
                }
            }
            std::shared_ptr<Job> job;
            {
                std::unique_lock lock(mutex_);
                if (generation_.load(std::memory_order_acquire) == seen) {
                    sleeping_.fetch_add(1, std::memory_order_acq_rel);
                    wake_.wait(lock, [&] {
                        return generation_.load(std::memory_order_acquire) != seen;
                    });
                    sleeping_.fetch_sub(1, std::memory_order_acq_rel);
                }
                seen = generation_.load(std::memory_order_acquire);
                job = current_;
            }
            if (job) {
                job->take_parts();
            }
        }
    }

    std::vector<std::thread> workers_;  // detached in effect: the pool lives until exit
    std::mutex busy_;                   // one job at a time
    std::mutex mutex_;                  // current_, and the sleepers' wait
    std::condition_variable wake_;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> sleeping_{0};
    std::shared_ptr<Job> current_;
};

std::mutex pool_mutex;
Pool* pool = nullptr;  // made on first use; a forked child forgets its parent's (threadless) one

void forget_pool_in_child() {
    pool = nullptr;                 // the parent's workers do not exist here; the pool leaks
    new (&pool_mutex) std::mutex;  // it may have been held by a thread that is not copied
}

Pool& the_pool() {
    const std::lock_guard lock(pool_mutex);
    if (pool == nullptr) {
        static const bool registered = pthread_atfork(nullptr, nullptr, forget_pool_in_child) == 0;
        static_cast<void>(registered);
        pool = new Pool(worker_count());  // never deleted: its threads run until exit
    }
    return *pool;
}

}  // namespace

int set_worker_count(int threads) {
    if (threads < 1 || threads > kMostThreads) {
        plugin::invalid("host threads must be 1 to " + std::to_string(kMostThreads) + ", got " +
                        std::to_string(threads));
    }
    workers_in_force().store(threads, std::memory_order_relaxed);
    {
        const std::lock_guard lock(pool_mutex);
        if (pool != nullptr) {
            pool->grow(threads);
        }
    }
    blas_threads(threads);
    return threads;
}

void parallel_ranges_on_pool(int64_t count, int64_t min_parallel,
                             const std::function<void(int64_t, int64_t)>& body) {
    if (count <= 0) {
        return;
    }
    const int64_t workers = std::min<int64_t>(worker_count(), count);
    if (count < min_parallel || workers <= 1 || inside_pool) {
        body(0, count);
        return;
    }
    const int64_t per = (count + workers - 1) / workers;
    const int64_t parts = (count + per - 1) / per;
    if (!the_pool().run(count, per, parts, body)) {
        body(0, count);  // another thread's op holds the pool
    }
}

}  // namespace kael::cpu
