#pragma once
// Helpers every plugin uses to keep C++ from crossing the ABI (the kit's guarded() and
// last_error()), plus names for messages.
#include <cstdint>
#include <string>

#include "kael/plugin_api.h"
#include "kael/plugin_kit.h"

namespace kael::plugin {

inline const char* dtype_name(kael_dtype dtype) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return "f32";
        case KAEL_DTYPE_F64: return "f64";
        case KAEL_DTYPE_I64: return "i64";
        case KAEL_DTYPE_BOOL: return "bool";
        case KAEL_DTYPE_BF16: return "bf16";
        case KAEL_DTYPE_F16: return "f16";
        case KAEL_DTYPE_I32: return "i32";
        case KAEL_DTYPE_I16: return "i16";
        case KAEL_DTYPE_I8: return "i8";
        case KAEL_DTYPE_U8: return "u8";
        default: return "unknown dtype";
    }
}

// The copy slots' argument checks (copy_to_device, copy_to_host, copy_within_device), after
// the plugin has checked the device index.
inline void check_copy_arguments(const void* target, const void* source, std::int64_t bytes) {
    if (bytes < 0) {
        invalid("negative byte count " + std::to_string(bytes));
    }
    if (bytes > 0 && (target == nullptr || source == nullptr)) {
        invalid("null pointer for a copy of " + std::to_string(bytes) + " bytes");
    }
}

}  // namespace kael::plugin
