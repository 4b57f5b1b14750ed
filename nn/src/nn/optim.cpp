// Parameter groups, per-parameter state and its state dict, and the SGD/Adam/AdamW classes
// over the functional steps of optim_step.cpp.
#include "kael/optim.h"

#include <cmath>
#include <set>

namespace kael::optim {

namespace {

// Optimizer state lives where its parameter lives: Module::to (or move_to_) between steps
// moves the parameter, and the state follows at the next step.
void follow_parameter(Tensor& state, const Tensor& parameter) {
    if (state.defined() && state.device() != parameter.device()) {
        state = state.to(parameter.device());
    }
}

// Non-negative and not NaN.
void check_non_negative(const std::string& op, const Options& options,
                        std::initializer_list<const char*> names) {
    for (const char* name : names) {
        const auto found = options.find(name);
        if (found != options.end() && !(found->second >= 0)) {
            throw ValueError(op + ": " + name + " must be non-negative, got " +
                             std::to_string(found->second));
        }
    }
}

Options sgd_options(const SGDHyper& h) {
    return {{"lr", h.lr}, {"momentum", h.momentum}, {"dampening", h.dampening},
            {"weight_decay", h.weight_decay}, {"nesterov", h.nesterov ? 1.0 : 0.0}};
}

Options adam_options(const AdamHyper& h) {
    return {{"lr", h.lr}, {"beta1", h.beta1}, {"beta2", h.beta2}, {"eps", h.eps},
            {"weight_decay", h.weight_decay}};
}

}  // namespace

double ParamGroup::option(const std::string& name) const {
    const auto found = options.find(name);
    if (found == options.end()) {
        throw ValueError("ParamGroup: no option '" + name + "'");
    }
    return found->second;
}

Optimizer::Optimizer(Options defaults, std::string name)
    : defaults_(std::move(defaults)), name_(std::move(name)) {}

void Optimizer::add_param_groups(std::vector<ParamGroup> groups) {
    if (groups.empty()) {
        throw ValueError(name_ + ": optimizer got an empty parameter list");
    }
    for (ParamGroup& group : groups) {
        add_param_group(std::move(group));
    }
}

void Optimizer::add_param_group(ParamGroup group) {
    std::set<const TensorImpl*> seen;  // a parameter listed twice in one group is stepped twice
    for (const ParamGroup& existing : groups_) {
        for (const Tensor& parameter : existing.params) {
            seen.insert(parameter.impl_ptr().get());
        }
    }
    for (const Tensor& parameter : group.params) {
        if (!parameter.requires_grad()) {
            throw ValueError(name_ + ": every parameter must require grad");
        }
        if (!parameter.is_leaf()) {
            throw ValueError(name_ + ": can't optimize a non-leaf Tensor");
        }
        if (seen.count(parameter.impl_ptr().get()) != 0) {
            throw ValueError(name_ + ": some parameters appear in more than one parameter group");
        }
    }
    for (const auto& [key, value] : defaults_) {
        group.options.emplace(key, value);
    }
    for (const auto& [key, value] : group.options) {
        if (defaults_.count(key) == 0) {
            throw ValueError(name_ + ": unknown option '" + key + "'");
        }
    }
    check_options(group.options);
    groups_.push_back(std::move(group));
}

void Optimizer::check_options(const Options& options) const {
    check_non_negative(name_, options, {"lr", "weight_decay"});
}

void Optimizer::zero_grad(bool set_to_none) {
    for (const ParamGroup& group : groups_) {
        for (const Tensor& parameter : group.params) {
            if (set_to_none) {
                parameter.set_grad(Tensor());
            } else {
                parameter.zero_grad();
            }
        }
    }
}

std::vector<Tensor> Optimizer::parameters() const {
    std::vector<Tensor> all;
    for (const ParamGroup& group : groups_) {
        all.insert(all.end(), group.params.begin(), group.params.end());
    }
    return all;
}

ParamState& Optimizer::state(const Tensor& parameter) { return state_[parameter.impl_ptr().get()]; }

StateDict Optimizer::state_dict() const {
    StateDict out;
    std::int64_t position = 0;
    for (const ParamGroup& group : groups_) {
        StateDict::Group saved{group.options, {}};
        for (const Tensor& parameter : group.params) {
            const auto found = state_.find(parameter.impl_ptr().get());
            if (found != state_.end()) {
                out.state.emplace(position, found->second);
            }
            saved.params.push_back(position++);
        }
        out.param_groups.push_back(std::move(saved));
    }
    return out;
}

void Optimizer::load_state_dict(const StateDict& state) {
    if (state.param_groups.size() != groups_.size()) {
        throw ValueError(name_ + ".load_state_dict: loaded state dict has a different number of "
                                 "parameter groups");
    }
    std::map<std::int64_t, Tensor> by_position;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        if (state.param_groups[g].params.size() != groups_[g].params.size()) {
            throw ValueError(name_ + ".load_state_dict: loaded state dict contains a parameter "
                                     "group that doesn't match the size of optimizer's group");
        }
        for (std::size_t i = 0; i < groups_[g].params.size(); ++i) {
            by_position.emplace(state.param_groups[g].params[i], groups_[g].params[i]);
        }
    }
    for (const auto& [index, saved] : state.state) {
        if (by_position.count(index) == 0) {
            throw ValueError(name_ + ".load_state_dict: state for parameter " +
                             std::to_string(index) + ", which no group lists");
        }
    }
    std::map<const TensorImpl*, ParamState> loaded;
    for (const auto& [index, saved] : state.state) {
        const Tensor& parameter = by_position.at(index);
        ParamState copy{saved.step, {}};
        for (const auto& [name, buffer] : saved.buffers) {
            // A copy of its own, so stepping never writes into the caller's state dict.
            Tensor moved = buffer.to(parameter.device());
            moved = moved.same_impl(buffer) ? buffer.clone() : moved;
            copy.buffers[name] = is_floating(moved.dtype()) && moved.dtype() != parameter.dtype()
                                     ? moved.to(parameter.dtype())
                                     : moved;
        }
        loaded[parameter.impl_ptr().get()] = std::move(copy);
    }
    state_ = std::move(loaded);
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        groups_[g].options = state.param_groups[g].options;
    }
}

SGD::SGD(std::vector<Tensor> parameters, double lr, double momentum, double weight_decay)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(parameters))},
          SGDHyper{lr, momentum, 0, weight_decay, false}) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDHyper& defaults)
    : Optimizer(sgd_options(defaults), "SGD") {
    add_param_groups(std::move(groups));
}

void SGD::check_options(const Options& options) const {
    check_non_negative("SGD", options, {"lr", "momentum", "dampening", "weight_decay"});
    if (options.at("nesterov") != 0 &&
        (options.at("momentum") <= 0 || options.at("dampening") != 0)) {
        throw ValueError("SGD: nesterov momentum requires a momentum and zero dampening");
    }
}

void SGD::step() {
    for (const ParamGroup& group : param_groups()) {
        const Options& o = group.options;
        const SGDHyper hyper{o.at("lr"), o.at("momentum"), o.at("dampening"),
                             o.at("weight_decay"), o.at("nesterov") != 0};
        std::vector<Tensor> params, grads, buffers;
        for (const Tensor& parameter : group.params) {
            if (parameter.grad().defined()) {
                Tensor buffer;
                if (hyper.momentum != 0) {
                    const auto found = state(parameter).buffers.find("momentum_buffer");
                    if (found != state(parameter).buffers.end()) {
                        follow_parameter(found->second, parameter);
                        buffer = found->second;
                    }
                }
                params.push_back(parameter);
                grads.push_back(parameter.grad());
                buffers.push_back(buffer);
            }
        }
        sgd_step(params, grads, buffers, hyper);
        for (std::size_t i = 0; i < params.size() && hyper.momentum != 0; ++i) {
            state(params[i]).buffers["momentum_buffer"] = buffers[i];
        }
    }
}

Adam::Adam(std::vector<Tensor> parameters, double lr, double beta1, double beta2, double eps,
           double weight_decay, bool decoupled_weight_decay)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(parameters))},
           AdamHyper{lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay}) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamHyper& defaults)
    : Optimizer(adam_options(defaults), defaults.decoupled ? "AdamW" : "Adam"),
      decoupled_(defaults.decoupled) {
    add_param_groups(std::move(groups));
}

void Adam::check_options(const Options& options) const {
    check_non_negative(name(), options, {"lr", "eps", "weight_decay"});
    for (const char* beta : {"beta1", "beta2"}) {
        const double value = options.at(beta);
        if (!(value >= 0 && value < 1)) {
            throw ValueError(name() + ": " + beta + " must be in [0, 1), got " +
                             std::to_string(value));
        }
    }
}

void Adam::step() {
    for (const ParamGroup& group : param_groups()) {
        const Options& o = group.options;
        const AdamHyper hyper{o.at("lr"),  o.at("beta1"),        o.at("beta2"),
                              o.at("eps"), o.at("weight_decay"), decoupled_};
        std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs;
        std::vector<std::int64_t> steps;
        for (const Tensor& parameter : group.params) {
            if (!parameter.grad().defined()) {
                continue;  // as in PyTorch: a parameter without a gradient takes no step
            }
            ParamState& s = state(parameter);
            Tensor& m = s.buffers["exp_avg"];
            Tensor& v = s.buffers["exp_avg_sq"];
            if (!m.defined()) {
                m = zeros(parameter.shape(), parameter.dtype(), parameter.device());
                v = zeros(parameter.shape(), parameter.dtype(), parameter.device());
            }
            follow_parameter(m, parameter);
            follow_parameter(v, parameter);
            params.push_back(parameter);
            grads.push_back(parameter.grad());
            exp_avgs.push_back(m);
            exp_avg_sqs.push_back(v);
            steps.push_back(++s.step);
        }
        adam_step(params, grads, exp_avgs, exp_avg_sqs, steps, hyper);
    }
}

}  // namespace kael::optim
