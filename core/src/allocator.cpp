#include "kael/allocator.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
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

std::int64_t size_class(std::int64_t bytes) {
    const std::int64_t granule = bytes < kLargeThreshold ? kSmallGranule : kLargeGranule;
    return (bytes + granule - 1) / granule * granule;
}

class BlockCache {
public:
    BlockCache(const Backend* backend, int device) : backend_(backend), device_(device) {}

    void* allocate(std::int64_t bytes) {
        const std::int64_t size = size_class(bytes);
        {
            const std::lock_guard lock(mutex_);
            auto& free_blocks = free_[size];
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
        const std::lock_guard lock(mutex_);
        ++stats_.misses;
        note_in_use(size);
        return block;
    }

    void release(void* block, std::int64_t bytes) noexcept {
        const std::int64_t size = size_class(bytes);
        const std::lock_guard lock(mutex_);
        stats_.in_use_bytes -= size;
        if (stats_.cached_bytes + size > kCacheLimit) {
            ++stats_.system_releases;
            backend_->release(device_, block);
            return;
        }
        try {
            free_[size].push_back(block);
            stats_.cached_bytes += size;
        } catch (...) {
            ++stats_.system_releases;
            backend_->release(device_, block);
        }
    }

    void release_cached() noexcept {
        const std::lock_guard lock(mutex_);
        for (auto& [size, blocks] : free_) {
            for (void* block : blocks) {
                backend_->release(device_, block);
                ++stats_.system_releases;
            }
            blocks.clear();
        }
        stats_.cached_bytes = 0;
    }

    AllocatorStats stats() {
        const std::lock_guard lock(mutex_);
        return stats_;
    }

private:
    void note_in_use(std::int64_t size) {
        stats_.in_use_bytes += size;
        stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
    }

    const Backend* backend_;
    int device_;
    std::mutex mutex_;
    std::map<std::int64_t, std::vector<void*>> free_;
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

void* allocate_block(const Backend& backend, int device, std::int64_t bytes) {
    if (!caching_allocator_enabled()) {
        return backend.allocate(device, bytes);
    }
    return cache_of(backend, device).allocate(bytes);
}

void release_block(const Backend& backend, int device, void* block, std::int64_t bytes) noexcept {
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

void empty_cache(const Device& device) {
    const detail::Backend& backend = detail::backend_for(device);
    detail::cache_of(backend, device.index).release_cached();
}

}  // namespace kael
