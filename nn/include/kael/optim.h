#pragma once
// Optimizers update parameters in place (same TensorImpl), so modules and optimizers keep
// sharing them. As in PyTorch, parameters come in groups, each with its own options (lr,
// weight_decay, ...), and the state of each parameter can be saved and loaded by position.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kael/tensor.h"

namespace kael::optim {

// Options are named as PyTorch's group keys; Adam's betas are "beta1" and "beta2" here.
using Options = std::map<std::string, double>;

struct ParamGroup {
    std::vector<Tensor> params;
    Options options;  // what is missing is taken from the optimizer's defaults

    ParamGroup(std::vector<Tensor> parameters, Options group_options = {})  // NOLINT: implicit
        : params(std::move(parameters)), options(std::move(group_options)) {}
    [[nodiscard]] double lr() const { return option("lr"); }
    void set_lr(double lr) { options["lr"] = lr; }
    [[nodiscard]] double option(const std::string& name) const;  // ValueError when absent
};

// One parameter's state: its step count and named buffers ("momentum_buffer", "exp_avg", ...).
struct ParamState {
    std::int64_t step = 0;
    std::map<std::string, Tensor> buffers;
};

// PyTorch's optimizer state_dict: state by position over every group's parameters in order,
// and each group's options with the positions of its parameters.
struct StateDict {
    struct Group {
        Options options;
        std::vector<std::int64_t> params;
    };
    std::map<std::int64_t, ParamState> state;
    std::vector<Group> param_groups;
};

// Functional steps over lists of one group's parameters (Python's optimizers call them too).
// Adam's moments are updated in place; SGD's momentum buffers are replaced by the new ones
// (an undefined one is created as the grad's copy).
struct SGDHyper {
    double lr = 0.01;
    double momentum = 0;
    double dampening = 0;
    double weight_decay = 0;
    bool nesterov = false;
};
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, const SGDHyper& hyper);

struct AdamHyper {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0;
    bool decoupled = false;  // AdamW
};
// steps[i] is parameter i's step count including this step (1 on the first). exp_avgs and
// exp_avg_sqs are defined tensors of the parameters' shapes, updated in place.
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<std::int64_t>& steps, const AdamHyper& hyper);
// adam_step with the step count on the device (torch's capturable=True): counts[i] is
// parameter i's count, a 0-d floating tensor on its device that this call increments (one
// tensor shared by several parameters counts once); lr, when defined, a 0-d tensor read on the
// device instead of hyper.lr. No host value changes per step, so a device graph that records
// the call steps correctly on every replay.
void adam_step_on_device(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& exp_avgs,
                         const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& counts,
                         const Tensor& lr, const AdamHyper& hyper);

class Optimizer {
public:
    virtual ~Optimizer() = default;
    virtual void step() = 0;
    // set_to_none (PyTorch 2.x's default) drops the gradients; otherwise they are zeroed.
    void zero_grad(bool set_to_none = true);
    // Every group's parameters in order.
    [[nodiscard]] std::vector<Tensor> parameters() const;
    [[nodiscard]] std::vector<ParamGroup>& param_groups() { return groups_; }
    [[nodiscard]] const std::vector<ParamGroup>& param_groups() const { return groups_; }
    [[nodiscard]] const Options& defaults() const { return defaults_; }
    // Missing options come from the defaults; a parameter already in a group is a ValueError.
    void add_param_group(ParamGroup group);
    // The state of a parameter (created empty on first use).
    [[nodiscard]] ParamState& state(const Tensor& parameter);
    // Buffers are the optimizer's own tensors (not copies), as in PyTorch.
    [[nodiscard]] StateDict state_dict() const;
    // Group count and sizes must match (ValueError); buffers are copied to each parameter's
    // device and dtype, group options replaced.
    void load_state_dict(const StateDict& state);

protected:
    // Subclass constructors add their groups (add_param_group), so their checks apply.
    Optimizer(Options defaults, std::string name);
    void add_param_groups(std::vector<ParamGroup> groups);
    // Checks a group's options (ValueError naming the optimizer); lr >= 0 here.
    virtual void check_options(const Options& options) const;
    [[nodiscard]] const std::string& name() const { return name_; }

private:
    std::vector<ParamGroup> groups_;
    Options defaults_;
    std::map<const TensorImpl*, ParamState> state_;
    std::string name_;
};

class SGD : public Optimizer {
public:
    SGD(std::vector<Tensor> parameters, double lr, double momentum = 0, double weight_decay = 0);
    SGD(std::vector<ParamGroup> groups, const SGDHyper& defaults);
    void step() override;

protected:
    void check_options(const Options& options) const override;
};

// Adam (weight decay added to the gradient) or, with decoupled_weight_decay, AdamW.
class Adam : public Optimizer {
public:
    Adam(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9,
         double beta2 = 0.999, double eps = 1e-8, double weight_decay = 0,
         bool decoupled_weight_decay = false);
    Adam(std::vector<ParamGroup> groups, const AdamHyper& defaults);
    void step() override;

protected:
    void check_options(const Options& options) const override;

private:
    bool decoupled_;
};

class AdamW : public Adam {
public:
    AdamW(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9,
          double beta2 = 0.999, double eps = 1e-8, double weight_decay = 1e-2)
        : Adam(std::move(parameters), lr, beta1, beta2, eps, weight_decay, true) {}
    AdamW(std::vector<ParamGroup> groups, AdamHyper defaults)
        : Adam(std::move(groups), (defaults.decoupled = true, defaults)) {}
};

}  // namespace kael::optim
