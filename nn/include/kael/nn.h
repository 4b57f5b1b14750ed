#pragma once
// Modules own named parameters (leaf tensors that require grad) and child modules.
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kael/ops.h"

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
    // Floating-point parameters and buffers converted to dtype (a floating dtype) in place, as
    // PyTorch's Module.to(dtype); integer and bool buffers keep theirs.
    void to(DType dtype);
    void train(bool training = true);
    void eval() { train(false); }
    [[nodiscard]] bool is_training() const { return training_; }
    // This module's flag only (Python's `module.training = False`); train() sets the subtree.
    void set_training(bool training) { training_ = training; }
    // Sets requires_grad on every parameter (freezing a part of a model).
    void requires_grad_(bool requires_grad = true);

    // Buffers: tensors the module keeps but does not train (running statistics, masks). They
    // are moved by to() and listed by named_buffers, never by parameters(); persistent ones
    // are saved and loaded with the parameters. A name is a parameter, buffer or child once.
    Tensor& register_buffer(const std::string& name, const Tensor& value, bool persistent = true);
    [[nodiscard]] std::vector<std::pair<std::string, Tensor>> named_buffers() const;
    [[nodiscard]] std::vector<Tensor> buffers() const;
    // Replaces this module's buffer name by value (detached); ValueError when there is none.
    void set_buffer(const std::string& name, const Tensor& value);
    [[nodiscard]] bool has_buffer(const std::string& name) const;

    // Every parameter (all names of a tied one) and persistent buffer, detached (values
    // shared, requires_grad false), in PyTorch's order: own parameters, own buffers, children.
    [[nodiscard]] std::vector<std::pair<std::string, Tensor>> state_dict() const;
    // The same tensors undetached, for loaders that write into them; a tied tensor once,
    // under its first name, when remove_duplicate.
    [[nodiscard]] std::vector<std::pair<std::string, Tensor>> named_state_tensors(
        bool remove_duplicate = false) const;

    // The module tree: direct children in registration order; named_modules lists this module
    // (name "") and every descendant depth first, each once. The pointers live as long as the
    // root does.
    [[nodiscard]] std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children()
        const {
        return children_;
    }
    [[nodiscard]] std::vector<std::shared_ptr<Module>> children() const;
    [[nodiscard]] std::vector<std::pair<std::string, Module*>> named_modules();
    // Calls fn on every descendant, children first, then on this module (as PyTorch).
    void apply(const std::function<void(Module&)>& fn);

    // PyTorch's printout: "Type(extra_repr)" or, with children, one "(name): child" line each.
    [[nodiscard]] std::string repr() const;
    [[nodiscard]] virtual std::string type_name() const { return "Module"; }
    [[nodiscard]] virtual std::string extra_repr() const { return ""; }

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
    struct Buffer {
        std::string name;
        Tensor* slot;  // in owned_
        bool persistent;
    };
    std::vector<Buffer> buffers_;
    bool training_ = true;
    void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out);
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
    [[nodiscard]] std::string type_name() const override { return "Linear"; }
    [[nodiscard]] std::string extra_repr() const override;
    Tensor weight;
    Tensor bias;
};

// Rows of weight [count, dim] (standard normal); the padding_idx row starts at zero and gets
// no gradient, as in PyTorch.
class Embedding : public Module {
public:
    Embedding(std::int64_t count, std::int64_t dim, Device device = kCPU,
              std::optional<std::int64_t> padding_idx = std::nullopt);
    Tensor forward(const Tensor& indices) override;
    [[nodiscard]] std::string type_name() const override { return "Embedding"; }
    [[nodiscard]] std::string extra_repr() const override;
    Tensor weight;
    std::optional<std::int64_t> padding_idx;  // normalized to [0, count)
};

class LayerNorm : public Module {
public:
    explicit LayerNorm(std::int64_t dim, double eps = 1e-5, Device device = kCPU);
    // PyTorch's whole form: over the trailing dims normalized_shape names; without
    // elementwise_affine there is no weight and no bias, without bias no bias (undefined).
    LayerNorm(Shape normalized_shape, double eps, Device device, bool elementwise_affine = true,
              bool bias = true);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return "LayerNorm"; }
    [[nodiscard]] std::string extra_repr() const override;
    Tensor weight;
    Tensor bias;
    double eps;
    Shape normalized_shape;
    bool elementwise_affine = true;
};

// A stateless layer of one function: its name and what it prints inside the parentheses.
#define KAEL_NN_FUNCTION_LAYER(Name, call)                                                \
    class Name : public Module {                                                          \
    public:                                                                               \
        Tensor forward(const Tensor& input) override { return call; }                     \
        [[nodiscard]] std::string type_name() const override { return #Name; }            \
    };
KAEL_NN_FUNCTION_LAYER(ReLU, relu(input))
KAEL_NN_FUNCTION_LAYER(Sigmoid, sigmoid(input))
KAEL_NN_FUNCTION_LAYER(Tanh, tanh(input))
KAEL_NN_FUNCTION_LAYER(SiLU, input * sigmoid(input))
KAEL_NN_FUNCTION_LAYER(Identity, input)
#undef KAEL_NN_FUNCTION_LAYER

class GELU : public Module {
public:
    explicit GELU(bool tanh_approximation = false) : tanh_approximation_(tanh_approximation) {}
    Tensor forward(const Tensor& input) override { return gelu(input, tanh_approximation_); }
    [[nodiscard]] std::string type_name() const override { return "GELU"; }
    [[nodiscard]] std::string extra_repr() const override;

private:
    bool tanh_approximation_;
};
class Dropout : public Module {
public:
    explicit Dropout(double p, bool inplace = false);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return "Dropout"; }
    [[nodiscard]] std::string extra_repr() const override;
    [[nodiscard]] double p() const { return p_; }

private:
    double p_;
    bool inplace_;
};

// softmax / log_softmax over dim; without one, PyTorch's legacy choice (dim 0 for 0-, 1- and
// 3-d inputs, else 1).
class Softmax : public Module {
public:
    explicit Softmax(std::optional<std::int64_t> dim = std::nullopt, bool log = false)
        : dim(dim), log_(log) {}
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return log_ ? "LogSoftmax" : "Softmax"; }
    [[nodiscard]] std::string extra_repr() const override;
    std::optional<std::int64_t> dim;

private:
    bool log_;
};
class LogSoftmax : public Softmax {
public:
    explicit LogSoftmax(std::optional<std::int64_t> dim = std::nullopt) : Softmax(dim, true) {}
};

// Dims start_dim..end_dim merged into one / dim split into sizes (one may be -1).
class Flatten : public Module {
public:
    explicit Flatten(std::int64_t start_dim = 1, std::int64_t end_dim = -1)
        : start_dim(start_dim), end_dim(end_dim) {}
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return "Flatten"; }
    [[nodiscard]] std::string extra_repr() const override;
    std::int64_t start_dim;
    std::int64_t end_dim;
};
class Unflatten : public Module {
public:
    Unflatten(std::int64_t dim, Shape sizes) : dim(dim), sizes(std::move(sizes)) {}
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return "Unflatten"; }
    [[nodiscard]] std::string extra_repr() const override;
    std::int64_t dim;
    Shape sizes;
};

class Sequential : public Module {
public:
    explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return "Sequential"; }

private:
    std::vector<std::shared_ptr<Module>> modules_;
};

// What MultiheadAttention::forward takes beyond query, key and value (PyTorch's arguments).
struct AttentionOptions {
    Tensor key_padding_mask;  // [N, S] (or [S] unbatched): bool true = ignore that key, or float added
    bool need_weights = true;
    Tensor attn_mask;  // [L, S] or [N * heads, L, S]: bool true = not allowed, or float added
    bool average_attn_weights = true;
    bool is_causal = false;  // query i sees keys j <= i (added to attn_mask when both are given)
};

// PyTorch's nn.MultiheadAttention with one embed_dim for query, key and value; parameters
// in_proj_weight [3E, E], in_proj_bias [3E] and out_proj (a Linear), named as PyTorch's so its
// state_dict loads. Inputs [L, N, E] (batch_first: [N, L, E]) or unbatched [L, E].
class MultiheadAttention : public Module {
public:
    MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads, double dropout = 0.0,
                       bool bias = true, bool batch_first = false, Device device = kCPU);
    using Module::forward;  // the one-input form stays visible: a TypeError for this module
    // (output like query, weights [N, L, S] averaged over heads or [N, heads, L, S]; undefined
    // unless need_weights). Without weights and masks this is the fused attention kernel.
    std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const AttentionOptions& options = {});
    [[nodiscard]] std::string type_name() const override { return "MultiheadAttention"; }
    Tensor in_proj_weight;
    Tensor in_proj_bias;
    std::shared_ptr<Linear> out_proj;
    std::int64_t embed_dim;
    std::int64_t num_heads;
    double dropout;
    bool batch_first;
};

}  // namespace kael::nn
