// Saved tensors and the version check that catches in-place writes between forward and backward.
#include "record.h"

namespace kael::autograd {

namespace {

thread_local const std::string* running_node = nullptr;

}  // namespace

RunningNode::RunningNode(const std::string& name) : previous_(running_node) {
    running_node = &name;
}

RunningNode::~RunningNode() { running_node = previous_; }

SavedTensor::SavedTensor(const Tensor& tensor) {
    if (tensor.defined()) {
        data_ = tensor.detach();
        version_ = tensor.impl().storage->version();
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
    return data_;
}

}  // namespace kael::autograd
