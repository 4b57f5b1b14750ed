#pragma once
// A loaded plugin as the core sees it: the table, its record, and checked calls that turn a
// plugin status into a typed kael exception.
#include <atomic>
#include <cstddef>
#include <string>

#include "kael/error.h"
#include "kael/plugin_api.h"
#include "kael/registry.h"

namespace kael::detail {

// Plugin tables may be older (smaller) than ours: a slot past struct_size is absent.
#define KAEL_HAS_SLOT(table, slot)                                                  \
    ((table)->struct_size >= offsetof(kael_plugin, slot) + sizeof((table)->slot) && \
     (table)->slot != nullptr)
// A data field (not a slot) the table is large enough to hold.
#define KAEL_HAS_FIELD(table, field) \
    ((table)->struct_size >= offsetof(kael_plugin, field) + sizeof((table)->field))

// What a table declares about its memory (memory_flags), or what an older table's kind implies.
struct MemoryKind {
    bool host_addressable = false;
    int dlpack_device_type = 0;
};
MemoryKind memory_kind(const kael_plugin* table);

// KAEL_STATUS_UNSUPPORTED from a plugin: a TypeError to the user, unless the call can fall back
// to the cpu plugin (run() in kernel_run.h catches it there).
class UnsupportedByPlugin : public TypeError {
public:
    using TypeError::TypeError;
};

class Backend {
public:
    Backend(const kael_plugin* table, std::size_t record_index);

    // The plugin's table as the core calls it: the model kernels come from the plugin's
    // KAEL_EXTENSION_MODEL extension when it has one (plugin_extensions.h), else from the
    // table's own slots of those names.
    [[nodiscard]] const kael_plugin* table() const { return &table_; }
    [[nodiscard]] std::string name() const { return table_.name; }
    // KAEL_MEMORY_HOST_ADDRESSABLE, read from the table or inferred from an older one's kind.
    [[nodiscard]] bool host_addressable() const { return memory_.host_addressable; }
    // The DLPack device type of its memory; 0 when it has none.
    [[nodiscard]] int dlpack_device_type() const { return memory_.dlpack_device_type; }
    [[nodiscard]] std::size_t record_index() const { return record_index_; }
    // Whether anything was ever allocated on it: then another plugin may not take its type over.
    [[nodiscard]] bool has_allocated() const { return allocated_.load(std::memory_order_relaxed); }

    // Throws the kael exception matching status, with the plugin's message and what.
    void check(kael_status status, const char* what) const;
    // The plugin's extension `name` (plugin_extensions.h), or null where it has none or its
    // struct_size is below least_size (an older plugin's, lacking what the caller reads).
    [[nodiscard]] const void* extension(const char* name, std::size_t least_size = 0) const;
    // For a call the plugin may decline before writing anything (an extension's kernel): false
    // when it did (KAEL_STATUS_UNSUPPORTED, the caller composes instead), else check's.
    [[nodiscard]] bool served(kael_status status, const char* what) const;

    [[nodiscard]] void* allocate(int device, std::int64_t bytes) const;
    void release(int device, void* block) const noexcept;
    void copy_to_device(int device, void* target, const void* source, std::int64_t bytes) const;
    void copy_to_host(int device, void* target, const void* source, std::int64_t bytes) const;
    void copy_within(int device, void* target, const void* source, std::int64_t bytes) const;
    void synchronize(int device) const;

private:
    kael_plugin table_;
    std::size_t record_index_;
    MemoryKind memory_;
    mutable std::atomic<bool> allocated_{false};
};

// The backend serving a device; throws DeviceError with the reason when none does.
const Backend& backend_for(const Device& device);
// The cpu plugin's backend, used for host fallbacks.
const Backend& cpu_backend();
// TypeError for a slot the cpu plugin itself lacks, naming the plugin, the slot and versions.
[[noreturn]] void throw_missing_on_cpu(const Backend& host, const char* slot);
void count_fallback(const Backend& backend, const char* slot);

}  // namespace kael::detail
