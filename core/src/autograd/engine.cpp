// The backward pass: dependency counting from the root, then nodes run once every gradient
// flowing into them has arrived.
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

void backward(const Tensor& root, const std::optional<Tensor>& gradient, bool retain_graph) {
    // Backward ops run in the dtypes forward recorded, never autocast (as PyTorch's engine).
    const autocast::Applied no_autocast;
    if (!root.requires_grad()) {
        throw ValueError("backward: the tensor does not require grad and has no grad_fn");
    }
    const NoGradGuard no_grad;
    Tensor seed;
    if (gradient && gradient->defined()) {
        if (gradient->shape() != root.shape()) {
            throw ValueError("backward: gradient of shape " + to_string(gradient->shape()) +
                             " does not match the tensor's shape " + to_string(root.shape()));
        }
        if (gradient->device() != root.device()) {
            throw DeviceError("backward: gradient is on " + gradient->device().str() +
                              " but the tensor is on " + root.device().str());
        }
        seed = gradient->detach().to(root.dtype());
    } else if (root.numel() != 1) {
        throw ValueError("backward: an implicit gradient exists only for one-element tensors; "
                         "pass a gradient for shape " + to_string(root.shape()));
    } else {
        seed = ones(root.shape(), root.dtype(), root.device());
    }
    const Edge root_edge = gradient_edge(root);

    // How many edges lead into each node reachable from the root.
    std::unordered_map<Node*, int> dependencies;
    std::unordered_set<Node*> seen{root_edge.function.get()};
    std::vector<Node*> to_visit{root_edge.function.get()};
    while (!to_visit.empty()) {
        Node* node = to_visit.back();
        to_visit.pop_back();
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
    buffers[root_edge.function.get()].resize(
        static_cast<std::size_t>(root_edge.function->num_inputs()));
    buffers[root_edge.function.get()][static_cast<std::size_t>(root_edge.input_nr)] = seed;
    std::vector<std::shared_ptr<Node>> ready{root_edge.function};
    while (!ready.empty()) {
        const std::shared_ptr<Node> node = ready.back();
        ready.pop_back();
        std::vector<Tensor> grads = std::move(buffers[node.get()]);
        buffers.erase(node.get());
        std::vector<Tensor> outputs = node->apply(std::move(grads));
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

}  // namespace kael::autograd
