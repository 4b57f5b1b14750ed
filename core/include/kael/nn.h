#pragma once
// Modules own named parameters (leaf tensors that require grad) and child modules.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kael/ops_more.h"

namespace kael::nn {

// What Module::load_state_dict(state, strict=false) did not match, by name.
struct IncompatibleKeys {
    std::vector<std::string> missing_keys;     // parameters of the module absent from the state
    std::vector<std::string> unexpected_keys;  // names in the state the module does not have
};

class Module {
public:
    Module() = default;
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    virtual ~Module() = default;

    // Unary modules override this; others expose their own forward signatures.
    virtual Tensor forward(const Tensor& input);
    Tensor operator()(const Tensor& input) { return forward(input); }

    // Names are dotted paths ("blocks.0.attention.query.weight"), in registration order. A
    // tensor registered under several names (tied weights) is listed once, under its first
    // name, unless remove_duplicate is false (as in PyTorch).
    [[nodiscard]] std::vector<std::pair<std::string, Tensor>> named_parameters(
        bool remove_duplicate = true) const;
    [[nodiscard]] std::vector<Tensor> parameters() const;
    [[nodiscard]] std::int64_t parameter_count() const;
    void zero_grad();
    // The parameter or submodule at a dotted path; ValueError naming the path when absent.
    [[nodiscard]] Tensor get_parameter(const std::string& path) const;
    [[nodiscard]] std::shared_ptr<Module> get_submodule(const std::string& path) const;
    // Makes the parameter at path the tensor value (a leaf that requires grad is used as it is,
    // anything else detached first), e.g. head.weight = embedding.weight ties the two: they
    // are then one tensor, trained and saved once. A layer's member (Linear::weight) follows,
    // and assigning the member directly in C++ does the same.
    void set_parameter(const std::string& path, const Tensor& value);
    // Moves every parameter (and its gradient) in place, so optimizers keep working.
    void to(const Device& device);
    void train(bool training = true);
    void eval() { train(false); }
    [[nodiscard]] bool is_training() const { return training_; }

    // Copies every parameter from state, matched by name, after checking all of them, so a
    // failure changes nothing. A shape mismatch is a ValueError naming the parameter; dtypes
    // convert as copy_ does. strict: missing or unexpected names are a ValueError listing them;
    // otherwise they are returned.
    IncompatibleKeys load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state,
                                     bool strict = true);

    // Binary file of every parameter (name, dtype, shape, bytes) and a CRC-32. save writes a
    // temporary file beside path and renames it over path only once every byte is on disk, so
    // a failed save (kael::OSError) leaves an old file whole. load reads it as
    // load_state_dict(strict) does and rejects corrupt, truncated or overlong files
    // (ValueError); only regular files are read.
    void save(const std::string& path) const;
    void load(const std::string& path);
    // Every named parameter as a safetensors file (kael/safetensors.h), written atomically as
    // save is; load_safetensors reads one back as load_state_dict(strict) does (F16/BF16 and
    // narrower integers convert to the parameters' dtypes), so a failure changes nothing.
    void save_safetensors(const std::string& path) const;
    IncompatibleKeys load_safetensors(const std::string& path, bool strict = true);

protected:
    // A parameter the module keeps (Python attributes); the reference stays valid.
    Tensor& register_parameter(const std::string& name, const Tensor& value);
    // A parameter held in a member of the layer (slot), which is what the module reads.
    void register_parameter(const std::string& name, Tensor& slot, const Tensor& value);
    template <typename M> std::shared_ptr<M> register_module(const std::string& name,
                                                             std::shared_ptr<M> module) {
        children_.emplace_back(name, module);
        return module;
    }
    // Removes the parameter or child module of that name; false when there is none.
    bool unregister(const std::string& name);

private:
    // Where each parameter lives: a member of the layer or an element of owned_ (a deque, so
    // the addresses stay put), so rebinding the member rebinds the parameter.
    std::vector<std::pair<std::string, Tensor*>> parameters_;
    std::deque<Tensor> owned_;
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
    bool training_ = true;
};

// y = x W^T + b, W [out, in] and b [out] uniform in +-1/sqrt(in) as in PyTorch.
class Linear : public Module {
public:
    Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true,
           Device device = kCPU);
    Tensor forward(const Tensor& input) override;
    // act(forward(input)) + residual, fused into the product where the device can (see the
    // linear overload with an Activation).
    Tensor forward(const Tensor& input, Activation activation, const Tensor& residual = Tensor());
    Tensor weight;
    Tensor bias;
};

class Embedding : public Module {
public:
    Embedding(std::int64_t count, std::int64_t dim, Device device = kCPU);
    Tensor forward(const Tensor& indices) override;
    Tensor weight;
};

class LayerNorm : public Module {
public:
    explicit LayerNorm(std::int64_t dim, double eps = 1e-5, Device device = kCPU);
    Tensor forward(const Tensor& input) override;
    Tensor weight;
    Tensor bias;
    double eps;
};

class ReLU : public Module {
public:
    Tensor forward(const Tensor& input) override { return relu(input); }
};
class Sigmoid : public Module {
public:
    Tensor forward(const Tensor& input) override { return sigmoid(input); }
};
class Tanh : public Module {
public:
    Tensor forward(const Tensor& input) override { return tanh(input); }
};
class GELU : public Module {
public:
    explicit GELU(bool tanh_approximation = false) : tanh_approximation_(tanh_approximation) {}
    Tensor forward(const Tensor& input) override { return gelu(input, tanh_approximation_); }

private:
    bool tanh_approximation_;
};
class Dropout : public Module {
public:
    explicit Dropout(double p);
    Tensor forward(const Tensor& input) override { return dropout(input, p_, is_training()); }

private:
    double p_;
};

class Sequential : public Module {
public:
    explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
    Tensor forward(const Tensor& input) override;

private:
    std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace kael::nn
