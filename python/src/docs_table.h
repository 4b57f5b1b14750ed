#pragma once
// The table behind docs_functions.h's by_name, filled by docs_functions.cpp, docs_devices.cpp,
// docs_tensor.cpp and docs_classes.cpp: a text signature, then the text (inspect.signature reads
// the first line); a property's or a class's text alone.
#include <functional>
#include <map>
#include <string>

namespace kael::python::docs {

using Docs = std::map<std::string, std::string, std::less<>>;

inline std::string documented(const std::string& signature, const std::string& text) {
    return signature + "\n--\n\n" + text + "\n";
}

// The device, plugin, allocator and interchange functions' (docs_devices.cpp).
void add_device_docs(Docs& docs);
// The Tensor class's, its methods' and its properties' (docs_tensor.cpp).
void add_tensor_docs(Docs& docs);
// device, dtype, DeviceGraph, Record, the tokenizer, safe_open and kael.autograd's functions
// (docs_classes.cpp).
void add_class_docs(Docs& docs);

}  // namespace kael::python::docs
