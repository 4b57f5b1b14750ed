// Saved tensors and the version check that catches in-place writes between forward and backward.
#include "record.h"

#include <utility>

namespace kael::autograd {

namespace {

thread_local const std::string* running_node = nullptr;
thread_local std::shared_ptr<Node> running_backward;

}  // namespace

RunningNode::RunningNode(const std::string& name) : previous_(running_node) {
    running_node = &name;
}

RunningNode::~RunningNode() { running_node = previous_; }

RunningBackward::RunningBackward(std::shared_ptr<Node> node)
    : previous_(std::exchange(running_backward, std::move(node))) {}

RunningBackward::~RunningBackward() { running_backward = std::move(previous_); }

SavedTensor SavedTensor::output(const Tensor& tensor) {
    SavedTensor saved(tensor);
    saved.output_ = tensor.defined();
    return saved;
}

SavedTensor::SavedTensor(const Tensor& tensor) {
    if (tensor.defined()) {
        data_ = tensor.detach();
        version_ = tensor.impl().storage->version();
        if (tensor.requires_grad()) {
            const std::shared_ptr<AutogradMeta>& meta = tensor.impl().autograd;
            if (meta->grad_fn) {
                grad_fn_ = meta->grad_fn;
                output_nr_ = meta->output_nr;
            } else {
                leaf_ = meta;
            }
        }
    }
}

Tensor SavedTensor::unpack() const {
    if (!data_.defined()) {
        return data_;
    }
    const std::uint64_t now = data_.impl().storage->version();
    if (now != version_) {
        const std::string needed_by =
            running_node != nullptr ? ", saved for " + *running_node + "," : "";
        throw Error("one of the variables needed for gradient computation has been modified by "
                    "an inplace operation: [" + to_string(data_.shape()) + " " +
                    to_string(data_.dtype()) + "]" + needed_by + " is at version " +
                    std::to_string(now) + "; expected version " + std::to_string(version_) +
                    " instead. Hint: it was written in place (copy_, fill_, +=, an optimizer "
                    "step, ...) after the forward pass saved it; write into a clone() instead, "
                    "or call backward before writing");
    }
    if (!is_grad_enabled()) {
        return data_;  // a plain backward: the formula's ops record nothing
    }
    // Backward with create_graph: the formula is differentiated too, so the saved tensor
    // carries its original gradient edge again.
    std::shared_ptr<Node> node = output_ ? running_backward : grad_fn_.lock();
    if (!leaf_ && !node) {
        return data_;
    }
    Tensor connected = data_.detach();
    if (leaf_) {
        connected.impl().autograd = leaf_;  // one state: gradients reach the leaf's grad
    } else {
        auto meta = std::make_shared<AutogradMeta>();
        meta->requires_grad = true;
        meta->grad_fn = std::move(node);
        meta->output_nr = output_ ? 0 : output_nr_;
        connected.impl().autograd = std::move(meta);
    }
    return connected;
}

}  // namespace kael::autograd
