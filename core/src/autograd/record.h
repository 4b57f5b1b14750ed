#pragma once
// How ops record themselves: a Recording around the forward computation, then finish() with
// the backward formula, written with ops on the incoming gradient.
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <type_traits>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/plugin_api.h"

namespace kael::autograd {

// Input gradients for one output gradient, one per recorded input (undefined: none).
using BackwardFunction = std::function<std::vector<Tensor>(const Tensor& grad)>;

// A view's place in its base (contiguous from storage offset 0).
struct ViewGeometry {
    Shape base_shape;
    Shape shape;
    Shape strides;
    std::int64_t offset;
};
// The base's gradient for a view's gradient: zero outside the view (view_gradients.cpp).
[[nodiscard]] Tensor view_into_base(const Tensor& grad, const ViewGeometry& view);
// An in-place op's gradient through a view: the base's gradient grad with the view's elements
// replaced by backward's first gradient (the rest of backward's gradients as they are).
[[nodiscard]] std::vector<Tensor> through_view(const Tensor& grad, const ViewGeometry& view,
                                               const BackwardFunction& backward);

// Whether any defined tensor of tensors requires grad.
[[nodiscard]] bool any_requires_grad(std::span<const Tensor> tensors);

// The gradient edge of a tensor: its grad_fn, its leaf accumulator, or none.
[[nodiscard]] Edge gradient_edge(const Tensor& tensor);

// Switches grad mode off while a recorded forward runs, so helper ops record nothing, and remembers
// whether the result needs a node.
class Recording {
public:
    explicit Recording(std::span<const Tensor> inputs);
    explicit Recording(const std::vector<Tensor>& inputs)
        : Recording(std::span<const Tensor>(inputs)) {}
    // Recording({a, b}): the inputs without a vector on the heap (every op builds a Recording).
    explicit Recording(std::initializer_list<Tensor> inputs)
        : Recording(std::span<const Tensor>(inputs.begin(), inputs.size())) {}
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;

    [[nodiscard]] bool active() const { return active_; }
    // Gives out a node with edges to the inputs; returns out unchanged when inactive, when
    // backward is empty, when out is not floating, or when out is one of the inputs.
    Tensor finish(Tensor out, const char* name, BackwardFunction backward) const;
    // A backward lambda becomes a std::function (a heap block for most captures) only when the
    // op is recorded.
    template <typename F, typename = std::enable_if_t<
                              !std::is_same_v<std::decay_t<F>, BackwardFunction>>>
    Tensor finish(Tensor out, const char* name, F&& backward) const {
        if (!active_) {
            return out;
        }
        return finish(std::move(out), name, BackwardFunction(std::forward<F>(backward)));
    }

private:
    std::vector<Tensor> inputs_;
    bool active_ = false;
    // Grad mode off while a recorded op's forward runs; an op that records nothing needs no
    // guard, since none of its inputs requires grad (and it costs two thread-local writes).
    std::optional<NoGradGuard> no_grad_;
};

// The autograd state of tensor (made on first use) and what the engine checks a gradient for it
// against (graph.cpp).
[[nodiscard]] AutogradMeta& meta_of(const Tensor& tensor);
[[nodiscard]] InputMetadata metadata_of(const Tensor& tensor);

// Records one node for several outputs of input (split's views): backward gets a gradient
// per output (undefined for outputs that got none) and returns input's.
void record_multi_output(const std::vector<Tensor>& outputs, const Tensor& input, const char* name,
                         std::function<Tensor(const std::vector<Tensor>&)> backward);

// Records an in-place op on target: backward maps the gradient of target's new value to the
// gradients of its old value and of inputs. A view target rewrites its base's history
// (ValueError when that base is not contiguous).
void record_in_place(const Tensor& target, const std::vector<Tensor>& inputs, const char* name,
                     const BackwardFunction& backward);
// Call before writing: ValueError for a leaf that requires grad (or a view of one) while grad
// mode is on.
void check_in_place(const Tensor& target, const char* op);

// What backward functions capture (PyTorch's SavedVariable): a handle that shares storage and
// view but carries no autograd state, so saved outputs do not keep their own graph alive, and
// the storage's version at save time, so a later in-place write is caught instead of silently
// giving wrong gradients. Undefined for an undefined tensor.
class SavedTensor {
public:
    SavedTensor() = default;
    explicit SavedTensor(const Tensor& tensor);
    // The output of the op whose backward saves it (tanh's, exp's): under create_graph it is
    // unpacked connected to the node running that backward, output 0, as PyTorch's saved
    // results are, so formulas that read it are differentiable.
    [[nodiscard]] static SavedTensor output(const Tensor& tensor);

    [[nodiscard]] bool defined() const { return data_.defined(); }
    // The saved tensor; kael::Error (PyTorch's message) when its storage was written since.
    [[nodiscard]] Tensor unpack() const;

private:
    Tensor data_;
    std::uint64_t version_ = 0;
    // Where the saved tensor's gradient goes, for backward of backward (create_graph): a
    // leaf's autograd state, or a non-leaf's node (weakly: a node may save its own output).
    std::shared_ptr<AutogradMeta> leaf_;
    std::weak_ptr<Node> grad_fn_;
    int output_nr_ = 0;
    bool output_ = false;
};

// The node whose backward runs on this thread (the engine sets it around apply), so a saved
// output can be connected to it under create_graph.
class RunningBackward {
public:
    explicit RunningBackward(std::shared_ptr<Node> node);
    ~RunningBackward();
    RunningBackward(const RunningBackward&) = delete;
    RunningBackward& operator=(const RunningBackward&) = delete;

private:
    std::shared_ptr<Node> previous_;
};

// Marks the node whose backward formula runs on this thread, so SavedTensor's error names it.
class RunningNode {
public:
    explicit RunningNode(const std::string& name);
    ~RunningNode();
    RunningNode(const RunningNode&) = delete;
    RunningNode& operator=(const RunningNode&) = delete;

private:
    const std::string* previous_;
};

[[nodiscard]] inline SavedTensor saved(const Tensor& tensor) { return SavedTensor(tensor); }
[[nodiscard]] inline SavedTensor saved_output(const Tensor& out) {
    return SavedTensor::output(out);
}
// Saves tensor only when a gradient that reads it will be computed.
[[nodiscard]] inline SavedTensor saved_if(bool needed, const Tensor& tensor) {
    return needed ? SavedTensor(tensor) : SavedTensor();
}

[[nodiscard]] inline Tensor zero_scalar(const Tensor& like) {
    return zeros({}, like.dtype(), like.device());
}

// Backward formulas of the elementwise, reduction and index families (nodes_*.cpp).
// elementwise_backward is empty for ops without a gradient (relu_backward, sigmoid_backward).
[[nodiscard]] BackwardFunction elementwise_backward(kael_element_op op,
                                                    const std::vector<Tensor>& inputs,
                                                    const Tensor& out,
                                                    const kael_element_params& params);
[[nodiscard]] const char* elementwise_name(kael_element_op op);
// The same for the rounding, division and math ops (nodes_elementwise_math.cpp), which the two
// above defer to.
[[nodiscard]] BackwardFunction elementwise_more_backward(kael_element_op op,
                                                         const std::vector<Tensor>& inputs,
                                                         const Tensor& out);
[[nodiscard]] const char* elementwise_more_name(kael_element_op op);

// Reductions over every element (dim empty) or one dimension; input is the forward input.
[[nodiscard]] BackwardFunction sum_backward(const Tensor& input, std::optional<std::int64_t> dim,
                                            bool keepdim);
// sum over several dims (wrapped, highest first) of an input of rank >= 1.
[[nodiscard]] BackwardFunction sum_dims_backward(const Tensor& input, const Shape& dims,
                                                 bool keepdim);
[[nodiscard]] BackwardFunction prod_backward(const Tensor& input, const Tensor& out,
                                             std::optional<std::int64_t> dim, bool keepdim);
// logsumexp of input into out, both seen with the reduced dims kept (kept_shape):
// d out / d x = exp(x - out), as PyTorch's logsumexp_backward.
[[nodiscard]] BackwardFunction logsumexp_backward(const Tensor& input, const Tensor& out,
                                                  const Shape& kept_shape);
// var (std undefined) or std (std its output) with divisor n - correction, clamped at 0:
// d var / d x = 2 (x - mean) / divisor, d std / d x = (x - mean) / (divisor * std).
[[nodiscard]] BackwardFunction variance_backward(const Tensor& input, const Tensor& std,
                                                 std::optional<std::int64_t> dim, bool keepdim,
                                                 double divisor);
// max (is_max) or min: the gradient goes to the extreme elements (split evenly between ties
// for a full reduction, to the argmax/argmin position along a dimension).
[[nodiscard]] BackwardFunction extremum_backward(const Tensor& input, const Tensor& out,
                                                 std::optional<std::int64_t> dim, bool keepdim,
                                                 bool is_max);

[[nodiscard]] BackwardFunction matmul_backward(const Tensor& a, const Tensor& b);

[[nodiscard]] BackwardFunction gather_backward(const Tensor& data, std::int64_t axis,
                                               const Tensor& index);
// For scatter_add_: the old data takes the gradient unchanged, source the gathered part.
[[nodiscard]] BackwardFunction scatter_add_backward(const Tensor& source, std::int64_t axis,
                                                    const Tensor& index);

// softmax / log_softmax along size of a contiguous outer x size x inner out (the forward's
// output), and cross_entropy from its contiguous logits, lse and targets.
[[nodiscard]] BackwardFunction softmax_backward(const Tensor& out, std::int64_t outer,
                                                std::int64_t size, std::int64_t inner, bool log);
[[nodiscard]] BackwardFunction cross_entropy_backward(const Tensor& logits, const Tensor& lse,
                                                      const Tensor& targets,
                                                      Reduction reduction);

}  // namespace kael::autograd
