#pragma once
// Helpers every plugin uses to keep C++ from crossing the ABI (the kit's guarded() and
// last_error()), plus names for messages.
#include "kael/plugin_api.h"
#include "kael/plugin_kit.h"

namespace kael::plugin {

inline const char* dtype_name(kael_dtype dtype) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return "f32";
        case KAEL_DTYPE_F64: return "f64";
        case KAEL_DTYPE_I64: return "i64";
        case KAEL_DTYPE_BOOL: return "bool";
        default: return "unknown dtype";
    }
}

}  // namespace kael::plugin
