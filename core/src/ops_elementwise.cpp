// Elementwise front-end: promotion, broadcasting and the scalar rules, then one plugin call.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "elementwise_run.h"
#include "in_place.h"
#include "kael/device_graph.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "kernel_calls.h"
#include "reduce_dims.h"
#include "tensor_internal.h"

namespace kael {

namespace {

using detail::no_params;

DType floating(DType dtype) { return is_floating(dtype) ? dtype : DType::F32; }

// out by value and moved through: no reference count traffic on the common, unrecorded path.
Tensor differentiable(const autograd::Recording& recording, kael_element_op op,
                      std::span<const Tensor> inputs, Tensor out,
                      const kael_element_params& params) {
    if (!recording.active()) {
        return out;
    }
    auto backward = autograd::elementwise_backward(
        op, std::vector<Tensor>(inputs.begin(), inputs.end()), out, params);
    return recording.finish(std::move(out), autograd::elementwise_name(op), std::move(backward));
}

// The result of an op whose first input of the result's full shape is a transposed or permuted
// dense tensor, laid out in that input's memory order (PyTorch's preserve_format; TensorIterator
// likewise lets the first operand that orders two dims decide): it and the result then walk
// memory in order, one contiguous run the plugins' vector loops take, and a broadcast operand
// repeats along those runs. A contiguous result read such inputs a stride apart an element
// (x - x.amax((0, 2), keepdim=True) of a transpose at 0.13 of PyTorch's speed on the cpu).
std::optional<Tensor> empty_in_input_order(std::span<const Tensor> inputs, const Shape& shape,
                                           DType dtype) {
    const Tensor* leader = nullptr;
    for (const Tensor& input : inputs) {
        if (input.shape() == shape) {
            leader = &input;
            break;
        }
    }
    if (leader == nullptr || leader->is_contiguous() || !detail::reads_in_place(*leader)) {
        return std::nullopt;
    }
    const Tensor& input = *leader;
    Shape order(input.shape().size());
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
        return input.strides()[static_cast<std::size_t>(x)] >
               input.strides()[static_cast<std::size_t>(y)];
    });
    Shape stored(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        stored[i] = input.shape()[static_cast<std::size_t>(order[i])];
    }
    // The stored tensor itself with its dims put back in the input's order, not a permute()
    // view of it: an in-place op on a view (y = x.t() * 1; y.index_add_(...)) rewrites the
    // hidden base's history, and the gradient would stop there.
    Tensor out = empty(stored, dtype, input.device());
    TensorImpl& impl = out.impl();
    const Shape packed = impl.strides;
    impl.shape = input.shape();
    for (std::size_t i = 0; i < order.size(); ++i) {
        impl.strides[static_cast<std::size_t>(order[i])] = packed[i];
    }
    return out;
}

// inputs as a span: binary ops pass an array, no vector per call (host overhead).
Tensor run(kael_element_op op, const char* name, DType out_dtype, DType compute,
           std::span<const Tensor> inputs, const kael_element_params& params = no_params(),
           std::size_t converted_from = 0) {
    const autograd::Recording recording(inputs);
    detail::check_same_device(inputs, name);
    // Shapes are copied and inputs converted only where they differ (per-op host overhead).
    const Shape* shape = &inputs.front().shape();
    Shape broadcast;
    bool convert = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (i > 0 && inputs[i].shape() != *shape) {
            broadcast = broadcast_shapes(*shape, inputs[i].shape(), name);
            shape = &broadcast;
        }
        convert = convert || (i >= converted_from && inputs[i].dtype() != compute);
    }
    std::optional<Tensor> in_order = empty_in_input_order(inputs, *shape, out_dtype);
    Tensor out = in_order ? std::move(*in_order) : empty(*shape, out_dtype, inputs.front().device());
    if (!convert) {
        detail::elementwise(op, out, inputs, compute, params);
        return differentiable(recording, op, inputs, std::move(out), params);
    }
    std::vector<Tensor> operands;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        operands.push_back(i >= converted_from ? inputs[i].to(compute) : inputs[i]);
    }
    detail::elementwise(op, out, operands, compute, params);
    return differentiable(recording, op, inputs, std::move(out), params);
}

Tensor run(kael_element_op op, const char* name, DType out_dtype, DType compute,
           const std::vector<Tensor>& inputs, const kael_element_params& params = no_params(),
           std::size_t converted_from = 0) {
    return run(op, name, out_dtype, compute, std::span<const Tensor>(inputs), params,
               converted_from);
}

Tensor unary_float(kael_element_op op, const char* name, const Tensor& a) {
    const DType dtype = floating(a.dtype());
    return run(op, name, dtype, dtype, {a});
}

Tensor unary_numeric(kael_element_op op, const char* name, const Tensor& a) {
    const DType dtype = a.dtype() == DType::Bool ? DType::I64 : a.dtype();
    const std::array<Tensor, 1> inputs{a};
    return run(op, name, dtype, dtype, inputs);
}

Tensor binary(kael_element_op op, const char* name, const Tensor& a, const Tensor& b) {
    const DType dtype = result_type(a, b);
    const std::array<Tensor, 2> inputs{a, b};
    return run(op, name, dtype, dtype, inputs);
}

Tensor compare(kael_element_op op, const char* name, const Tensor& a, const Tensor& b) {
    const std::array<Tensor, 2> inputs{a, b};
    return run(op, name, DType::Bool, result_type(a, b), inputs);
}

// A scalar operand lives on the tensor's device and keeps the tensor's dtype when it can.
Tensor scalar_like(const Tensor& tensor, double value) {
    DType dtype = tensor.dtype();
    if (!is_floating(dtype) && (std::trunc(value) != value || dtype == DType::Bool)) {
        dtype = std::trunc(value) == value && dtype == DType::Bool ? DType::I64 : DType::F32;
    }
    return cached_scalar(value, dtype, tensor.device());
}

}  // namespace

Tensor detail::run_elementwise(kael_element_op op, const char* name, DType out_dtype,
                               DType compute, std::span<const Tensor> inputs,
                               const kael_element_params& params, std::size_t converted_from) {
    return run(op, name, out_dtype, compute, inputs, params, converted_from);
}

Tensor detail::scalar_operand(const Tensor& tensor, double value) {
    return scalar_like(tensor, value);
}

DType result_type(const Tensor& a, const Tensor& b) {
    if ((a.dim() == 0) == (b.dim() == 0)) {
        return promote(a.dtype(), b.dtype());
    }
    const auto category = [](DType dtype) {
        return is_floating(dtype) ? 2 : dtype == DType::Bool ? 0 : 1;
    };
    const DType dimensioned = a.dim() == 0 ? b.dtype() : a.dtype();
    const DType zero_dim = a.dim() == 0 ? a.dtype() : b.dtype();
    return category(zero_dim) > category(dimensioned) ? zero_dim : dimensioned;
}

// Sixteen entries per thread, replaced in turn (kael/ops_elementwise.h says why).
Tensor cached_scalar(double value, DType dtype, const Device& device) {
    if (is_narrow_int(dtype)) {  // an operand wraps into the tensor's dtype, as in PyTorch
        value = static_cast<double>(wrap_integer(static_cast<std::int64_t>(value), dtype));
    }
    struct Entry {
        std::uint64_t bits = 0;
        DType dtype = DType::F32;
        Device device;
        Tensor tensor;
    };
    if (recording_device_graph()) {
        // A cached tensor made before the recording may be freed while the graph still reads
        // it, and one made inside holds its value only once the graph runs.
        const NoGradGuard no_grad;
        return scalar_tensor(value, dtype, device);
    }
    constexpr std::size_t kEntries = 16;
    thread_local std::array<Entry, kEntries> entries;
    thread_local std::size_t next = 0;
    const auto bits = std::bit_cast<std::uint64_t>(value);
    for (const Entry& entry : entries) {
        if (entry.tensor.defined() && entry.bits == bits && entry.dtype == dtype &&
            entry.device == device) {
            return entry.tensor;
        }
    }
    const NoGradGuard no_grad;
    Tensor tensor = scalar_tensor(value, dtype, device);
    entries[next] = {bits, dtype, device, tensor};
    next = (next + 1) % kEntries;
    return tensor;
}

namespace {

// The rules of KAEL_ARITHMETIC_FUNCTIONS (kael/op_rows.h).
enum class ArithmeticRule { kPromote, kNotBool, kFloating, kPower };

Tensor arithmetic(kael_element_op op, const char* name, ArithmeticRule rule, const Tensor& a,
                  const Tensor& b) {
    switch (rule) {
        case ArithmeticRule::kPromote: break;
        case ArithmeticRule::kNotBool:
            if (a.dtype() == DType::Bool && b.dtype() == DType::Bool) {
                throw TypeError(std::string(name) +
                                ": subtraction of two bool tensors is not supported; use "
                                "logical_xor or convert to i64");
            }
            break;
        case ArithmeticRule::kFloating: {
            const DType dtype = floating(result_type(a, b));
            return run(op, name, dtype, dtype, {a, b});
        }
        case ArithmeticRule::kPower: {
            const DType dtype = result_type(a, b);
            if (dtype == DType::Bool) {
                throw TypeError(std::string(name) + ": not supported for bool tensors");
            }
            // As PyTorch: an integer to a negative integer power has no integer result (0 ** -1).
            if (!is_floating(dtype) && b.numel() > 0 && !is_floating(b.dtype()) &&
                min(b).item<std::int64_t>() < 0) {
                throw ValueError(std::string(name) +
                                 ": integers to negative integer powers are not allowed");
            }
            break;
        }
    }
    return binary(op, name, a, b);
}

}  // namespace

// The arithmetic rows of kael/op_rows.h.
#define KAEL_DEFINE_ARITHMETIC(name, OP, RULE)                              \
    Tensor name(const Tensor& a, const Tensor& b) {                         \
        return arithmetic(KAEL_OP_##OP, #name, ArithmeticRule::RULE, a, b); \
    }
KAEL_ARITHMETIC_FUNCTIONS(KAEL_DEFINE_ARITHMETIC)
#undef KAEL_DEFINE_ARITHMETIC
// The comparison rows of kael/op_rows.h.
#define KAEL_DEFINE_COMPARISON(name, OP, OPERATOR) \
    Tensor name(const Tensor& a, const Tensor& b) { return compare(KAEL_OP_##OP, #name, a, b); }
KAEL_COMPARISON_FUNCTIONS(KAEL_DEFINE_COMPARISON)
#undef KAEL_DEFINE_COMPARISON
Tensor logical_not(const Tensor& a) {
    return run(KAEL_OP_LOGICAL_NOT, "logical_not", DType::Bool, a.dtype(), {a});
}

Tensor neg(const Tensor& a) {
    if (a.dtype() == DType::Bool) {
        throw TypeError("neg: negation of a bool tensor is not supported; use logical_not");
    }
    return run(KAEL_OP_NEGATE, "neg", a.dtype(), a.dtype(), {a});
}
// The numeric rows of kael/op_rows.h, and their in-place forms.
#define KAEL_DEFINE_NUMERIC_UNARY(name, OP)                                              \
    Tensor name(const Tensor& a) { return unary_numeric(KAEL_OP_##OP, #name, a); }        \
    Tensor& name##_(Tensor& a) { return detail::unary_in_place(a, #name "_", name); }
KAEL_NUMERIC_UNARY_FUNCTIONS(KAEL_DEFINE_NUMERIC_UNARY)
#undef KAEL_DEFINE_NUMERIC_UNARY
Tensor gelu(const Tensor& a, bool tanh_approximation) {
    return unary_float(tanh_approximation ? KAEL_OP_GELU_TANH : KAEL_OP_GELU_EXACT, "gelu", a);
}

Tensor relu_backward(const Tensor& input, const Tensor& grad) {
    const DType dtype = floating(promote(input.dtype(), grad.dtype()));
    return run(KAEL_OP_RELU_BACKWARD, "relu_backward", dtype, dtype, {input, grad});
}
Tensor sigmoid_backward(const Tensor& input, const Tensor& grad) {
    const DType dtype = floating(promote(input.dtype(), grad.dtype()));
    return run(KAEL_OP_SIGMOID_BACKWARD, "sigmoid_backward", dtype, dtype, {input, grad});
}
Tensor gelu_backward(const Tensor& input, const Tensor& grad, bool tanh_approximation) {
    const DType dtype = floating(promote(input.dtype(), grad.dtype()));
    return run(tanh_approximation ? KAEL_OP_GELU_TANH_BACKWARD : KAEL_OP_GELU_EXACT_BACKWARD,
               "gelu_backward", dtype, dtype, {input, grad});
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
    if (condition.dtype() != DType::Bool) {
        throw TypeError("where: condition must be bool, got " + to_string(condition.dtype()));
    }
    const DType dtype = result_type(a, b);
    return run(KAEL_OP_WHERE, "where", dtype, dtype, {condition, a, b}, no_params(), 1);
}

Tensor clamp(const Tensor& a, double low, double high) {
    if (low > high) {
        throw ValueError("clamp: low " + std::to_string(low) + " is greater than high " +
                         std::to_string(high));
    }
    if (!is_floating(a.dtype())) {
        return clamp_int(a, static_cast<std::int64_t>(std::ceil(low)),
                         static_cast<std::int64_t>(std::floor(high)));
    }
    return run(KAEL_OP_CLAMP, "clamp", a.dtype(), a.dtype(), {a}, detail::real_params(low, high));
}

Tensor clamp_int(const Tensor& a, std::int64_t low, std::int64_t high) {
    if (low > high) {
        throw ValueError("clamp: low " + std::to_string(low) + " is greater than high " +
                         std::to_string(high));
    }
    if (is_floating(a.dtype())) {
        return clamp(a, static_cast<double>(low), static_cast<double>(high));
    }
    const DType dtype = a.dtype() == DType::Bool ? DType::I64 : a.dtype();
    return run(KAEL_OP_CLAMP, "clamp", dtype, dtype, {a}, detail::integer_params(low, high));
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, double value) {
    if (!is_floating(a.dtype())) {
        return masked_fill_int(a, mask, detail::integer_of(value, a.dtype(), "masked_fill"));
    }
    if (mask.dtype() != DType::Bool) {
        throw TypeError("masked_fill: mask must be bool, got " + to_string(mask.dtype()));
    }
    const std::array<Tensor, 2> inputs{a, mask};
    const autograd::Recording recording(inputs);
    detail::check_same_device(inputs, "masked_fill");
    Tensor out = empty(broadcast_shapes(a.shape(), mask.shape(), "masked_fill"), a.dtype(),
                       a.device());
    const kael_element_params params = detail::real_params(value);
    detail::elementwise(KAEL_OP_MASKED_FILL, out, inputs, a.dtype(), params);
    return differentiable(recording, KAEL_OP_MASKED_FILL, inputs, std::move(out), params);
}

Tensor masked_fill_int(const Tensor& a, const Tensor& mask, std::int64_t value) {
    if (is_floating(a.dtype())) {
        return masked_fill(a, mask, static_cast<double>(value));
    }
    if (mask.dtype() != DType::Bool) {
        throw TypeError("masked_fill: mask must be bool, got " + to_string(mask.dtype()));
    }
    detail::check_same_device({a, mask}, "masked_fill");
    Tensor out = empty(broadcast_shapes(a.shape(), mask.shape(), "masked_fill"), a.dtype(),
                       a.device());
    detail::elementwise(KAEL_OP_MASKED_FILL, out, {a, mask}, a.dtype(),
                        detail::integer_params(a.dtype() == DType::Bool ? value != 0 : value));
    return out;
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor operator-(const Tensor& a, double b) { return sub(a, scalar_like(a, b)); }
Tensor operator*(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }
Tensor operator/(const Tensor& a, double b) { return div(a, scalar_like(a, b)); }
Tensor operator+(double a, const Tensor& b) { return add(scalar_like(b, a), b); }
Tensor operator*(double a, const Tensor& b) { return mul(scalar_like(b, a), b); }

}  // namespace kael
