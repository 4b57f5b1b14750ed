#pragma once
// Typed errors. Messages name the op and the offending shapes, devices or dtypes.
#include <stdexcept>
#include <string>

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

}  // namespace kael
