#pragma once
// The table behind docs_functions.h's by_name, filled by docs_functions.cpp and
// docs_devices.cpp: a text signature, then the text (inspect.signature reads the first line).
#include <functional>
#include <map>
#include <string>

namespace kael::python::docs::functions {

using Docs = std::map<std::string, std::string, std::less<>>;

inline std::string documented(const std::string& signature, const std::string& text) {
    return signature + "\n--\n\n" + text + "\n";
}

// The device, plugin, allocator and interchange functions' (docs_devices.cpp).
void add_device_docs(Docs& docs);

}  // namespace kael::python::docs::functions
