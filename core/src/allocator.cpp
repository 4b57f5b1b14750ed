#include "kael/allocator.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "allocator_internal.h"
#include "backend.h"
#include "kael/error.h"

namespace kael {

namespace detail {

namespace {

constexpr std::int64_t kSmallGranule = 512;
constexpr std::int64_t kLargeGranule = std::int64_t{1} << 20;
constexpr std::int64_t kLargeThreshold = std::int64_t{1} << 20;
constexpr std::int64_t kCacheLimit = std::int64_t{1} << 30;  // cached bytes kept per device
constexpr std::int64_t kLargestRequest = std::int64_t{1} << 62;

std::int64_t size_class(std::int64_t bytes) {
    const std::int64_t granule = bytes < kLargeThreshold ? kSmallGranule : kLargeGranule;
    return (bytes + granule - 1) / granule * granule;
}

// A test-and-set lock for the cache: its sections are a few dozen instructions, where an
// uncontended pthread mutex's lock and unlock cost more than the section (twice per tensor).
class SpinLock {
public:
    void lock() noexcept {
        while (held_.exchange(true, std::memory_order_acquire)) {
            while (held_.load(std::memory_order_relaxed)) {
                std::this_thread::yield();
            }
        }
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> held_{false};
};

class BlockCache {
public:
    BlockCache(const Backend* backend, int device) : backend_(backend), device_(device) {}

    void* allocate(std::int64_t bytes) {
        const std::int64_t size = size_class(bytes);
        {
            const std::lock_guard guard(lock_);
            auto& free_blocks = blocks_of(size);
            if (!free_blocks.empty()) {
                void* block = free_blocks.back();
                free_blocks.pop_back();
                stats_.cached_bytes -= size;
                ++stats_.hits;
                note_in_use(size);
                return block;
            }
        }
        void* block = nullptr;
        try {
            block = backend_->allocate(device_, size);
        } catch (const OutOfMemoryError&) {
            release_cached();  // the cache may hold what the device needs; retry once
            block = backend_->allocate(device_, size);
        }
        const std::lock_guard guard(lock_);
        ++stats_.misses;
        note_in_use(size);
        return block;
    }

    void release(void* block, std::int64_t bytes) noexcept {
        const std::int64_t size = size_class(bytes);
        const std::lock_guard guard(lock_);
        stats_.in_use_bytes -= size;
        if (stats_.cached_bytes + size > kCacheLimit) {
            ++stats_.system_releases;
            backend_->release(device_, block);
            return;
        }
        try {
            blocks_of(size).push_back(block);
            stats_.cached_bytes += size;
        } catch (...) {
            ++stats_.system_releases;
            backend_->release(device_, block);
        }
    }

    void release_cached() noexcept {
        const std::lock_guard guard(lock_);
        const auto release_all = [&](std::vector<void*>& blocks) {
            for (void* block : blocks) {
                backend_->release(device_, block);
                ++stats_.system_releases;
            }
            blocks.clear();
        };
        for (auto& blocks : small_) {
            release_all(blocks);
        }
        for (auto& [size, blocks] : large_) {
            release_all(blocks);
        }
        stats_.cached_bytes = 0;
    }

    AllocatorStats stats() {
        const std::lock_guard guard(lock_);
        return stats_;
    }

    void reset_peak() {
        const std::lock_guard guard(lock_);
        stats_.peak_in_use_bytes = stats_.in_use_bytes;
    }

private:
    // Free blocks of one size class: small classes by index (no tree walk per tensor).
    std::vector<void*>& blocks_of(std::int64_t size) {
        return size < kLargeThreshold ? small_[static_cast<std::size_t>(size / kSmallGranule)]
                                      : large_[size];
    }

    void note_in_use(std::int64_t size) {
        stats_.in_use_bytes += size;
        stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
    }

    const Backend* backend_;
    int device_;
    SpinLock lock_;
    std::vector<std::vector<void*>> small_ =
        std::vector<std::vector<void*>>(kLargeThreshold / kSmallGranule);
    std::map<std::int64_t, std::vector<void*>> large_;
    AllocatorStats stats_;
};

BlockCache& cache_of(const Backend& backend, int device) {
    // Caches are never destroyed, so each thread may remember its last one without the lock
    // (every tensor allocation and release passes here).
    thread_local struct {
        const Backend* backend = nullptr;
        int device = -1;
        BlockCache* cache = nullptr;
    } last;
    if (last.backend == &backend && last.device == device) {
        return *last.cache;
    }
    // Leaked on purpose: static tensors may free blocks after main returns.
    static auto* mutex = new std::mutex();
    static auto* caches = new std::map<std::pair<const Backend*, int>, BlockCache*>();
    const std::lock_guard lock(*mutex);
    BlockCache*& cache = (*caches)[{&backend, device}];
    if (cache == nullptr) {
        cache = new BlockCache(&backend, device);
    }
    last = {&backend, device, cache};
    return *cache;
}

}  // namespace

class RecordingPool : public std::enable_shared_from_this<RecordingPool> {
public:
    RecordingPool(const Backend* backend, int device) : backend_(backend), device_(device) {}

    [[nodiscard]] bool serves(const Backend& backend, int device) const {
        return &backend == backend_ && device == device_;
    }
    void* allocate(std::int64_t bytes);
    void release(void* block, std::int64_t bytes) noexcept;
    void retire() noexcept;

private:
    const Backend* backend_;
    int device_;
    std::mutex mutex_;
    bool retired_ = false;
    std::map<std::int64_t, std::vector<void*>> free_;
};

namespace {

// Which pool each recorded block belongs to; blocks counts them, so that release_block looks
// only while some exist.
struct PoolOwners {
    std::mutex mutex;
    std::unordered_map<void*, std::shared_ptr<RecordingPool>> owner;
    std::atomic<std::int64_t> blocks{0};
};
PoolOwners& pool_owners() {
    static auto* owners = new PoolOwners();  // leaked: blocks may be freed after main returns
    return *owners;
}
void forget_owner(void* block) {
    PoolOwners& owners = pool_owners();
    const std::lock_guard lock(owners.mutex);
    if (owners.owner.erase(block) != 0) {
        owners.blocks.fetch_sub(1, std::memory_order_relaxed);
    }
}
thread_local RecordingPool* routed_pool = nullptr;

}  // namespace

void* RecordingPool::allocate(std::int64_t bytes) {
    const std::int64_t size = size_class(bytes);
    {
        const std::lock_guard lock(mutex_);
        auto& blocks = free_[size];
        if (!blocks.empty()) {
            void* block = blocks.back();
            blocks.pop_back();
            return block;
        }
    }
    void* block = backend_->allocate(device_, size);
    try {
        PoolOwners& owners = pool_owners();
        const std::lock_guard lock(owners.mutex);
        owners.owner.emplace(block, shared_from_this());
        owners.blocks.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
        backend_->release(device_, block);
        throw;
    }
    return block;
}

void RecordingPool::release(void* block, std::int64_t bytes) noexcept {
    {
        const std::lock_guard lock(mutex_);
        if (!retired_) {
            try {
                free_[size_class(bytes)].push_back(block);
                return;
            } catch (...) {
                // no room to keep it: the graph is replayed with it freed, as with any lost block
            }
        }
    }
    forget_owner(block);
    backend_->release(device_, block);
}

void RecordingPool::retire() noexcept {
    std::map<std::int64_t, std::vector<void*>> blocks;
    {
        const std::lock_guard lock(mutex_);
        retired_ = true;
        blocks.swap(free_);
    }
    for (auto& [size, list] : blocks) {
        for (void* block : list) {
            forget_owner(block);
            backend_->release(device_, block);
        }
    }
}

std::shared_ptr<RecordingPool> open_recording_pool(const Backend& backend, int device) {
    auto pool = std::make_shared<RecordingPool>(&backend, device);
    routed_pool = pool.get();
    return pool;
}

void close_recording_pool() noexcept {
    routed_pool = nullptr;
}

void retire_recording_pool(const std::shared_ptr<RecordingPool>& pool) noexcept {
    if (pool) {
        pool->retire();
    }
}

void* allocate_block(const Backend& backend, int device, std::int64_t bytes) {
    // No device holds 2^62 bytes, and rounding a larger request up to its size class would
    // overflow: refuse it here, as every device would.
    if (bytes > kLargestRequest) {
        throw OutOfMemoryError("cannot allocate " + std::to_string(bytes) + " bytes on " +
                               backend.name() + ":" + std::to_string(device) +
                               ": more than any device holds");
    }
    if (routed_pool != nullptr && routed_pool->serves(backend, device)) {
        return routed_pool->allocate(bytes);
    }
    if (!caching_allocator_enabled()) {
        return backend.allocate(device, bytes);
    }
    return cache_of(backend, device).allocate(bytes);
}

void release_block(const Backend& backend, int device, void* block, std::int64_t bytes) noexcept {
    PoolOwners& owners = pool_owners();
    if (owners.blocks.load(std::memory_order_relaxed) > 0) {
        std::shared_ptr<RecordingPool> pool;
        {
            const std::lock_guard lock(owners.mutex);
            const auto found = owners.owner.find(block);
            if (found != owners.owner.end()) {
                pool = found->second;
            }
        }
        if (pool) {
            pool->release(block, bytes);
            return;
        }
    }
    if (!caching_allocator_enabled()) {
        backend.release(device, block);
        return;
    }
    cache_of(backend, device).release(block, bytes);
}

}  // namespace detail

bool caching_allocator_enabled() {
#if defined(KAEL_NO_CACHING_ALLOCATOR)
    return false;
#else
    static const bool enabled = [] {
        const char* setting = std::getenv("KAEL_NO_CACHING_ALLOCATOR");
        return setting == nullptr || std::string(setting).empty() || std::string(setting) == "0";
    }();
    return enabled;
#endif
}

AllocatorStats allocator_stats(const Device& device) {
    const detail::Backend& backend = detail::backend_for(device);
    return detail::cache_of(backend, device.index).stats();
}

void reset_peak_memory_stats(const Device& device) {
    const detail::Backend& backend = detail::backend_for(device);
    detail::cache_of(backend, device.index).reset_peak();
}

void empty_cache(const Device& device) {
    const detail::Backend& backend = detail::backend_for(device);
    detail::cache_of(backend, device.index).release_cached();
}

}  // namespace kael
