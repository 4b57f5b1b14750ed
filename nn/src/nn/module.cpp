// Module bookkeeping (registration, moves, train/eval) and load_state_dict.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "kael/autograd.h"
#include "kael/nn.h"
#include "nn_internal.h"

namespace kael::nn {

namespace detail {

void require_positive(std::int64_t value, const char* who, const char* field) {
    if (value <= 0) {
        throw ValueError(std::string(who) + ": " + field + " must be positive, got " +
                         std::to_string(value));
    }
}

void require_probability(double p, const char* who, const char* field) {
    if (!(p >= 0 && p < 1)) {  // NaN fails too
        throw ValueError(std::string(who) + ": " + field + " must be in [0, 1), got " +
                         format_number(p));
    }
}

std::string format_number(double value) {
    std::ostringstream text;
    text << value;
    return text.str();
}

std::string printable_name(const std::string& name) {
    std::string text;
    for (const char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
            text += c;
        } else {
            char escaped[5];
            std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
            text += escaped;
        }
    }
    return "'" + text + "'";
}

namespace {

std::string name_list(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) {
        text += (text.empty() ? "" : ", ") + printable_name(name);
    }
    return text;
}

}  // namespace

IncompatibleKeys apply_state(Module& module,
                             const std::vector<std::pair<std::string, Tensor>>& state,
                             bool strict, const std::string& op) {
    std::map<std::string, const Tensor*> by_name;
    for (const auto& [name, value] : state) {
        if (!by_name.emplace(name, &value).second) {
            throw ValueError(op + ": parameter " + printable_name(name) + " appears twice");
        }
    }
    // Tied parameters (one tensor under several names) form a group that any of its names
    // fills; a group none of them fills is missing under its first name.
    std::map<const void*, std::vector<std::string>> groups;
    std::vector<std::pair<std::string, Tensor>> named;  // each tensor once, by first name
    for (const auto& [name, parameter] : module.named_state_tensors(false)) {
        auto& names = groups[&parameter.impl()];
        if (names.empty()) {
            named.emplace_back(name, parameter);
        }
        names.push_back(name);
    }
    IncompatibleKeys result;
    // Everything is checked and converted first: a failure leaves the module unchanged.
    std::vector<std::pair<Tensor, Tensor>> writes;  // parameter, value on its device and dtype
    for (const auto& [first, parameter] : named) {
        bool filled = false;
        for (const std::string& name : groups[&parameter.impl()]) {
            const auto found = by_name.find(name);
            if (found == by_name.end()) {
                continue;
            }
            const Tensor& value = *found->second;
            if (!value.defined()) {
                throw TypeError(op + ": parameter " + printable_name(name) + " is not a tensor");
            }
            if (value.shape() != parameter.shape()) {
                throw ValueError(op + ": size mismatch for " + printable_name(name) +
                                 ": the state has shape " + to_string(value.shape()) +
                                 ", the module's parameter has shape " +
                                 to_string(parameter.shape()));
            }
            const NoGradGuard guard;
            writes.emplace_back(parameter,
                                value.detach().to(parameter.dtype()).to(parameter.device()));
            by_name.erase(found);
            filled = true;
        }
        if (!filled) {
            result.missing_keys.push_back(first);
        }
    }
    for (const auto& entry : state) {
        if (by_name.count(entry.first) != 0) {
            result.unexpected_keys.push_back(entry.first);
        }
    }
    if (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty())) {
        std::string message = op + ": the state does not match the module's parameters";
        if (!result.missing_keys.empty()) {
            message += "; missing: " + name_list(result.missing_keys);
        }
        if (!result.unexpected_keys.empty()) {
            message += "; unexpected: " + name_list(result.unexpected_keys);
        }
        throw ValueError(message);
    }
    const NoGradGuard guard;
    for (auto& [parameter, value] : writes) {
        parameter.copy_(value);
    }
    return result;
}

}  // namespace detail

Tensor Module::forward(const Tensor&) {
    throw TypeError("this module has no single-tensor forward");
}

Tensor& Module::register_parameter(const std::string& name, const Tensor& value) {
    Tensor& slot = owned_.emplace_back();
    register_parameter(name, slot, value);
    return slot;
}

void Module::register_parameter(const std::string& name, Tensor& slot, const Tensor& value) {
    slot = value.detach().set_requires_grad(true);
    parameters_.emplace_back(name, &slot);
}

bool Module::unregister(const std::string& name) {
    const auto parameter = std::find_if(parameters_.begin(), parameters_.end(),
                                        [&](const auto& entry) { return entry.first == name; });
    if (parameter != parameters_.end()) {
        *parameter->second = Tensor();  // an owned slot is not reused; its memory goes now
        parameters_.erase(parameter);
        return true;
    }
    const auto buffer = std::find_if(buffers_.begin(), buffers_.end(),
                                     [&](const Buffer& entry) { return entry.name == name; });
    if (buffer != buffers_.end()) {
        *buffer->slot = Tensor();
        buffers_.erase(buffer);
        return true;
    }
    const auto child = std::find_if(children_.begin(), children_.end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (child != children_.end()) {
        children_.erase(child);
        return true;
    }
    return false;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool remove_duplicate) const {
    std::vector<std::pair<std::string, Tensor>> result;
    for (const auto& [name, slot] : parameters_) {
        result.emplace_back(name, *slot);
    }
    for (const auto& [prefix, child] : children_) {
        for (const auto& [name, parameter] : child->named_parameters(false)) {
            result.emplace_back(prefix + "." + name, parameter);
        }
    }
    if (remove_duplicate) {
        std::set<const void*> seen;
        std::erase_if(result, [&](const auto& entry) {
            return !seen.insert(&entry.second.impl()).second;
        });
    }
    return result;
}

namespace {

// The module holding the last part of a dotted path, and that part.
std::pair<const Module*, std::string> resolve_path(const Module& root, const std::string& path,
                                                   const char* op) {
    const auto dot = path.rfind('.');
    if (dot == std::string::npos) {
        return {&root, path};
    }
    const Module* owner = root.get_submodule(path.substr(0, dot)).get();
    if (owner == nullptr) {
        throw ValueError(std::string(op) + ": no module at " + detail::printable_name(path));
    }
    return {owner, path.substr(dot + 1)};
}

}  // namespace

std::shared_ptr<Module> Module::get_submodule(const std::string& path) const {
    const Module* module = this;
    std::shared_ptr<Module> found;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t dot = std::min(path.find('.', start), path.size());
        const std::string part = path.substr(start, dot - start);
        const auto child = std::find_if(module->children_.begin(), module->children_.end(),
                                        [&](const auto& entry) { return entry.first == part; });
        if (child == module->children_.end()) {
            throw ValueError("get_submodule: no submodule " + detail::printable_name(path) +
                             " (no " + detail::printable_name(part) + " in it)");
        }
        found = child->second;
        module = found.get();
        start = dot + 1;
    }
    return found;
}

Tensor Module::get_parameter(const std::string& path) const {
    const auto [owner, name] = resolve_path(*this, path, "get_parameter");
    for (const auto& [own, slot] : owner->parameters_) {
        if (own == name) {
            return *slot;
        }
    }
    throw ValueError("get_parameter: no parameter " + detail::printable_name(path));
}

void Module::set_parameter(const std::string& path, const Tensor& value) {
    if (!value.defined()) {
        throw ValueError("set_parameter: the value for " + detail::printable_name(path) +
                         " is not a tensor");
    }
    const auto [owner, name] = resolve_path(*this, path, "set_parameter");
    for (const auto& [own, slot] : owner->parameters_) {
        if (own == name) {
            *slot = value.is_leaf() && value.requires_grad() ? value
                                                             : value.detach().set_requires_grad(true);
            return;
        }
    }
    throw ValueError("set_parameter: no parameter " + detail::printable_name(path));
}

std::vector<Tensor> Module::parameters() const {
    std::vector<Tensor> result;
    for (const auto& named : named_parameters()) {
        result.push_back(named.second);
    }
    return result;
}

std::int64_t Module::parameter_count() const {
    std::int64_t count = 0;
    for (const Tensor& parameter : parameters()) {
        count += parameter.numel();
    }
    return count;
}

void Module::zero_grad() {
    for (const Tensor& parameter : parameters()) {
        parameter.set_grad(Tensor());
    }
}

void Module::to(const Device& device) {
    const NoGradGuard guard;
    for (Tensor& parameter : parameters()) {
        parameter.move_to_(device);
    }
    for (Tensor& buffer : buffers()) {
        buffer.move_to_(device);
    }
}

void Module::to(DType dtype) {
    if (!is_floating(dtype)) {
        throw TypeError("Module.to: expected a floating dtype, got " + to_string(dtype));
    }
    const NoGradGuard guard;
    for (auto tensors : {parameters(), buffers()}) {
        for (Tensor& tensor : tensors) {
            if (is_floating(tensor.dtype()) && tensor.dtype() != dtype) {
                tensor.set_data(tensor.to(dtype));
            }
        }
    }
}

void Module::train(bool training) {
    training_ = training;
    for (const auto& child : children_) {
        child.second->train(training);
    }
}

IncompatibleKeys Module::load_state_dict(
    const std::vector<std::pair<std::string, Tensor>>& state, bool strict) {
    return detail::apply_state(*this, state, strict, "load_state_dict");
}

}  // namespace kael::nn
