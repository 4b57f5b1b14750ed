#pragma once
// Helpers every plugin uses to keep C++ from crossing the ABI: a per-thread error message and a
// guard that turns exceptions into status codes.
#include <cstdio>
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

inline const char* last_error() { return last_error_storage().c_str(); }

inline kael_status fail(kael_status status, const std::string& message) {
    last_error_storage() = message;
    return status;
}

// Runs body (returning void) and converts any exception into a status and last_error().
template <typename Body> kael_status guarded(const char* entry, Body&& body) noexcept {
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

[[noreturn]] inline void unsupported(const std::string& what) {
    throw StatusError(KAEL_STATUS_UNSUPPORTED, what);
}
[[noreturn]] inline void invalid(const std::string& what) {
    throw StatusError(KAEL_STATUS_INVALID_ARGUMENT, what);
}

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
