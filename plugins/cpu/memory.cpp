#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "cpu_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

constexpr std::align_val_t kAlignment{64};
// Blocks from 4 MiB up ask for transparent huge pages, as numpy's allocator does: faulting in a
// fresh large block 4 KiB at a time can cost more than the elementwise op that fills it.
constexpr int64_t kHugePageMinBytes = int64_t{1} << 22;

void advise_huge_pages(void* block, int64_t bytes) {
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto start = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t first = (start + page - 1) / page * page;
    const std::uintptr_t last = (start + static_cast<std::uintptr_t>(bytes)) / page * page;
    if (last > first) {
        // Only a hint: where the kernel declines, the block works with ordinary pages.
        madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
    }
}

void check_copy(int32_t device, void* target, const void* source, int64_t bytes) {
    check_device(device);
    plugin::check_copy_arguments(target, source, bytes);
}

}  // namespace

kael_status allocate(int32_t device, int64_t bytes, void** block) {
    return plugin::guarded("cpu.allocate", [&] {
        check_device(device);
        if (block == nullptr) {
            plugin::invalid("block is null");
        }
        if (bytes <= 0) {
            plugin::invalid("allocation size must be positive, got " + std::to_string(bytes));
        }
        *block = ::operator new(static_cast<size_t>(bytes), kAlignment);
        if (bytes >= kHugePageMinBytes) {
            advise_huge_pages(*block, bytes);
        }
    });
}

void release(int32_t /*device*/, void* block) {
    if (block != nullptr) {
        ::operator delete(block, kAlignment);
    }
}

kael_status copy_to_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("cpu.copy_to_device", [&] {
        check_copy(device, target, source, bytes);
        if (bytes > 0) {
            std::memcpy(target, source, static_cast<size_t>(bytes));
        }
    });
}

kael_status copy_to_host(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("cpu.copy_to_host", [&] {
        check_copy(device, target, source, bytes);
        if (bytes > 0) {
            std::memcpy(target, source, static_cast<size_t>(bytes));
        }
    });
}

kael_status copy_within_device(int32_t device, void* target, const void* source, int64_t bytes) {
    return plugin::guarded("cpu.copy_within_device", [&] {
        check_copy(device, target, source, bytes);
        if (bytes > 0) {
            std::memmove(target, source, static_cast<size_t>(bytes));  // tolerates overlap
        }
    });
}

kael_status synchronize(int32_t device) {
    return plugin::guarded("cpu.synchronize", [&] { check_device(device); });
}

}  // namespace kael::cpu
