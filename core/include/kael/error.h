#pragma once
// Typed errors. Messages name the op and the offending shapes, devices or dtypes.
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace kael {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
class ValueError : public Error {
public:
    using Error::Error;
};
class TypeError : public Error {
public:
    using Error::Error;
};
class IndexError : public Error {
public:
    using Error::Error;
};
class OutOfMemoryError : public Error {
public:
    using Error::Error;
};
// A device or plugin is missing, failed to load, or reported a runtime failure.
class DeviceError : public Error {
public:
    using Error::Error;
};

// An operating-system call failed: code() is its errno and path() the file concerned (may be
// empty). what() reads "<context> '<path>': <OS reason>"; Python raises the OSError subclass
// that the errno selects (FileNotFoundError, PermissionError, IsADirectoryError, ...).
class OSError : public Error {
public:
    OSError(int code, const std::string& context, std::string path = {})
        : Error(context + (path.empty() ? "" : " '" + path + "'") + ": " +
                std::generic_category().message(code)),
          code_(code),
          path_(std::move(path)),
          reason_(context + ": " + std::generic_category().message(code)) {}
    [[nodiscard]] int code() const noexcept { return code_; }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    // what() without the path, for callers (like Python's OSError) that print the path apart.
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

private:
    int code_;
    std::string path_;
    std::string reason_;
};

}  // namespace kael
