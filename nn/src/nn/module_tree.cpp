// Module buffers, state_dict, the module tree (children, named_modules, apply) and repr.
#include <algorithm>
#include <set>
#include <sstream>

#include "kael/autograd.h"
#include "kael/nn.h"
#include "nn_internal.h"

namespace kael::nn {

Tensor& Module::register_buffer(const std::string& name, const Tensor& value, bool persistent) {
    if (name.empty() || name.find('.') != std::string::npos) {
        throw ValueError("register_buffer: a buffer name must be non-empty and contain no '.', "
                         "got " + detail::printable_name(name));
    }
    const bool taken =
        has_buffer(name) ||
        std::any_of(parameters_.begin(), parameters_.end(), [&](const auto& p) { return p.first == name; }) ||
        std::any_of(children_.begin(), children_.end(), [&](const auto& c) { return c.first == name; });
    if (taken) {
        throw ValueError("register_buffer: " + detail::printable_name(name) + " already exists");
    }
    if (!value.defined()) {
        throw TypeError("register_buffer: the value for " + detail::printable_name(name) +
                        " is not a tensor");
    }
    Tensor& slot = owned_.emplace_back(value.detach());
    buffers_.push_back({name, &slot, persistent});
    return slot;
}

bool Module::has_buffer(const std::string& name) const {
    return std::any_of(buffers_.begin(), buffers_.end(),
                       [&](const Buffer& buffer) { return buffer.name == name; });
}

void Module::set_buffer(const std::string& name, const Tensor& value) {
    const auto found = std::find_if(buffers_.begin(), buffers_.end(),
                                    [&](const Buffer& buffer) { return buffer.name == name; });
    if (found == buffers_.end()) {
        throw ValueError("set_buffer: no buffer " + detail::printable_name(name));
    }
    if (!value.defined()) {
        throw TypeError("set_buffer: the value for " + detail::printable_name(name) +
                        " is not a tensor");
    }
    *found->slot = value.detach();
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
    std::vector<std::pair<std::string, Tensor>> result;
    for (const Buffer& buffer : buffers_) {
        result.emplace_back(buffer.name, *buffer.slot);
    }
    for (const auto& [prefix, child] : children_) {
        for (const auto& [name, tensor] : child->named_buffers()) {
            result.emplace_back(prefix + "." + name, tensor);
        }
    }
    return result;
}

std::vector<Tensor> Module::buffers() const {
    std::vector<Tensor> result;
    for (const auto& named : named_buffers()) {
        result.push_back(named.second);
    }
    return result;
}

std::vector<std::pair<std::string, Tensor>> Module::named_state_tensors(bool remove_duplicate) const {
    std::vector<std::pair<std::string, Tensor>> result;
    for (const auto& [name, slot] : parameters_) {
        result.emplace_back(name, *slot);
    }
    for (const Buffer& buffer : buffers_) {
        if (buffer.persistent) {
            result.emplace_back(buffer.name, *buffer.slot);
        }
    }
    for (const auto& [prefix, child] : children_) {
        for (const auto& [name, tensor] : child->named_state_tensors(false)) {
            result.emplace_back(prefix + "." + name, tensor);
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

std::vector<std::pair<std::string, Tensor>> Module::state_dict() const {
    auto state = named_state_tensors(false);
    for (auto& entry : state) {
        entry.second = entry.second.detach();
    }
    return state;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
    std::vector<std::shared_ptr<Module>> result;
    for (const auto& entry : children_) {
        result.push_back(entry.second);
    }
    return result;
}

void Module::collect_modules(const std::string& prefix,
                             std::vector<std::pair<std::string, Module*>>& out) {
    // A module shared by two parents (or reached twice) is listed once, as in PyTorch.
    if (std::any_of(out.begin(), out.end(), [&](const auto& entry) { return entry.second == this; })) {
        return;
    }
    out.emplace_back(prefix, this);
    for (const auto& [name, child] : children_) {
        child->collect_modules(prefix.empty() ? name : prefix + "." + name, out);
    }
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
    std::vector<std::pair<std::string, Module*>> result;
    collect_modules("", result);
    return result;
}

void Module::apply(const std::function<void(Module&)>& fn) {
    for (const auto& entry : children_) {
        entry.second->apply(fn);
    }
    fn(*this);
}

void Module::requires_grad_(bool requires_grad) {
    for (const Tensor& parameter : parameters()) {
        parameter.set_requires_grad(requires_grad);
    }
}

namespace {

// Every line after the first indented by two spaces (PyTorch's _addindent).
std::string indent_tail(const std::string& text) {
    std::string result;
    for (const char c : text) {
        result += c;
        if (c == '\n') {
            result += "  ";
        }
    }
    return result;
}

}  // namespace

std::string Module::repr() const {
    std::vector<std::string> lines;
    const std::string extra = extra_repr();
    std::size_t extra_lines = 0;
    if (!extra.empty()) {
        std::istringstream stream(extra);
        for (std::string line; std::getline(stream, line);) {
            lines.push_back(line);
            ++extra_lines;
        }
    }
    for (const auto& [name, child] : children_) {
        lines.push_back("(" + name + "): " + indent_tail(child->repr()));
    }
    std::string text = type_name() + "(";
    if (extra_lines == 1 && children_.empty()) {
        text += lines.front();
    } else if (!lines.empty()) {
        text += "\n";
        for (const std::string& line : lines) {
            text += "  " + line + "\n";
        }
    }
    return text + ")";
}

}  // namespace kael::nn
