#pragma once
// A loaded plugin as the core sees it: the table, its record, and checked calls that turn a
// plugin status into a typed kael exception.
#include <atomic>
#include <cstddef>
#include <string>

#include "kael/plugin_api.h"
#include "kael/registry.h"

namespace kael::detail {

// Plugin tables may be older (smaller) than ours: a slot past struct_size is absent.
#define KAEL_HAS_SLOT(table, slot)                                                    \
    ((table)->struct_size >= offsetof(kael_plugin, slot) + sizeof((table)->slot) && \
     (table)->slot != nullptr)

class Backend {
public:
    Backend(const kael_plugin* table, std::size_t record_index)
        : table_(table), record_index_(record_index) {}

    [[nodiscard]] const kael_plugin* table() const { return table_; }
    [[nodiscard]] std::string name() const { return table_->name; }
    [[nodiscard]] bool host_addressable() const { return table_->kind == KAEL_PLUGIN_KIND_CPU; }
    [[nodiscard]] std::size_t record_index() const { return record_index_; }

    // Throws the kael exception matching status, with the plugin's message and what.
    void check(kael_status status, const char* what) const;

    [[nodiscard]] void* allocate(int device, std::int64_t bytes) const;
    void release(int device, void* block) const noexcept;
    void copy_to_device(int device, void* target, const void* source, std::int64_t bytes) const;
    void copy_to_host(int device, void* target, const void* source, std::int64_t bytes) const;
    void copy_within(int device, void* target, const void* source, std::int64_t bytes) const;
    void synchronize(int device) const;

private:
    const kael_plugin* table_;
    std::size_t record_index_;
};

// The backend serving a device; throws DeviceError with the reason when none does.
const Backend& backend_for(const Device& device);
// The cpu plugin's backend, used for host fallbacks.
const Backend& cpu_backend();
void count_fallback(const Backend& backend, const char* slot);

}  // namespace kael::detail
