#pragma once
// Optimizers update parameters in place (same TensorImpl), so modules and optimizers keep
// sharing them.
#include <vector>

#include "kael/tensor.h"

namespace kael::optim {

class Optimizer {
public:
    explicit Optimizer(std::vector<Tensor> parameters);
    virtual ~Optimizer() = default;
    virtual void step() = 0;
    void zero_grad();
    [[nodiscard]] const std::vector<Tensor>& parameters() const { return parameters_; }

protected:
    std::vector<Tensor> parameters_;
};

class SGD : public Optimizer {
public:
    SGD(std::vector<Tensor> parameters, double lr, double momentum = 0, double weight_decay = 0);
    void step() override;

private:
    double lr_;
    double momentum_;
    double weight_decay_;
    std::vector<Tensor> velocity_;
};

// Adam (weight decay added to the gradient) or, with decoupled_weight_decay, AdamW.
class Adam : public Optimizer {
public:
    Adam(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9,
         double beta2 = 0.999, double eps = 1e-8, double weight_decay = 0,
         bool decoupled_weight_decay = false);
    void step() override;

private:
    double lr_;
    double beta1_;
    double beta2_;
    double eps_;
    double weight_decay_;
    bool decoupled_;
    // Per parameter, as in PyTorch: one that had no gradient yet has taken no step.
    std::vector<std::int64_t> steps_;
    std::vector<Tensor> first_moment_;
    std::vector<Tensor> second_moment_;
};

class AdamW : public Adam {
public:
    AdamW(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9,
          double beta2 = 0.999, double eps = 1e-8, double weight_decay = 1e-2)
        : Adam(std::move(parameters), lr, beta1, beta2, eps, weight_decay, true) {}
};

}  // namespace kael::optim
