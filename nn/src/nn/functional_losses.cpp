// The losses of kael/nn_functional.h, composed from ops so autograd differentiates them; the
// fused cross_entropy kernel serves the default options.
#include <cmath>

#include "autograd/record.h"
#include "kael/autocast.h"
#include "kael/nn_functional.h"
#include "kael/ops.h"
#include "nn_internal.h"

namespace kael::nn::functional {

Reduction parse_reduction(const std::string& reduction, const char* op) {
    if (reduction == "mean") {
        return Reduction::Mean;
    }
    if (reduction == "sum") {
        return Reduction::Sum;
    }
    if (reduction == "none") {
        return Reduction::None;
    }
    throw ValueError(std::string(op) + ": reduction must be 'none', 'mean' or 'sum', got '" +
                     reduction + "'");
}

namespace {

Tensor reduce(const Tensor& loss, Reduction reduction) {
    switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: break;
    }
    return mean(loss);
}

Tensor scalar(double value, const Tensor& like) {
    return cached_scalar(value, like.dtype(), like.device());
}

void require_floating(const Tensor& input, const char* op, const char* what) {
    if (!is_floating(input.dtype())) {
        throw TypeError(std::string(op) + ": " + what + " must be floating, got " +
                        to_string(input.dtype()));
    }
}

// [N, C, d1, ...] (or [C]) as [M, C] rows, the class dim last.
Tensor class_rows(const Tensor& scores) {
    if (scores.dim() == 1) {
        return scores.unsqueeze(0);
    }
    const std::int64_t classes = scores.size(1);
    return movedim(scores, {1}, {-1}).reshape({-1, classes});
}

// The shape an index target of these scores has: scores' without the class dim.
Shape target_shape(const Tensor& scores) {
    Shape shape = scores.shape();
    shape.erase(shape.begin() + (scores.dim() == 1 ? 0 : 1));
    return shape;
}

// Negative log-likelihood of index targets, with label smoothing mixed in (PyTorch's formula:
// the smoothed part has the same weights and the same denominator).
Tensor indexed_nll(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options,
                   const char* op) {
    if (target.dtype() != DType::I64) {
        throw TypeError(std::string(op) + ": class-index targets must be int64, got " +
                        to_string(target.dtype()));
    }
    if (target.shape() != target_shape(log_probs)) {
        throw ValueError(std::string(op) + ": input of shape " + to_string(log_probs.shape()) +
                         " needs a target of shape " + to_string(target_shape(log_probs)) +
                         ", got " + to_string(target.shape()));
    }
    const Tensor rows = class_rows(log_probs);
    const std::int64_t classes = rows.size(1);
    const Tensor flat_target = target.reshape({-1});
    const Tensor counted = ne(flat_target, scalar(static_cast<double>(options.ignore_index), flat_target));
    const Tensor safe_target = where(counted, flat_target, scalar(0, flat_target));
    if (safe_target.numel() > 0 &&
        (min(safe_target).item<std::int64_t>() < 0 || max(safe_target).item<std::int64_t>() >= classes)) {
        throw IndexError(std::string(op) + ": a target is outside [0, " + std::to_string(classes) +
                         ") and is not ignore_index " + std::to_string(options.ignore_index));
    }
    Tensor weight = counted.to(rows.dtype());
    Tensor class_weight;
    if (options.weight.defined()) {
        if (options.weight.shape() != Shape{classes}) {
            throw ValueError(std::string(op) + ": weight must have shape [" +
                             std::to_string(classes) + "], got " + to_string(options.weight.shape()));
        }
        class_weight = options.weight.to(rows.dtype());
        weight = index_select(class_weight, 0, safe_target) * weight;
    }
    // An ignored row adds nothing, whatever its values (-inf log-probabilities included).
    const Tensor zero = zeros({}, rows.dtype(), rows.device());
    Tensor loss = where(counted, -(gather(rows, 1, safe_target.unsqueeze(1)).squeeze(1) * weight),
                        zero);
    if (options.label_smoothing > 0) {
        const Tensor weighted = class_weight.defined() ? rows * class_weight.unsqueeze(0) : rows;
        const Tensor smooth = where(counted, -sum(weighted, 1), zero);
        loss = loss * (1 - options.label_smoothing) +
               smooth * (options.label_smoothing / static_cast<double>(classes));
    }
    switch (options.reduction) {
    case Reduction::None: return loss.reshape(target.shape());
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: break;
    }
    return sum(loss) / sum(weight);  // 0 / 0 = NaN when every target is ignored, as PyTorch
}

// Class-probability targets: -sum over classes of target * log_probs (* weight).
Tensor soft_nll(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options,
                const char* op) {
    if (target.shape() != log_probs.shape()) {
        throw ValueError(std::string(op) + ": probability targets must have input's shape " +
                         to_string(log_probs.shape()) + ", got " + to_string(target.shape()));
    }
    const std::int64_t class_dim = log_probs.dim() == 1 ? 0 : 1;
    const std::int64_t classes = log_probs.size(class_dim);
    Tensor probabilities = target.to(log_probs.dtype());
    if (options.label_smoothing > 0) {
        probabilities = probabilities * (1 - options.label_smoothing) +
                        options.label_smoothing / static_cast<double>(classes);
    }
    Tensor terms = log_probs * probabilities;
    if (options.weight.defined()) {
        Shape weight_shape(static_cast<std::size_t>(log_probs.dim()), 1);
        weight_shape[static_cast<std::size_t>(class_dim)] = classes;
        terms = terms * options.weight.to(log_probs.dtype()).reshape(weight_shape);
    }
    return reduce(-sum(terms, class_dim), options.reduction);
}

void check_options(const Tensor& input, const CrossEntropyOptions& options, const char* op) {
    require_floating(input, op, "input");
    if (input.dim() < 1) {
        throw ValueError(std::string(op) + ": input must have a class dimension, got a 0-d tensor");
    }
    if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
        throw ValueError(std::string(op) + ": label_smoothing must be in [0, 1], got " +
                         detail::format_number(options.label_smoothing));
    }
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options) {
    if (const auto cast = autocast::full({input, target, options.weight})) {
        const autocast::Applied applied;
        CrossEntropyOptions cast_options = options;
        cast_options.weight = (*cast)[2];
        return cross_entropy((*cast)[0], (*cast)[1], cast_options);
    }
    constexpr const char* op = "cross_entropy";
    check_options(input, options, op);
    if (is_floating(target.dtype())) {
        return soft_nll(log_softmax(input, input.dim() == 1 ? 0 : 1), target, options, op);
    }
    // The fused kernel serves PyTorch's defaults. Ignored targets are masked on the device
    // (class 0 in their place, their losses zeroed), never found by a host read: a training
    // step then queues without waiting for its forward, and a device graph can record it. As
    // in PyTorch, an ignored row with no finite logit gets a NaN gradient.
    const bool plain = input.dim() == 2 && target.dim() == 1 && !options.weight.defined() &&
                       options.label_smoothing == 0 && target.dtype() == DType::I64 &&
                       target.size(0) == input.size(0);
    if (plain) {
        const Tensor kept = ne(target, scalar(static_cast<double>(options.ignore_index), target));
        const Tensor safe = where(kept, target, zeros({}, DType::I64, target.device()));
        const Tensor weights = kept.to(input.dtype());
        const Tensor losses = where(kept, kael::cross_entropy(input, safe, Reduction::None),
                                    zeros({}, input.dtype(), input.device()));
        switch (options.reduction) {
            case Reduction::None: return losses;
            case Reduction::Sum: return sum(losses);
            case Reduction::Mean: return sum(losses) / sum(weights);
        }
    }
    // Ignored rows are zeroed first, so that a fully masked row (all -inf) makes no NaN in the
    // log-softmax, the loss or the gradient, as PyTorch ignores it.
    const std::int64_t class_dim = input.dim() == 1 ? 0 : 1;
    Tensor counted_input = input;
    if (target.dtype() == DType::I64 && target.dim() + 1 == input.dim()) {
        const Tensor counted =
            ne(target, scalar(static_cast<double>(options.ignore_index), target));
        counted_input = where(counted.unsqueeze(class_dim), input,
                              zeros({}, input.dtype(), input.device()));
    }
    return indexed_nll(log_softmax(counted_input, class_dim), target, options, op);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options) {
    if (const auto cast = autocast::full({input, target, options.weight})) {
        const autocast::Applied applied;
        CrossEntropyOptions widened = options;
        widened.weight = (*cast)[2];
        return nll_loss((*cast)[0], (*cast)[1], widened);
    }
    check_options(input, options, "nll_loss");
    CrossEntropyOptions plain = options;
    plain.label_smoothing = 0;
    return indexed_nll(input, target, plain, "nll_loss");
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
    if (const auto cast = autocast::full({input, target})) {
        const autocast::Applied applied;
        return mse_loss((*cast)[0], (*cast)[1], reduction);
    }
    require_floating(input, "mse_loss", "input");
    return reduce(square(input - target), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
    if (const auto cast = autocast::full({input, target})) {
        const autocast::Applied applied;
        return l1_loss((*cast)[0], (*cast)[1], reduction);
    }
    require_floating(input, "l1_loss", "input");
    return reduce(abs(input - target), reduction);
}

namespace {

// PyTorch's gradients, not the composition's: (p - t) / max(p (1 - p), 1e-12) stays finite
// where p saturates at 0 or 1 (the clamped logs' gradient there is 0 * inf). The elementwise
// losses; their recording's no-grad scope ends here, before weights and the reduction.
Tensor bce_elements(const Tensor& input, const Tensor& target) {
    const autograd::Recording recording({input, target});
    const Tensor log_p = clamp(log(input), -100, INFINITY);
    const Tensor log_q = clamp(log(-input + 1.0), -100, INFINITY);
    return recording.finish(
        -(target * log_p + (-target + 1.0) * log_q), "BinaryCrossEntropyBackward",
        [p_saved = autograd::saved(input), t_saved = autograd::saved(target)](const Tensor& g) {
            const Tensor p = p_saved.unpack();
            const Tensor t = t_saved.unpack();
            const Tensor spread = clamp(p * (-p + 1.0), 1e-12, INFINITY);
            // The target's, as PyTorch's: the logs unclamped (infinite where p saturates).
            return std::vector<Tensor>{g * (p - t) / spread, g * (log1p(-p) - log(p))};
        });
}

// (1 - t) x + s softplus(-x), s = (pos_weight - 1) t + 1, softplus(-x) = log(1 + exp(-|x|)) +
// max(-x, 0), which never exponentiates a positive number. Its gradient is PyTorch's,
// d/dx = (1 - t) - s sigmoid(-x): sigmoid(0) - t at a logit of 0, where |x| and max(-x, 0) of
// the composition have no slope. pos_weight's own gradient is added by the caller.
Tensor bce_logits_elements(const Tensor& input, const Tensor& target, const Tensor& pos_weight,
                           Tensor& softplus_negative) {
    const autograd::Recording recording({input, target});
    softplus_negative = log(exp(-abs(input)) + 1.0) + relu(-input);
    const Tensor scale = pos_weight.defined() ? (pos_weight - 1.0) * target + 1.0 : Tensor();
    const Tensor weighted = scale.defined() ? scale * softplus_negative : softplus_negative;
    return recording.finish(
        (-target + 1.0) * input + weighted, "BinaryCrossEntropyWithLogitsBackward",
        [x_saved = autograd::saved(input), t_saved = autograd::saved(target), scale,
         softplus_negative, pos_weight](const Tensor& g) {
            const Tensor x = x_saved.unpack();
            const Tensor sigmoid_negative = sigmoid(-x);
            const Tensor grad_x = -t_saved.unpack() + 1.0 -
                                  (scale.defined() ? scale * sigmoid_negative : sigmoid_negative);
            const Tensor grad_t =
                pos_weight.defined() ? -x + (pos_weight - 1.0) * softplus_negative : -x;
            return std::vector<Tensor>{g * grad_x, g * grad_t};
        });
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
    if (const auto cast = autocast::full({input, target, weight})) {
        const autocast::Applied applied;
        return binary_cross_entropy((*cast)[0], (*cast)[1], (*cast)[2], reduction);
    }
    require_floating(input, "binary_cross_entropy", "input");
    if (target.shape() != input.shape()) {
        throw ValueError("binary_cross_entropy: target of shape " + to_string(target.shape()) +
                         " must have input's shape " + to_string(input.shape()));
    }
    Tensor loss = bce_elements(input, target);
    if (weight.defined()) {
        loss = loss * weight;
    }
    return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        Reduction reduction) {
    if (const auto cast = autocast::full({input, target, weight, pos_weight})) {
        const autocast::Applied applied;
        return binary_cross_entropy_with_logits((*cast)[0], (*cast)[1], (*cast)[2], (*cast)[3],
                                                reduction);
    }
    require_floating(input, "binary_cross_entropy_with_logits", "input");
    if (target.shape() != input.shape()) {
        throw ValueError("binary_cross_entropy_with_logits: target of shape " +
                         to_string(target.shape()) + " must have input's shape " +
                         to_string(input.shape()));
    }
    Tensor softplus_negative;
    Tensor loss = bce_logits_elements(input, target,
                                      pos_weight.defined() ? pos_weight.detach() : Tensor(),
                                      softplus_negative);
    if (pos_weight.defined() && pos_weight.requires_grad() && is_grad_enabled()) {
        // pos_weight's gradient, t softplus(-x) per element (summed to its shape): a term
        // worth zero whose only gradient path is pos_weight.
        const Tensor term = pos_weight * (target * softplus_negative).detach();
        loss = loss + (term - term.detach());
    }
    if (weight.defined()) {
        loss = loss * weight;
    }
    return reduce(loss, reduction);
}

}  // namespace kael::nn::functional
