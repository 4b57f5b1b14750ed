#pragma once
// Reverse-mode automatic differentiation over a graph recorded while ops run (PyTorch's
// design): each differentiable op gives its floating output a Node whose next_edges lead to
// the nodes of its inputs; backward() walks that graph in dependency order from the root.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kael/tensor.h"

namespace kael {

struct Edge {
    std::shared_ptr<Node> function;  // null: this input needs no gradient
    int input_nr = 0;                // which gradient input of function this edge feeds
    [[nodiscard]] bool valid() const { return function != nullptr; }
};

struct AutogradMeta {
    bool requires_grad = false;
    Tensor grad;                       // leaves only; undefined until a backward reaches it
    std::shared_ptr<Node> grad_fn;     // null for leaves
    int output_nr = 0;                 // which output of grad_fn this tensor is
    std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad while a graph uses it
    // In-place ops recorded on this tensor (directly or through a view): its views compare it
    // with the value they were made at (TensorImpl::base_history).
    std::uint64_t history = 0;
    // A leaf's tensor hooks, run on each incoming gradient before it is accumulated.
    std::vector<std::function<Tensor(const Tensor&)>> hooks;
    // Guards grad and grad_accumulator: backward calls on several threads may reach one leaf.
    std::mutex mutex;
};

// What the engine checks and converts an input gradient to before passing it on.
struct InputMetadata {
    Shape shape;
    DType dtype = DType::F32;
    Device device;
};

class Node {
public:
    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    virtual ~Node() = default;

    // One gradient per forward output in, one gradient per next edge out (undefined tensors
    // for inputs that need none).
    virtual std::vector<Tensor> apply(std::vector<Tensor> grads) = 0;
    [[nodiscard]] virtual std::string name() const = 0;
    [[nodiscard]] virtual int num_inputs() const { return 1; }
    // Called after backward without retain_graph; a later apply must then throw kael::Error.
    virtual void release_saved_tensors() {}

    // Whether this node accumulates into a leaf's grad (autograd::grad skips those).
    [[nodiscard]] virtual bool accumulates() const { return false; }
    // Whether apply's gradients are themselves recorded when grad mode is on, so that
    // autograd::grad(create_graph) may differentiate them (fused backward kernels are not).
    [[nodiscard]] virtual bool differentiable_backward() const { return false; }

    std::vector<Edge> next_edges;
    std::vector<InputMetadata> input_metadata;  // parallel to next_edges
    // Tensor hooks of this node's outputs (output_nr, hook): they see, and may replace, the
    // gradient of that output before apply (Tensor.register_hook on a non-leaf).
    std::vector<std::pair<int, std::function<Tensor(const Tensor&)>>> pre_hooks;
};

// Thread-local grad mode: while off, ops record nothing.
[[nodiscard]] bool is_grad_enabled();
void set_grad_enabled(bool enabled);

class NoGradGuard {
public:
    NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
    ~NoGradGuard() { set_grad_enabled(previous_); }
    NoGradGuard(const NoGradGuard&) = delete;
    NoGradGuard& operator=(const NoGradGuard&) = delete;

private:
    bool previous_;
};

namespace autograd {

// Records one node for a function of several inputs and outputs (a Python
// autograd.Function): backward gets a gradient per output (undefined where none arrived) and
// returns one per input (undefined for none). Nothing is recorded unless an input requires
// grad; outputs must be new tensors.
using FunctionBackward = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
void record_function(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                     const std::string& name, FunctionBackward backward);

// A function of a tensor's gradient, run when that gradient is computed; a defined result
// replaces it (PyTorch's Tensor.register_hook).
using GradientHook = std::function<Tensor(const Tensor&)>;
// Registers hook on tensor: a non-leaf's runs before its grad_fn, a leaf's before its gradient
// is accumulated. ValueError when tensor does not require grad.
void register_hook(const Tensor& tensor, GradientHook hook);
// Makes a non-leaf tensor keep its gradient in grad() after backward (nothing for a leaf).
void retain_grad(const Tensor& tensor);
// Detaches tensor in place: it becomes a leaf that does not require grad.
void detach_in_place(const Tensor& tensor);

// The gradients of the sum of outputs[i] * grad_outputs[i] with respect to inputs, returned
// instead of accumulated into grad() (PyTorch's torch.autograd.grad). An undefined
// grad_outputs[i] means ones (one-element outputs only). With create_graph the gradients are
// recorded, so they can be differentiated again. An input the outputs do not depend on gets an
// undefined gradient with allow_unused, else ValueError.
[[nodiscard]] std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                                       const std::vector<Tensor>& grad_outputs,
                                       const std::vector<Tensor>& inputs, bool retain_graph,
                                       bool create_graph, bool allow_unused);

// Anomaly detection (PyTorch's set_detect_anomaly): while on, backward checks every node's
// gradients and names the node that produced a NaN (ValueError).
void set_anomaly_enabled(bool enabled);
[[nodiscard]] bool is_anomaly_enabled();

// How many backward passes (backward or grad) this thread has run: kael.compile tells a
// training step, whose outputs' history was consumed inside, from a forward it cannot replay.
[[nodiscard]] std::uint64_t backward_runs();

// For each of leaves, whether a backward from outputs would reach it (its gradient would be
// accumulated): DistributedDataParallel(find_unused_parameters) marks the others ready at once.
[[nodiscard]] std::vector<bool> reaches(const std::vector<Tensor>& outputs,
                                        const std::vector<Tensor>& leaves);

// Runs backward from root (see Tensor::backward).
void backward(const Tensor& root, const std::optional<Tensor>& gradient = std::nullopt,
              bool retain_graph = false);

// Sums a broadcast gradient down to shape (leading dimensions, then size-1 dimensions).
// Throws ValueError when grad's shape is not a broadcast of shape.
[[nodiscard]] Tensor sum_to(const Tensor& grad, const Shape& shape);

// Compares the gradients backward computes for function's one-element (or summed) output
// with central finite differences, in f64. inputs must be f64; those that require grad are
// checked. Returns true when every element satisfies |analytic - numeric| <= atol +
// rtol * |numeric|; otherwise throws ValueError naming the worst element, or returns false
// when raise_on_failure is false.
[[nodiscard]] bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& function,
                             const std::vector<Tensor>& inputs, double eps = 1e-6,
                             double atol = 1e-5, double rtol = 1e-3,
                             bool raise_on_failure = true);

}  // namespace autograd

}  // namespace kael
