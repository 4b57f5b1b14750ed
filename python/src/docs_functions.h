#pragma once
// Docstrings of kael's module-level functions (docs_functions.cpp): a text signature, then what
// the function does, its arguments, its result and an example. The bindings that define them
// (bind_ops.cpp, bind_devices.cpp, bind_dlpack.cpp, bind_autograd.cpp) pass them where they are
// defined.
#include <string_view>

namespace kael::python::docs::functions {

// The docstring of kael.<name>, or nullptr when it has none here.
const char* by_name(std::string_view name);

}  // namespace kael::python::docs::functions
