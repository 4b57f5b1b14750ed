// Module bookkeeping (registration, moves, train/eval) and load_state_dict.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
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
    const auto named = module.named_parameters();
    IncompatibleKeys result;
    // Everything is checked and converted first: a failure leaves the module unchanged.
    std::vector<std::pair<Tensor, Tensor>> writes;  // parameter, value on its device and dtype
    for (const auto& [name, parameter] : named) {
        const auto found = by_name.find(name);
        if (found == by_name.end()) {
            result.missing_keys.push_back(name);
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
        writes.emplace_back(parameter, value.detach().to(parameter.dtype()).to(parameter.device()));
        by_name.erase(found);
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
    parameters_.emplace_back(name, value.detach().set_requires_grad(true));
    return parameters_.back().second;
}

bool Module::unregister(const std::string& name) {
    const auto parameter = std::find_if(parameters_.begin(), parameters_.end(),
                                        [&](const auto& entry) { return entry.first == name; });
    if (parameter != parameters_.end()) {
        parameters_.erase(parameter);
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

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
    std::vector<std::pair<std::string, Tensor>> result = parameters_;
    for (const auto& [prefix, child] : children_) {
        for (const auto& [name, parameter] : child->named_parameters()) {
            result.emplace_back(prefix + "." + name, parameter);
        }
    }
    return result;
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
