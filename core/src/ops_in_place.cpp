// In-place ops: the result is computed, checked against the target's dtype, then written through
// write_into, so every in-place op shares copy_'s overlap, broadcast and autograd rules.
#include <array>
#include <optional>

#include "autograd/record.h"
#include "in_place.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "kernel_calls.h"
#include "memory_overlap.h"

namespace kael {

namespace detail {

Tensor& write_into(Tensor& target, const Tensor& value, const char* op) {
    if (broadcast_shapes(value.shape(), target.shape(), op) != target.shape()) {
        throw ValueError(std::string(op) + ": value of shape " + to_string(value.shape()) +
                         " cannot be broadcast to the target's shape " +
                         to_string(target.shape()));
    }
    check_same_device({target, value}, op);
    check_no_internal_overlap(target, op);
    autograd::check_in_place(target, op);
    convert(target, value);
    // The old value is overwritten; the value's gradient is summed back to its shape.
    autograd::record_in_place(target, {value}, "CopyBackward", [](const Tensor& grad) {
        return std::vector<Tensor>{Tensor(), grad};
    });
    return target;
}

// PyTorch's rule for in-place results: no float into an integer tensor, nothing but bool into
// a bool one.
void check_castable(DType result, const Tensor& target, const char* op) {
    const bool allowed = result == target.dtype() ||
                         (is_floating(target.dtype()) && result != DType::Bool) ||
                         (target.dtype() == DType::I64 && !is_floating(result));
    if (!allowed) {
        throw TypeError(std::string(op) + ": result type " + to_string(result) +
                        " can't be cast to the desired output type " +
                        to_string(target.dtype()));
    }
}

}  // namespace detail

namespace {

using detail::check_castable;

// Whether other, read elementwise beside target, broadcasts to target's shape.
bool broadcasts_to(const Tensor& other, const Tensor& target) {
    const Shape& from = other.shape();
    const Shape& to = target.shape();
    if (from.size() > to.size()) {
        return false;
    }
    for (std::size_t i = 0; i < from.size(); ++i) {
        const std::int64_t size = from[from.size() - 1 - i];
        if (size != 1 && size != to[to.size() - 1 - i]) {
            return false;
        }
    }
    return true;
}

// target = target op other by one kernel that writes target: no temporary, no second pass (an
// optimizer's or an accumulator's add_ was two kernels and an allocation). Only when nothing is
// recorded and other has target's float or int64 dtype and device and broadcasts to its shape;
// the kernel call copies other away first where it partly overlaps target.
bool computed_in_place(Tensor& target, const Tensor& other, kael_element_op op) {
    const DType dtype = target.dtype();
    if ((is_grad_enabled() && (target.requires_grad() || other.requires_grad())) ||
        other.dtype() != dtype || other.device() != target.device() ||
        !(is_floating(dtype) || (dtype == DType::I64 && op != KAEL_OP_DIVIDE)) ||
        !broadcasts_to(other, target)) {
        return false;
    }
    const std::array<Tensor, 2> inputs{target, other};
    detail::elementwise(op, target, inputs, dtype, detail::no_params());
    return true;
}

template <typename Op>
Tensor& in_place(Tensor& target, const Tensor& other, const char* op, Op compute,
                 std::optional<kael_element_op> element_op = std::nullopt) {
    detail::check_no_internal_overlap(target, op);
    if (element_op && computed_in_place(target, other, *element_op)) {
        return target;
    }
    // When other's gradient reads the target's old value (a *= w), compute from a copy of it,
    // as PyTorch saves original_self: the write below would otherwise invalidate what was saved.
    const bool saves_target = is_grad_enabled() && other.requires_grad();
    // other may be the target itself (a.mul_(a)): its saved copy must not see the write either.
    const bool aliased = saves_target && other.impl().storage == target.impl().storage;
    const Tensor result =
        compute(saves_target ? target.clone() : target, aliased ? other.clone() : other);
    check_castable(result.dtype(), target, op);
    return detail::write_into(target, result, op);
}

}  // namespace

Tensor& detail::binary_in_place(Tensor& target, const Tensor& other, const char* op,
                                Tensor (*compute)(const Tensor&, const Tensor&)) {
    return in_place(target, other, op, compute);
}

Tensor& detail::unary_in_place(Tensor& target, const char* op, Tensor (*compute)(const Tensor&)) {
    detail::check_no_internal_overlap(target, op);
    // From a copy when autograd records: the backward may save its input (log1p_, sigmoid_),
    // which the write below would otherwise invalidate (PyTorch saves original_self).
    const bool records = is_grad_enabled() && target.requires_grad();
    const Tensor result = compute(records ? target.clone() : target);
    check_castable(result.dtype(), target, op);
    return detail::write_into(target, result, op);
}

Tensor& add_(Tensor& a, const Tensor& b, const char* op) {
    return in_place(a, b, op, [](const Tensor& x, const Tensor& y) { return add(x, y); },
                    KAEL_OP_PLUS);
}
Tensor& sub_(Tensor& a, const Tensor& b, const char* op) {
    return in_place(a, b, op, [](const Tensor& x, const Tensor& y) { return sub(x, y); },
                    KAEL_OP_MINUS);
}
Tensor& mul_(Tensor& a, const Tensor& b, const char* op) {
    return in_place(a, b, op, [](const Tensor& x, const Tensor& y) { return mul(x, y); },
                    KAEL_OP_MULTIPLY);
}
Tensor& div_(Tensor& a, const Tensor& b, const char* op) {
    // The result dtype is known before computing: refuse integer targets without the work.
    check_castable(is_floating(result_type(a, b)) ? result_type(a, b) : DType::F32, a, op);
    return in_place(a, b, op, [](const Tensor& x, const Tensor& y) { return div(x, y); },
                    KAEL_OP_DIVIDE);
}
Tensor& masked_fill_(Tensor& a, const Tensor& mask, const Tensor& value) {
    if (value.numel() != 1) {
        throw ValueError("masked_fill_: expected a value with one element, got shape " +
                         to_string(value.shape()));
    }
    if (mask.dtype() != DType::Bool) {
        throw TypeError("masked_fill_: mask must be bool, got " + to_string(mask.dtype()));
    }
    detail::check_no_internal_overlap(a, "masked_fill_");
    if (broadcast_shapes(a.shape(), mask.shape(), "masked_fill_") != a.shape()) {
        throw ValueError("masked_fill_: mask of shape " + to_string(mask.shape()) +
                         " cannot be broadcast to the target's shape " + to_string(a.shape()));
    }
    const Tensor filled = where(mask, value.reshape({}).to(a.dtype()), a);
    return detail::write_into(a, filled, "masked_fill_");
}

}  // namespace kael
