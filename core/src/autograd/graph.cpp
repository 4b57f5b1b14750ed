// The graph: grad mode, recording nodes, leaf accumulation, and the autograd side of Tensor.
#include <set>
#include <string>
#include <utility>

#include "kael/device_graph.h"
#include "kael/ops.h"
#include "../tensor_internal.h"
#include "record.h"

namespace kael {

using autograd::meta_of;
using autograd::metadata_of;

namespace {

thread_local bool grad_mode_enabled = true;

// A node whose backward formula is a function of the output gradient; releasing it drops the
// tensors the function captured. Graphs may share nodes across threads (a retained graph, or a
// graph part two backward calls reach), so the formula is read and released under a lock.
class FunctionNode final : public Node {
public:
    FunctionNode(const char* name, autograd::BackwardFunction backward)
        : name_(name), backward_(std::move(backward)) {}

    std::vector<Tensor> apply(std::vector<Tensor> grads) override {
        autograd::BackwardFunction backward;
        {
            const std::lock_guard lock(mutex_);
            backward = backward_;  // a copy keeps the saved tensors alive while it runs
        }
        if (!backward) {
            throw Error(name_ +
                        ": trying to backward through the graph a second time; its saved "
                        "tensors were released by the first backward (call backward "
                        "with retain_graph=true the first time to keep them)");
        }
        if (grads.empty() || !grads.front().defined()) {
            return std::vector<Tensor>(next_edges.size());
        }
        const autograd::RunningNode running(name_);
        std::vector<Tensor> result = backward(grads.front());
        if (result.size() != next_edges.size()) {
            throw Error(name_ + ": backward returned " + std::to_string(result.size()) +
                        " gradients for " + std::to_string(next_edges.size()) + " inputs");
        }
        return result;
    }
    [[nodiscard]] std::string name() const override { return name_; }
    // The formulas written with differentiable ops on the gradient, saved inputs and saved
    // outputs (SavedTensor::output: connected to this node under create_graph).
    [[nodiscard]] bool differentiable_backward() const override {
        static const std::set<std::string, std::less<>> composed = {
            "AddBackward", "SubBackward", "NegBackward", "MulBackward", "DivBackward",
            "PowBackward", "MatmulBackward", "SumBackward", "MeanBackward", "ExpandBackward",
            "ViewBackward", "PermuteBackward", "TransposeBackward", "SliceBackward",
            "SelectBackward", "SqueezeBackward", "UnsqueezeBackward", "CloneBackward",
            "CopyBackward", "ToDTypeBackward", "ToDeviceBackward", "AsStridedBackward",
            "LogBackward", "SinBackward", "CosBackward", "SquareBackward", "AbsBackward",
            "SignBackward", "CeilBackward", "FloorBackward", "RoundBackward", "TruncBackward",
            "FracBackward", "GatherBackward", "ScatterAddBackward", "MaskedFillBackward",
            "WhereBackward", "CumsumBackward", "MaximumBackward", "MinimumBackward",
            "LinearBackward", "ReluBackward", "SigmoidBackward", "GeluBackward", "TanhBackward",
            "ExpBackward", "SqrtBackward", "RsqrtBackward", "ReciprocalBackward",
            "SoftmaxBackward", "LogSoftmaxBackward", "CrossEntropyBackward",
            "LayerNormBackward", "ScaledDotProductAttentionBackward", "SiluBackward",
            "ErfBackward", "ErfcBackward", "FmodBackward", "RemainderBackward",
            "ProdBackward", "LogsumexpBackward", "VarBackward", "StdBackward", "NormBackward",
            "MaxBackward", "MinBackward", "AmaxBackward", "AminBackward"};
        return composed.count(name_) != 0;
    }
    void release_saved_tensors() override {
        autograd::BackwardFunction released;  // destroyed after the lock (see AccumulateGrad)
        const std::lock_guard lock(mutex_);
        released.swap(backward_);
    }

private:
    std::string name_;
    std::mutex mutex_;
    autograd::BackwardFunction backward_;
};

// Whether tensor is the only handle on its whole storage, densely: no other tensor, view or
// autograd record can read or write it, so it can become a leaf's .grad without a copy.
// A view counts when its base is held by nothing but the view (sum_to's reshape of a sum).
bool is_private(const Tensor& tensor) {
    const TensorImpl& impl = tensor.impl();
    const bool base_private =
        !impl.view_base || (impl.view_base.use_count() == 1 && !impl.view_base->autograd);
    const long holders = impl.view_base ? 2 : 1;  // the view, and its base
    return tensor.impl_ptr().use_count() == 1 && base_private &&
           impl.storage.use_count() == holders && !impl.autograd && tensor.offset() == 0 &&
           tensor.is_contiguous() && impl.storage->nbytes() == tensor.nbytes();
}

// Adds incoming gradients into a leaf's grad, under the leaf's lock so concurrent backward
// calls lose no update. A grad nothing else holds is added to in place (as PyTorch does: no
// new block, no write-allocate of one); else the sum is a new tensor, so a grad() handle read
// earlier never changes (so too while a device graph records).
// The old grad dies after the lock: freeing an imported (DLPack) buffer may wait for Python's
// GIL, which a Python thread blocked on this lock in grad() would hold.
class AccumulateGrad final : public Node {
public:
    explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) {}

    std::vector<Tensor> apply(std::vector<Tensor> grads) override {
        Tensor incoming = grads.front();
        if (incoming.defined()) {
            AutogradMeta& meta = *leaf_->autograd;
            for (const auto& hook : std::vector(meta.hooks)) {  // a hook may register another
                Tensor replaced = hook(incoming);
                if (replaced.defined()) {
                    incoming = std::move(replaced);
                }
            }
            Tensor previous;
            const std::lock_guard lock(meta.mutex);
            // The first gradient is kept as it is when nothing else can see its memory (as
            // PyTorch steals it); otherwise a private copy, since others may share it.
            if (meta.grad.defined() && !is_grad_enabled() && !recording_device_graph() &&
                is_private(meta.grad) && meta.grad.shape() == incoming.shape() &&
                meta.grad.dtype() == incoming.dtype() && meta.grad.device() == incoming.device()) {
                add_(meta.grad, incoming);
                return {};
            }
            Tensor sum = meta.grad.defined()    ? add(meta.grad, incoming)
                         : is_private(incoming) ? incoming
                                                : incoming.clone();
            previous = std::exchange(meta.grad, std::move(sum));
        }
        return {};
    }
    [[nodiscard]] std::string name() const override { return "AccumulateGrad"; }
    [[nodiscard]] bool accumulates() const override { return true; }
    [[nodiscard]] bool differentiable_backward() const override { return true; }

private:
    std::shared_ptr<TensorImpl> leaf_;
};

std::shared_ptr<Node> make_node(const char* name, autograd::BackwardFunction backward,
                                const std::vector<Tensor>& inputs) {
    auto node = std::make_shared<FunctionNode>(name, std::move(backward));
    for (const Tensor& input : inputs) {
        node->next_edges.push_back(autograd::gradient_edge(input));
        node->input_metadata.push_back(metadata_of(input));
    }
    return node;
}

void set_history(const Tensor& tensor, std::shared_ptr<Node> node) {
    AutogradMeta& meta = meta_of(tensor);
    meta.requires_grad = true;
    meta.grad_fn = std::move(node);
    meta.output_nr = 0;
}


}  // namespace

bool is_grad_enabled() {
    return grad_mode_enabled;
}
void set_grad_enabled(bool enabled) {
    grad_mode_enabled = enabled;
}

bool Tensor::requires_grad() const {
    const auto& meta = impl().autograd;
    return meta && (meta->requires_grad || meta->grad_fn);
}

Tensor Tensor::set_requires_grad(bool requires_grad) const {
    if (!is_leaf()) {
        throw ValueError(
            "set_requires_grad: only leaf tensors can change requires_grad; this "
            "tensor was computed by " +
            grad_fn()->name() + " (use detach())");
    }
    if (requires_grad && !is_floating(dtype())) {
        throw TypeError("set_requires_grad: only floating tensors can require grad, got " +
                        kael::to_string(dtype()));
    }
    if (requires_grad || impl().autograd) {
        meta_of(*this).requires_grad = requires_grad;
    }
    return *this;
}

bool Tensor::is_leaf() const {
    return !impl().autograd || !impl().autograd->grad_fn;
}

Tensor Tensor::grad() const {
    const std::shared_ptr<AutogradMeta>& meta = impl().autograd;
    if (!meta) {
        return {};
    }
    const std::lock_guard lock(meta->mutex);
    return meta->grad;
}

void Tensor::set_grad(const Tensor& grad) const {
    if (grad.defined() &&
        (grad.shape() != shape() || grad.dtype() != dtype() || grad.device() != device())) {
        throw ValueError("set_grad: gradient of shape " + kael::to_string(grad.shape()) + " (" +
                         kael::to_string(grad.dtype()) + ", " + grad.device().str() +
                         ") does not match tensor of shape " + kael::to_string(shape()) + " (" +
                         kael::to_string(dtype()) + ", " + device().str() + ")");
    }
    if (grad.defined() || impl().autograd) {
        AutogradMeta& meta = meta_of(*this);
        Tensor previous;  // destroyed after the lock, as in AccumulateGrad
        const std::lock_guard lock(meta.mutex);
        previous = std::exchange(meta.grad, grad);
    }
}

void Tensor::zero_grad() const {
    const std::shared_ptr<AutogradMeta>& meta = impl().autograd;
    if (!meta) {
        return;
    }
    const std::lock_guard lock(meta->mutex);
    if (meta->grad.defined()) {
        const NoGradGuard no_grad;
        meta->grad.fill_(0);
    }
}

std::shared_ptr<Node> Tensor::grad_fn() const {
    return impl().autograd ? impl().autograd->grad_fn : nullptr;
}

Tensor Tensor::detach() const {
    auto alias = std::make_shared<TensorImpl>();
    alias->storage = impl().storage;
    alias->shape = shape();
    alias->strides = strides();
    alias->offset = offset();
    alias->dtype = dtype();
    return Tensor(alias);
}

void Tensor::backward(const std::optional<Tensor>& gradient, bool retain_graph) const {
    autograd::backward(*this, gradient, retain_graph);
}

namespace autograd {

AutogradMeta& meta_of(const Tensor& tensor) {
    std::shared_ptr<AutogradMeta>& meta = tensor.impl().autograd;
    if (!meta) {
        meta = std::make_shared<AutogradMeta>();
    }
    return *meta;
}

InputMetadata metadata_of(const Tensor& tensor) {
    return InputMetadata{tensor.shape(), tensor.dtype(), tensor.device()};
}


bool any_requires_grad(std::span<const Tensor> tensors) {
    for (const Tensor& tensor : tensors) {
        if (tensor.defined() && tensor.requires_grad()) {
            return true;
        }
    }
    return false;
}

// A view's history as its base's now is: the gradient flows to the base's current history
// through the view's elements (PyTorch's view rebase after an in-place op on the base).
void rebase_view(const Tensor& view) {
    const Tensor base(view.impl().view_base);
    const ViewGeometry geometry{base.shape(), view.shape(), view.strides(), view.offset()};
    auto view_of_base = [=](const Tensor& grad) {
        return std::vector<Tensor>{view_into_base(grad, geometry)};
    };
    set_history(view, make_node("AsStridedBackward", view_of_base, {base}));
    view.impl().base_history = detail::base_history_of(base.impl());
}

Edge gradient_edge(const Tensor& tensor) {
    const TensorImpl& impl = tensor.impl();
    // A view made before an in-place op on its base would give the base's old history.
    if (impl.view_base && impl.base_history != detail::base_history_of(*impl.view_base) &&
        is_floating(tensor.dtype()) && Tensor(impl.view_base).requires_grad()) {
        rebase_view(tensor);
    }
    const auto& meta = tensor.impl().autograd;
    if (!meta) {
        return {};
    }
    if (meta->grad_fn) {
        return {meta->grad_fn, meta->output_nr};
    }
    if (!meta->requires_grad) {
        return {};
    }
    // Several threads may record ops on one leaf at once; all must share one accumulator.
    const std::lock_guard lock(meta->mutex);
    std::shared_ptr<Node> accumulator = meta->grad_accumulator.lock();
    if (!accumulator) {
        accumulator = std::make_shared<AccumulateGrad>(tensor.impl_ptr());
        meta->grad_accumulator = accumulator;
    }
    return {accumulator, 0};
}

Recording::Recording(std::span<const Tensor> inputs)
    : active_(is_grad_enabled() && any_requires_grad(inputs)) {
    if (active_) {
        // Only a recorded op needs them; every op constructs a Recording.
        inputs_.assign(inputs.begin(), inputs.end());
        no_grad_.emplace();
    }
}

Tensor Recording::finish(Tensor out, const char* name, BackwardFunction backward) const {
    if (!active_ || !backward || !out.defined() || !is_floating(out.dtype())) {
        return out;
    }
    for (const Tensor& input : inputs_) {
        if (out.same_impl(input)) {
            return out;
        }
    }
    set_history(out, make_node(name, std::move(backward), inputs_));
    return out;
}

void check_in_place(const Tensor& target, const char* op) {
    if (!is_grad_enabled()) {
        return;
    }
    const bool leaf = target.requires_grad() && target.is_leaf();
    const auto& base = target.impl().view_base;
    const bool view_of_leaf = base && Tensor(base).requires_grad() && Tensor(base).is_leaf();
    if (leaf || view_of_leaf) {
        throw ValueError(std::string(op) +
                         ": a leaf tensor that requires grad (or a view of one) "
                         "cannot be modified in place while grad mode is on; use NoGradGuard");
    }
}

void record_in_place(const Tensor& target, const std::vector<Tensor>& inputs, const char* name,
                     const BackwardFunction& backward) {
    if (!is_grad_enabled() || !is_floating(target.dtype())) {
        return;
    }
    const std::shared_ptr<TensorImpl> base_impl = target.impl().view_base;
    const Tensor base = base_impl ? Tensor(base_impl) : target;
    if (!any_requires_grad(inputs) && !target.requires_grad() && !base.requires_grad()) {
        return;
    }
    std::vector<Tensor> edges_from{base};
    edges_from.insert(edges_from.end(), inputs.begin(), inputs.end());
    if (!base_impl) {
        set_history(target, make_node(name, backward, edges_from));
        ++meta_of(target).history;  // the views of target made before are stale now
        return;
    }
    if (!base.is_contiguous() || base.offset() != 0) {
        throw ValueError(std::string(name) +
                         ": in-place writes through a view are "
                         "differentiable only when the viewed tensor is contiguous");
    }
    const ViewGeometry geometry{base.shape(), target.shape(), target.strides(), target.offset()};
    // The base's new value is its old value with the view's elements replaced.
    auto copy_slices = [=](const Tensor& grad) { return through_view(grad, geometry, backward); };
    set_history(base, make_node(name, copy_slices, edges_from));
    ++meta_of(base).history;  // sibling views are stale now; target is rebased here
    rebase_view(target);
}

}  // namespace autograd

std::uint64_t detail::base_history_of(const TensorImpl& base) {
    return base.autograd ? base.autograd->history : 0;
}

}  // namespace kael
