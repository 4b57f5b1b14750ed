// Nodes of several outputs (split's views, a Python autograd.Function's) and tensor hooks
// (Tensor.register_hook, retain_grad), with detach_: the graph pieces ops record besides the
// one-output nodes of graph.cpp.
#include <memory>
#include <string>
#include <utility>

#include "kael/ops.h"
#include "record.h"

namespace kael::autograd {

namespace {

class MultiOutputNode final : public Node {
public:
    MultiOutputNode(const char* name, int outputs,
                    std::function<Tensor(const std::vector<Tensor>&)> backward)
        : name_(name), outputs_(outputs), backward_(std::move(backward)) {}

    std::vector<Tensor> apply(std::vector<Tensor> grads) override {
        for (const Tensor& grad : grads) {
            if (grad.defined()) {
                return {backward_(grads)};
            }
        }
        return {Tensor()};
    }
    [[nodiscard]] std::string name() const override { return name_; }
    [[nodiscard]] int num_inputs() const override { return outputs_; }  // saves no tensor

private:
    std::string name_;
    int outputs_;
    std::function<Tensor(const std::vector<Tensor>&)> backward_;
};

// A node of several inputs and outputs whose backward is given whole (a Python
// autograd.Function's): a gradient per output in (undefined where none arrived), one per input
// out.
class CustomFunctionNode final : public Node {
public:
    CustomFunctionNode(std::string name, int outputs, FunctionBackward backward)
        : name_(std::move(name)), outputs_(outputs), backward_(std::move(backward)) {}

    std::vector<Tensor> apply(std::vector<Tensor> grads) override {
        if (!backward_) {
            throw Error(name_ + ": backward already ran and freed its state; pass "
                        "retain_graph=True to backward through it again");
        }
        std::vector<Tensor> result = backward_(grads);
        if (result.size() != next_edges.size()) {
            throw ValueError(name_ + ": backward returned " + std::to_string(result.size()) +
                             " gradients for " + std::to_string(next_edges.size()) + " inputs");
        }
        return result;
    }
    [[nodiscard]] std::string name() const override { return name_; }
    [[nodiscard]] int num_inputs() const override { return outputs_; }
    void release_saved_tensors() override { backward_ = nullptr; }
    // Python's backward runs kael ops: recorded, as far as those ops are.
    [[nodiscard]] bool differentiable_backward() const override { return true; }

private:
    std::string name_;
    int outputs_;
    FunctionBackward backward_;
};

}  // namespace

void record_function(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                     const std::string& name, FunctionBackward backward) {
    if (!is_grad_enabled() || !any_requires_grad(inputs)) {
        return;
    }
    auto node = std::make_shared<CustomFunctionNode>(name, static_cast<int>(outputs.size()),
                                                     std::move(backward));
    for (const Tensor& input : inputs) {
        node->next_edges.push_back(input.requires_grad() ? gradient_edge(input) : Edge{});
        node->input_metadata.push_back(metadata_of(input));
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (!is_floating(outputs[i].dtype())) {
            continue;  // integer outputs carry no gradient
        }
        AutogradMeta& meta = meta_of(outputs[i]);
        meta.requires_grad = true;
        meta.grad_fn = node;
        meta.output_nr = static_cast<int>(i);
    }
}

void register_hook(const Tensor& tensor, GradientHook hook) {
    if (!tensor.requires_grad()) {
        throw ValueError("register_hook: cannot register a hook on a tensor that doesn't "
                         "require gradient");
    }
    AutogradMeta& meta = meta_of(tensor);
    if (meta.grad_fn) {
        meta.grad_fn->pre_hooks.emplace_back(meta.output_nr, std::move(hook));
        return;
    }
    const std::lock_guard lock(meta.mutex);
    meta.hooks.push_back(std::move(hook));
}

void retain_grad(const Tensor& tensor) {
    if (tensor.is_leaf()) {
        return;  // leaves keep theirs anyway
    }
    std::weak_ptr<TensorImpl> kept = tensor.impl_ptr();
    register_hook(tensor, [kept](const Tensor& grad) {
        if (const std::shared_ptr<TensorImpl> impl = kept.lock()) {
            AutogradMeta& meta = *impl->autograd;
            const std::lock_guard lock(meta.mutex);
            meta.grad = meta.grad.defined() ? add(meta.grad, grad) : grad.detach().clone();
        }
        return Tensor();
    });
}

void detach_in_place(const Tensor& tensor) {
    if (const auto& meta = tensor.impl().autograd) {
        meta->grad_fn.reset();
        meta->output_nr = 0;
        meta->requires_grad = false;
    }
}

void record_multi_output(const std::vector<Tensor>& outputs, const Tensor& input, const char* name,
                         std::function<Tensor(const std::vector<Tensor>&)> backward) {
    if (!is_grad_enabled() || !input.requires_grad() || !is_floating(input.dtype())) {
        return;
    }
    auto node = std::make_shared<MultiOutputNode>(name, static_cast<int>(outputs.size()),
                                                  std::move(backward));
    node->next_edges.push_back(gradient_edge(input));
    node->input_metadata.push_back(metadata_of(input));
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        AutogradMeta& meta = meta_of(outputs[i]);
        meta.requires_grad = true;
        meta.grad_fn = node;
        meta.output_nr = static_cast<int>(i);
    }
}

}  // namespace kael::autograd
