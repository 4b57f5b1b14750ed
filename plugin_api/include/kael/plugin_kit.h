/* kael plugin kit: C++ helpers for writing a plugin against plugin_api.h, shipped in kael-dev.
 * Header-only and optional (the ABI is plugin_api.h alone); kael's own plugins use it too.
 * Guide: docs/plugins.md. What it gives:
 *  - guarded(): runs a slot's body and turns any C++ exception into a kael_status plus the
 *    per-thread message last_error() returns, so no exception crosses the ABI;
 *  - Description + make_table(): the identity part of the table filled in one place;
 *  - fill_device_properties(): writes only the fields the caller's struct has room for;
 *  - model_extension(): an extension slot serving the model kernels (KAEL_EXTENSION_MODEL), and
 *    with_model_slots(): those kernels in the table's own slots, for a core before 1.10;
 *  - KAEL_PLUGIN_DEFINE_ENTRY(): the one exported symbol, building the table once. */
#ifndef KAEL_PLUGIN_KIT_H
#define KAEL_PLUGIN_KIT_H

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "kael/plugin_api.h"

namespace kael::plugin {

// Thrown inside a plugin to return a specific status with a message.
class StatusError : public std::runtime_error {
public:
    StatusError(kael_status status, const std::string& message)
        : std::runtime_error(message), status_(status) {}
    [[nodiscard]] kael_status status() const { return status_; }

private:
    kael_status status_;
};

inline std::string& last_error_storage() {
    thread_local std::string message;
    return message;
}

// The table's last_error slot: the message of this thread's last failed call.
inline const char* last_error() {
    return last_error_storage().c_str();
}

inline kael_status fail(kael_status status, const std::string& message) {
    last_error_storage() = message;
    return status;
}

// Runs body (returning void) and converts any exception into a status and last_error(); entry
// ("toy.fill") prefixes the message so the core's error names the slot that failed.
template <typename Body>
kael_status guarded(const char* entry, Body&& body) noexcept {
    try {
        body();
        return KAEL_STATUS_OK;
    } catch (const StatusError& error) {
        // An index error's message is the user's op's own ("gather: index 5 is out of ...").
        return error.status() == KAEL_STATUS_INDEX_ERROR
                   ? fail(error.status(), error.what())
                   : fail(error.status(), std::string(entry) + ": " + error.what());
    } catch (const std::bad_alloc&) {
        return fail(KAEL_STATUS_OUT_OF_MEMORY, std::string(entry) + ": out of memory");
    } catch (const std::exception& error) {
        return fail(KAEL_STATUS_INTERNAL, std::string(entry) + ": " + error.what());
    } catch (...) {
        return fail(KAEL_STATUS_INTERNAL, std::string(entry) + ": unknown exception");
    }
}

// KAEL_STATUS_UNSUPPORTED: the core then runs this call on the cpu plugin (counted).
[[noreturn]] inline void unsupported(const std::string& what) {
    throw StatusError(KAEL_STATUS_UNSUPPORTED, what);
}
[[noreturn]] inline void invalid(const std::string& what) {
    throw StatusError(KAEL_STATUS_INVALID_ARGUMENT, what);
}

// "GCC 12.2.0", "Clang 16.0.6": the usual first part of build_info.
inline std::string compiler_description() {
#if defined(__clang__)
    return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("GCC ") + __VERSION__;
#else
    return "unknown";
#endif
}

// What a plugin says about itself; make_table() copies it into a table.
struct Description {
    const char* name = nullptr;  // matches kael_plugin_<name>.so
    const char* version = "0.1.0";
    kael_plugin_kind kind = KAEL_PLUGIN_KIND_GPU;
    int32_t priority = 0;               // among plugins of one device type
    const char* device_type = nullptr;  // "toy": the Device type it serves
    uint32_t memory_flags = 0;          // KAEL_MEMORY_* bits
    int32_t dlpack_device_type = 0;     // DLPack DLDeviceType of the memory; 0: none
    uint32_t dtype_flags = 0;           // KAEL_DTYPE_FLAG_* bits: what fill and convert take
    std::string build_info;             // "compiler=...; ..."
    // probe(): the device count, or a probe function of the plugin's own.
    int32_t device_count = 1;
    kael_status (*probe)(int32_t* device_count, const char** reason) = nullptr;
};

namespace kit_detail {
inline int32_t& fixed_device_count() {
    static int32_t count = 0;
    return count;
}
inline kael_status fixed_probe(int32_t* device_count, const char** reason) {
    return guarded("probe", [&] {
        if (device_count == nullptr) {
            invalid("device_count is null");
        }
        *device_count = fixed_device_count();
        if (reason != nullptr) {
            *reason = fixed_device_count() == 0 ? "the plugin was built with no devices" : nullptr;
        }
    });
}
}  // namespace kit_detail

// A table of this ABI version with the description filled in; the caller assigns the memory,
// runtime and kernel slots. Call once (the entry macro does): the strings are kept for good.
inline kael_plugin make_table(const Description& description) {
    kael_plugin table{};
    table.struct_size = sizeof(kael_plugin);
    table.abi_major = KAEL_ABI_MAJOR;
    table.abi_minor = KAEL_ABI_MINOR;
    table.name = description.name;
    table.version = description.version;
    table.kind = description.kind;
    table.priority = description.priority;
    table.device_type = description.device_type;
    table.build_info = (new std::string(description.build_info))->c_str();  // lives for good
    table.memory_flags = description.memory_flags;
    table.dlpack_device_type = description.dlpack_device_type;
    table.dtype_flags = description.dtype_flags;
    table.last_error = last_error;
    if (description.probe != nullptr) {
        table.probe = description.probe;
    } else {
        kit_detail::fixed_device_count() = description.device_count;
        table.probe = kit_detail::fixed_probe;
    }
    return table;
}

// Writes a device's properties into the caller's struct, each field only when the caller's
// struct_size has room for it (an older core passes a smaller struct).
inline void fill_device_properties(kael_device_properties* properties, const char* name,
                                   uint64_t memory_total, uint64_t memory_free,
                                   int32_t capability_major = 0, int32_t capability_minor = 0) {
    if (properties == nullptr || properties->struct_size < KAEL_DEVICE_PROPERTIES_SIZE_1_0) {
        invalid("kael_device_properties is null or its struct_size too small");
    }
    const std::size_t size = properties->struct_size;
#define KAEL_KIT_FITS(field) \
    (size >= offsetof(kael_device_properties, field) + sizeof(properties->field))
    if (KAEL_KIT_FITS(name)) {
        const std::size_t length = std::min(std::strlen(name), sizeof(properties->name) - 1);
        std::memcpy(properties->name, name, length);  // cut to fit, always NUL-terminated
        properties->name[length] = '\0';
    }
    if (KAEL_KIT_FITS(memory_total)) properties->memory_total = memory_total;
    if (KAEL_KIT_FITS(memory_free)) properties->memory_free = memory_free;
    if (KAEL_KIT_FITS(capability_major)) properties->capability_major = capability_major;
    if (KAEL_KIT_FITS(capability_minor)) properties->capability_minor = capability_minor;
#undef KAEL_KIT_FITS
}

// table with the model kernels of its KAEL_EXTENSION_MODEL extension, when it has one, in the
// table's slots of their names (every one, a NULL one included): what a core before 1.10, which
// asks no extension, must be given, and how the core itself reads a table. table's extension
// slot must lie within its struct_size.
inline kael_plugin with_model_slots(kael_plugin table) {
    const auto* model = table.extension == nullptr ? nullptr
                                                   : static_cast<const kael_model_kernels*>(
                                                         table.extension(KAEL_EXTENSION_MODEL));
    if (model == nullptr) {
        return table;
    }
#define KAEL_KIT_MODEL_SLOT(kernel)                                                        \
    table.kernel = model->struct_size >= offsetof(kael_model_kernels, kernel) + sizeof(void*) \
                       ? model->kernel                                                    \
                       : nullptr;
    KAEL_MODEL_KERNELS(KAEL_KIT_MODEL_SLOT)
#undef KAEL_KIT_MODEL_SLOT
    return table;
}

// The extension slot of a plugin whose one extension is its model kernels (a static table):
//   const void* extension(const char* name) { return model_extension(name, kernels()); }
inline const void* model_extension(const char* name, const kael_model_kernels& kernels) {
    return name != nullptr && std::strcmp(name, KAEL_EXTENSION_MODEL) == 0 ? &kernels : nullptr;
}

}  // namespace kael::plugin

/* Defines the one exported symbol: make_table_function() builds the table at the first query,
 * once; an exception there is "no plugin table" for the core, not a crash. A core before 1.10
 * gets the model kernels in the table's own slots (with_model_slots). */
#define KAEL_PLUGIN_DEFINE_ENTRY(make_table_function)                                  \
    extern "C" KAEL_PLUGIN_EXPORT const kael_plugin* kael_plugin_query(                \
        uint32_t /*core_abi_major*/, uint32_t core_abi_minor) {                        \
        try {                                                                          \
            static const kael_plugin table = make_table_function();                    \
            if (core_abi_minor >= 10) {                                                \
                return &table;                                                         \
            }                                                                          \
            static const kael_plugin older = ::kael::plugin::with_model_slots(table);  \
            return &older;                                                             \
        } catch (...) {                                                                \
            return nullptr;                                                            \
        }                                                                              \
    }

#endif /* KAEL_PLUGIN_KIT_H */
