#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "emulated_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

constexpr std::uint64_t kAlignment = 256;  // what cudaMalloc guarantees

// Live device blocks by start address, so copies and kernels can prove that a pointer the core
// calls "device memory" really is one: a host pointer slipped into a device call fails here.
struct BlockTable {
    std::mutex mutex;
    std::map<std::uintptr_t, std::uint64_t> sizes;
    std::uint64_t in_use = 0;
};

BlockTable& blocks() {
    static auto* table = new BlockTable;  // never destroyed: blocks may be released after exit
    return *table;
}

std::uint64_t host_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0
               ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
               : 0;
}

bool inside_block(const BlockTable& table, std::uintptr_t address, std::uint64_t bytes) {
    auto after = table.sizes.upper_bound(address);
    if (after == table.sizes.begin()) {
        return false;
    }
    const auto& [start, size] = *std::prev(after);
    return address - start <= size && bytes <= size - (address - start);
}

void check_copy(int32_t device, int64_t bytes, const void* target, const void* source) {
    check_device(device);
    plugin::check_copy_arguments(target, source, bytes);
}

}  // namespace

kernels::PendingIndexError& pending_index_error() {
    static auto* pending = new kernels::PendingIndexError;  // never destroyed, as blocks()
    return *pending;
}

void check_device(int32_t device) {
    if (device != 0) {
        plugin::invalid("emulated has one device (0), got device " + std::to_string(device));
    }
}

std::uint64_t bytes_in_use() {
    BlockTable& table = blocks();
    const std::lock_guard lock(table.mutex);
    return table.in_use;
}

std::uint64_t memory_total() {
    return host_memory();
}

void* allocate_block(int64_t bytes) {
    if (bytes <= 0) {
        plugin::invalid("allocation size must be positive, got " + std::to_string(bytes));
    }
    const std::uint64_t rounded =
        (static_cast<std::uint64_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment;
    BlockTable& table = blocks();
    const std::lock_guard lock(table.mutex);
    const std::uint64_t total = host_memory();
    if (total != 0 && rounded > total - table.in_use) {
        throw plugin::StatusError(KAEL_STATUS_OUT_OF_MEMORY,
                                  "cannot allocate " + std::to_string(bytes) + " bytes (" +
                                      std::to_string(total - table.in_use) + " free)");
    }
    void* block = std::aligned_alloc(kAlignment, rounded);
    if (block == nullptr) {
        throw plugin::StatusError(KAEL_STATUS_OUT_OF_MEMORY,
                                  "cannot allocate " + std::to_string(bytes) + " bytes");
    }
    table.sizes.emplace(reinterpret_cast<std::uintptr_t>(block), static_cast<std::uint64_t>(bytes));
    table.in_use += rounded;
    return block;
}

void release_block(void* block) {
    if (block == nullptr) {
        return;
    }
    BlockTable& table = blocks();
    const std::lock_guard lock(table.mutex);
    const auto found = table.sizes.find(reinterpret_cast<std::uintptr_t>(block));
    if (found == table.sizes.end()) {
        return;  // release must not fail; an unknown block is not ours to free
    }
    table.in_use -= (found->second + kAlignment - 1) / kAlignment * kAlignment;
    table.sizes.erase(found);
    std::free(block);
}

void check_on_device(const void* address, int64_t bytes, const char* what) {
    BlockTable& table = blocks();
    const std::lock_guard lock(table.mutex);
    if (!inside_block(table, reinterpret_cast<std::uintptr_t>(address),
                      static_cast<std::uint64_t>(bytes))) {
        plugin::invalid(std::string(what) + " (" + std::to_string(bytes) +
                        " bytes) is not inside a block of emulated device memory");
    }
}

kael_status allocate(int32_t device, int64_t bytes, void** block) {
    return plugin::guarded("emulated.allocate", [&] {
        check_device(device);
        if (block == nullptr) {
            plugin::invalid("block is null");
        }
        *block = allocate_block(bytes);
    });
}

void release(int32_t /*device*/, void* block) {
    if (!keep_for_graph(block)) {  // replays of a graph recording now still use it
        release_block(block);
    }
}

kael_status copy_to_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("emulated.copy_to_device", [&] {
        refuse_while_recording("copy_to_device");
        check_copy(device, bytes, target, source);
        if (bytes > 0) {
            check_on_device(target, bytes, "copy_to_device target");
            std::memcpy(target, source, static_cast<size_t>(bytes));
        }
    });
}

kael_status copy_to_host(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("emulated.copy_to_host", [&] {
        refuse_while_recording("copy_to_host");
        check_copy(device, bytes, target, source);
        if (bytes > 0) {
            check_on_device(source, bytes, "copy_to_host source");
            std::memcpy(target, source, static_cast<size_t>(bytes));
        }
        pending_index_error().report();
    });
}

kael_status copy_within_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("emulated.copy_within_device", [&] {
        check_copy(device, bytes, target, source);
        if (bytes > 0) {
            check_on_device(target, bytes, "copy_within_device target");
            check_on_device(source, bytes, "copy_within_device source");
            run_or_record([target, source, bytes] {
                std::memmove(target, source, static_cast<size_t>(bytes));  // tolerates overlap
            });
        }
    });
}

kael_status synchronize(int32_t device) {
    return plugin::guarded("emulated.synchronize", [&] {
        refuse_while_recording("synchronize");
        check_device(device);
        pending_index_error().report();
    });
}

}  // namespace kael::emulated
