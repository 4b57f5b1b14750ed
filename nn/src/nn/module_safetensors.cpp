// Module::save_safetensors and Module::load_safetensors: every named parameter, by name.
#include "kael/nn.h"
#include "kael/safetensors.h"
#include "nn_internal.h"

namespace kael::nn {

void Module::save_safetensors(const std::string& path) const {
    kael::save_safetensors(path, named_state_tensors(true));
}

IncompatibleKeys Module::load_safetensors(const std::string& path, bool strict) {
    return detail::apply_state(*this, kael::load_safetensors(path), strict,
                               "load_safetensors '" + path + "'");
}

}  // namespace kael::nn
