// The backward pass: dependency counting from the root, then nodes run once every gradient
// flowing into them has arrived.
#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "kael/autocast.h"
#include "kael/ops.h"
#include "record.h"

namespace kael::autograd {

namespace {

// Brings a computed gradient to the shape, dtype and device of the input it belongs to.
Tensor conform(Tensor grad, const InputMetadata& input, const Node& node) {
    if (grad.shape() != input.shape) {
        try {
            grad = sum_to(grad, input.shape);
        } catch (const ValueError&) {
            throw ValueError(node.name() + ": computed a gradient of shape " +
                             to_string(grad.shape()) + " for an input of shape " +
                             to_string(input.shape));
        }
    }
    return grad.to(input.dtype).to(input.device);
}

}  // namespace

Tensor sum_to(const Tensor& grad, const Shape& shape) {
    if (grad.shape() == shape) {
        return grad;
    }
    const auto rank = static_cast<std::int64_t>(shape.size());
    const std::int64_t lead = grad.dim() - rank;
    if (lead < 0) {
        throw ValueError("sum_to: shape " + to_string(grad.shape()) + " cannot be summed to " +
                         to_string(shape));
    }
    // One reduction over every summed dim: the leading ones and the broadcast ones are often
    // adjacent in memory (a bias's [B, T, C] -> [C]), so it is a single pass.
    Shape dims;
    for (std::int64_t d = 0; d < lead; ++d) {
        dims.push_back(d);
    }
    for (std::int64_t d = 0; d < rank; ++d) {
        const std::int64_t size = grad.shape()[static_cast<std::size_t>(lead + d)];
        if (shape[d] == 1 && size != 1) {
            dims.push_back(lead + d);
        } else if (shape[d] != size) {
            throw ValueError("sum_to: shape " + to_string(grad.shape()) +
                             " cannot be summed to " + to_string(shape));
        }
    }
    return sum(grad, dims, true).reshape(shape);  // dims is not empty: the shapes differ
}

namespace {

std::atomic<bool> anomaly_enabled{false};

// The seed gradient of root: gradient (checked), or ones for a one-element root.
Tensor seed_of(const Tensor& root, const Tensor& gradient, const char* op) {
    if (gradient.defined()) {
        if (gradient.shape() != root.shape()) {
            throw ValueError(std::string(op) + ": gradient of shape " +
                             to_string(gradient.shape()) +
                             " does not match the tensor's shape " + to_string(root.shape()));
        }
        if (gradient.device() != root.device()) {
            throw DeviceError(std::string(op) + ": gradient is on " + gradient.device().str() +
                              " but the tensor is on " + root.device().str());
        }
        return gradient.to(root.dtype());
    }
    if (root.numel() != 1) {
        throw ValueError(std::string(op) + ": an implicit gradient exists only for one-element "
                         "tensors; pass a gradient for shape " + to_string(root.shape()));
    }
    return ones(root.shape(), root.dtype(), root.device());
}

void check_anomaly(const Node& node, const std::vector<Tensor>& outputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].defined() && is_floating(outputs[i].dtype()) &&
            any(isnan(outputs[i])).item<bool>()) {
            throw ValueError("Function '" + node.name() + "' returned nan values in its " +
                             std::to_string(i) + "th output (anomaly detection)");
        }
    }
}

// Where autograd::grad takes gradients instead of passing them on: (node, input_nr) -> the
// index of the input.
using Captures = std::map<std::pair<Node*, int>, std::size_t>;

// The engine: dependency counting from the roots, then each node runs once every gradient
// flowing into it has arrived. With captures, the gradients reaching those edges are stored
// in captured and no leaf accumulates.
thread_local std::uint64_t runs_on_this_thread = 0;

void run(const std::vector<Edge>& roots, const std::vector<Tensor>& seeds, bool retain_graph,
         const Captures* captures, std::vector<Tensor>* captured, bool create_graph = false) {
    ++runs_on_this_thread;
    std::unordered_map<Node*, int> dependencies;
    std::unordered_set<Node*> seen;
    std::vector<Node*> to_visit;
    for (const Edge& root : roots) {
        if (seen.insert(root.function.get()).second) {
            to_visit.push_back(root.function.get());
        }
    }
    while (!to_visit.empty()) {
        Node* node = to_visit.back();
        to_visit.pop_back();
        if (create_graph && !node->differentiable_backward()) {
            throw Error(
                "grad(create_graph=True): the backward of " + node->name() +
                " is not differentiable in kael yet (its gradient would be taken as a "
                "constant); differentiable: arithmetic, matmul, linear, pow, log, sin, cos, "
                "relu, sigmoid, gelu, tanh, exp, sqrt, softmax, log_softmax, layer_norm, "
                "cross_entropy, scaled_dot_product_attention, reductions (sum, mean, prod, "
                "var, std, norm, logsumexp, max, min), views, indexing and autograd.Function");
        }
        for (const Edge& edge : node->next_edges) {
            if (edge.valid()) {
                ++dependencies[edge.function.get()];
                if (seen.insert(edge.function.get()).second) {
                    to_visit.push_back(edge.function.get());
                }
            }
        }
    }
    std::unordered_map<Node*, std::vector<Tensor>> buffers;
    std::vector<std::shared_ptr<Node>> ready;
    for (std::size_t r = 0; r < roots.size(); ++r) {
        std::vector<Tensor>& buffer = buffers[roots[r].function.get()];
        buffer.resize(static_cast<std::size_t>(roots[r].function->num_inputs()));
        Tensor& slot = buffer[static_cast<std::size_t>(roots[r].input_nr)];
        slot = slot.defined() ? add(slot, seeds[r]) : seeds[r];
        if (dependencies[roots[r].function.get()] == 0 &&
            std::find(ready.begin(), ready.end(), roots[r].function) == ready.end()) {
            ready.push_back(roots[r].function);
        }
    }
    const bool anomaly = anomaly_enabled.load();
    while (!ready.empty()) {
        const std::shared_ptr<Node> node = ready.back();
        ready.pop_back();
        std::vector<Tensor> grads = std::move(buffers[node.get()]);
        buffers.erase(node.get());
        for (const auto& [output_nr, hook] : std::vector(node->pre_hooks)) {
            Tensor& grad = grads[static_cast<std::size_t>(output_nr)];
            if (grad.defined()) {
                Tensor replaced = hook(grad);
                if (replaced.defined()) {
                    grad = std::move(replaced);
                }
            }
        }
        if (captures != nullptr) {
            for (std::size_t nr = 0; nr < grads.size(); ++nr) {
                const auto found = captures->find({node.get(), static_cast<int>(nr)});
                if (found != captures->end() && grads[nr].defined()) {
                    (*captured)[found->second] = grads[nr];
                }
            }
            if (node->accumulates()) {
                continue;  // autograd::grad returns gradients, it never accumulates them
            }
        }
        std::vector<Tensor> outputs;
        {
            const RunningBackward running(node);
            outputs = node->apply(std::move(grads));
        }
        if (anomaly) {
            check_anomaly(*node, outputs);
        }
        if (!retain_graph) {
            node->release_saved_tensors();
        }
        for (std::size_t i = 0; i < node->next_edges.size(); ++i) {
            const Edge& edge = node->next_edges[i];
            if (!edge.valid()) {
                continue;
            }
            std::vector<Tensor>& buffer = buffers[edge.function.get()];
            buffer.resize(static_cast<std::size_t>(edge.function->num_inputs()));
            Tensor& slot = buffer[static_cast<std::size_t>(edge.input_nr)];
            if (i < outputs.size() && outputs[i].defined()) {
                const Tensor grad = conform(outputs[i], node->input_metadata[i], *node);
                slot = slot.defined() ? add(slot, grad) : grad;
            }
            if (--dependencies[edge.function.get()] == 0) {
                ready.push_back(edge.function);
            }
        }
    }
}

}  // namespace

std::uint64_t backward_runs() { return runs_on_this_thread; }

std::vector<bool> reaches(const std::vector<Tensor>& outputs, const std::vector<Tensor>& leaves) {
    std::unordered_set<Node*> seen;
    std::vector<Node*> to_visit;
    for (const Tensor& output : outputs) {
        if (output.defined() && output.requires_grad()) {
            to_visit.push_back(gradient_edge(output).function.get());
        }
    }
    while (!to_visit.empty()) {
        Node* node = to_visit.back();
        to_visit.pop_back();
        if (node == nullptr || !seen.insert(node).second) {
            continue;
        }
        for (const Edge& edge : node->next_edges) {
            to_visit.push_back(edge.function.get());
        }
    }
    std::vector<bool> reached;
    for (const Tensor& leaf : leaves) {
        // A leaf's accumulator exists while a graph uses it, so one never made was not reached.
        const auto& meta = leaf.impl().autograd;
        std::shared_ptr<Node> accumulator;
        if (meta && !meta->grad_fn) {
            const std::lock_guard lock(meta->mutex);
            accumulator = meta->grad_accumulator.lock();
        }
        reached.push_back(accumulator != nullptr && seen.count(accumulator.get()) > 0);
    }
    return reached;
}

void set_anomaly_enabled(bool enabled) { anomaly_enabled = enabled; }
bool is_anomaly_enabled() { return anomaly_enabled.load(); }

void backward(const Tensor& root, const std::optional<Tensor>& gradient, bool retain_graph) {
    // Backward ops run in the dtypes forward recorded, never autocast (as PyTorch's engine).
    const autocast::Applied no_autocast;
    if (!root.requires_grad()) {
        throw ValueError("backward: the tensor does not require grad and has no grad_fn");
    }
    const NoGradGuard no_grad;
    const Tensor seed =
        seed_of(root, gradient && gradient->defined() ? gradient->detach() : Tensor(), "backward");
    run({gradient_edge(root)}, {seed}, retain_graph, nullptr, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& grad_outputs,
                         const std::vector<Tensor>& inputs, bool retain_graph, bool create_graph,
                         bool allow_unused) {
    const autocast::Applied no_autocast;
    if (grad_outputs.size() != outputs.size()) {
        throw ValueError("grad: " + std::to_string(grad_outputs.size()) + " grad_outputs for " +
                         std::to_string(outputs.size()) + " outputs");
    }
    std::vector<Edge> roots;
    std::vector<Tensor> seeds;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (!outputs[i].requires_grad()) {
            throw ValueError("grad: element " + std::to_string(i) + " of outputs does not "
                             "require grad and has no grad_fn");
        }
        roots.push_back(gradient_edge(outputs[i]));
        seeds.push_back(seed_of(outputs[i], grad_outputs[i], "grad"));
    }
    Captures captures;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].requires_grad()) {
            throw ValueError("grad: element " + std::to_string(i) + " of inputs does not "
                             "require grad");
        }
        const Edge edge = gradient_edge(inputs[i]);
        captures[{edge.function.get(), edge.input_nr}] = i;
    }
    std::vector<Tensor> captured(inputs.size());
    {
        // create_graph: the backward ops record, so the gradients are differentiable.
        const std::optional<NoGradGuard> no_grad =
            create_graph ? std::nullopt : std::optional<NoGradGuard>(std::in_place);
        run(roots, seeds, retain_graph || create_graph, &captures, &captured, create_graph);
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!captured[i].defined()) {
            if (!allow_unused) {
                throw ValueError("grad: input " + std::to_string(i) + " was not used in the "
                                 "graph of the outputs; pass allow_unused=True to get None");
            }
        } else if (!create_graph) {
            captured[i] = captured[i].detach();
        }
    }
    return captured;
}

}  // namespace kael::autograd
