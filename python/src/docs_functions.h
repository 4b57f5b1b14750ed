#pragma once
// Docstrings of kael's module-level functions (docs_functions.cpp, docs_devices.cpp), of the
// Tensor's methods and properties (docs_tensor.cpp) and of the other classes (docs_classes.cpp):
// a text signature, then what it does, its arguments, its result and an example. The bindings
// pass them where they define the function, method, property or class.
#include <string>
#include <string_view>

namespace kael::python::docs {

// The docstring of kael.<name>, of a class ("Tensor", "device") or of a member ("Tensor.view",
// "device.type"); nullptr when the table has none.
const char* by_name(std::string_view name);

// The docstring of Tensor.<member>, as by_name("Tensor.<member>").
inline const char* tensor(const std::string& member) { return by_name("Tensor." + member); }

// The docstring of Tensor.<name> when it is kael.<name> with self as its input: the function's
// signature with self for input, pointing to the function ("" when kael.<name> has none).
std::string method_of(std::string_view name);

}  // namespace kael::python::docs
