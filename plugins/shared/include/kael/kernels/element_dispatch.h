#pragma once
// The one switch from (op, dtypes) at run time to a typed functor, shared by every plugin.
// A plugin supplies a runner with
//     template <typename Out, typename... Ins, typename F> void run(const F& function);
// which applies function(Ins...) -> Out to every element of its layout: operand 0 is Out, operand
// k is Ins[k-1]. Plugins differ only in how their runner walks the layout.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_api.h"

namespace kael::kernels {

template <typename T>
struct TypeTag {
    using type = T;
};
// The compute type a with_dtype visitor received: TagType<decltype(tag)>.
template <typename Tag>
using TagType = typename std::remove_cvref_t<Tag>::type;

inline bool valid_dtype(kael_dtype dtype) {
    return dtype >= 0 && dtype < KAEL_DTYPE_COUNT;
}

inline std::int64_t dtype_size(kael_dtype dtype) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return 4;
        case KAEL_DTYPE_F64:
        case KAEL_DTYPE_I64: return 8;
        case KAEL_DTYPE_BOOL: return 1;
        default: plugin::invalid("invalid dtype " + std::to_string(dtype));
    }
}

// Calls visit(TypeTag<T>{}) with T the compute type of dtype (bool for KAEL_DTYPE_BOOL).
template <typename Visit>
decltype(auto) with_dtype(kael_dtype dtype, Visit&& visit) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return visit(TypeTag<float>{});
        case KAEL_DTYPE_F64: return visit(TypeTag<double>{});
        case KAEL_DTYPE_I64: return visit(TypeTag<std::int64_t>{});
        case KAEL_DTYPE_BOOL: return visit(TypeTag<bool>{});
        default: plugin::invalid("invalid dtype " + std::to_string(dtype));
    }
}

inline const char* element_op_name(kael_element_op op) {
    static constexpr const char* kNames[KAEL_OP_COUNT] = {
        "identity",      "negate",      "abs",         "sign",          "exp",
        "log",           "sqrt",        "rsqrt",       "sin",           "cos",
        "tanh",          "sigmoid",     "relu",        "gelu_exact",    "gelu_tanh",
        "square",        "reciprocal",  "logical_not", "plus",          "minus",
        "multiply",      "divide",      "power",       "maximum",       "minimum",
        "equal",         "not_equal",   "less",        "less_equal",    "greater",
        "greater_equal", "logical_and", "logical_or",  "relu_backward", "sigmoid_backward",
        "where",         "clamp",       "masked_fill", "gelu_exact_backward",
        "gelu_tanh_backward"};
    return op >= 0 && op < KAEL_OP_COUNT ? kNames[op] : "unknown op";
}

inline bool writes_bool(kael_element_op op) {
    return op == KAEL_OP_LOGICAL_NOT || (op >= KAEL_OP_EQUAL && op <= KAEL_OP_LOGICAL_OR);
}

// Number of input operands (the layout holds one more: the output).
inline int element_input_count(kael_element_op op) {
    if (op == KAEL_OP_WHERE) {
        return 3;
    }
    if (op == KAEL_OP_CLAMP || op <= KAEL_OP_LOGICAL_NOT) {
        return 1;
    }
    return 2;
}

inline bool uses_params(kael_element_op op) {
    return op == KAEL_OP_CLAMP || op == KAEL_OP_MASKED_FILL;
}

// Checks op, dtypes, operand count and params; throws StatusError(INVALID_ARGUMENT) on a bad call.
inline void check_elementwise_call(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                                   int operands, const kael_element_params* params) {
    if (op < 0 || op >= KAEL_OP_COUNT) {
        plugin::invalid("invalid element op " + std::to_string(op));
    }
    if (!valid_dtype(out_dtype) || !valid_dtype(in_dtype)) {
        plugin::invalid(std::string(element_op_name(op)) + ": invalid dtype (out " +
                        std::to_string(out_dtype) + ", in " + std::to_string(in_dtype) + ")");
    }
    const kael_dtype expected = writes_bool(op) ? KAEL_DTYPE_BOOL : in_dtype;
    if (out_dtype != expected) {
        plugin::invalid(std::string(element_op_name(op)) + " on " + plugin::dtype_name(in_dtype) +
                        " writes " + plugin::dtype_name(expected) + ", not " +
                        plugin::dtype_name(out_dtype));
    }
    if (operands != 1 + element_input_count(op)) {
        plugin::invalid(std::string(element_op_name(op)) + " takes " +
                        std::to_string(1 + element_input_count(op)) + " operands, got " +
                        std::to_string(operands));
    }
    if (uses_params(op) && params == nullptr) {
        plugin::invalid(std::string(element_op_name(op)) + " needs params");
    }
    if (params != nullptr && params->struct_size < sizeof(kael_element_params)) {
        plugin::invalid("kael_element_params.struct_size too small");
    }
}

namespace detail {

[[noreturn]] inline void unsupported_op(kael_element_op op, kael_dtype dtype) {
    plugin::unsupported(std::string("element op ") + element_op_name(op) +
                        " is not supported for dtype " + plugin::dtype_name(dtype));
}

// Floating-only functions: transcendental and their derivatives.
template <typename T, typename Runner>
bool run_floating(kael_element_op op, Runner& runner) {
    switch (op) {
        case KAEL_OP_EXP: runner.template run<T, T>(Exp<T>{}); return true;
        case KAEL_OP_LOG: runner.template run<T, T>(Log<T>{}); return true;
        case KAEL_OP_SQRT: runner.template run<T, T>(Sqrt<T>{}); return true;
        case KAEL_OP_RSQRT: runner.template run<T, T>(Rsqrt<T>{}); return true;
        case KAEL_OP_SIN: runner.template run<T, T>(Sin<T>{}); return true;
        case KAEL_OP_COS: runner.template run<T, T>(Cos<T>{}); return true;
        case KAEL_OP_TANH: runner.template run<T, T>(Tanh<T>{}); return true;
        case KAEL_OP_SIGMOID: runner.template run<T, T>(Sigmoid<T>{}); return true;
        case KAEL_OP_GELU_EXACT: runner.template run<T, T>(GeluExact<T>{}); return true;
        case KAEL_OP_GELU_TANH: runner.template run<T, T>(GeluTanh<T>{}); return true;
        case KAEL_OP_RECIPROCAL: runner.template run<T, T>(Reciprocal<T>{}); return true;
        case KAEL_OP_SIGMOID_BACKWARD:
            runner.template run<T, T, T>(SigmoidBackward<T>{});
            return true;
        case KAEL_OP_GELU_EXACT_BACKWARD:
            runner.template run<T, T, T>(GeluExactBackward<T>{});
            return true;
        case KAEL_OP_GELU_TANH_BACKWARD:
            runner.template run<T, T, T>(GeluTanhBackward<T>{});
            return true;
        default: return false;
    }
}

// Arithmetic defined on numbers but not on bool.
template <typename T, typename Runner>
bool run_numeric(kael_element_op op, Runner& runner) {
    switch (op) {
        case KAEL_OP_NEGATE: runner.template run<T, T>(Negate<T>{}); return true;
        case KAEL_OP_MINUS: runner.template run<T, T, T>(Minus<T>{}); return true;
        case KAEL_OP_DIVIDE: runner.template run<T, T, T>(Divide<T>{}); return true;
        case KAEL_OP_POWER: runner.template run<T, T, T>(Power<T>{}); return true;
        case KAEL_OP_RELU_BACKWARD: runner.template run<T, T, T>(ReluBackward<T>{}); return true;
        default: return false;
    }
}

// Functions defined on all four dtypes.
template <typename T, typename Runner>
bool run_any(kael_element_op op, const kael_element_params* params, Runner& runner) {
    switch (op) {
        case KAEL_OP_IDENTITY: runner.template run<T, T>(Identity<T>{}); return true;
        case KAEL_OP_ABS: runner.template run<T, T>(Abs<T>{}); return true;
        case KAEL_OP_SIGN: runner.template run<T, T>(Sign<T>{}); return true;
        case KAEL_OP_RELU: runner.template run<T, T>(Relu<T>{}); return true;
        case KAEL_OP_SQUARE: runner.template run<T, T>(Square<T>{}); return true;
        case KAEL_OP_LOGICAL_NOT: runner.template run<bool, T>(LogicalNot<T>{}); return true;
        case KAEL_OP_PLUS: runner.template run<T, T, T>(Plus<T>{}); return true;
        case KAEL_OP_MULTIPLY: runner.template run<T, T, T>(Multiply<T>{}); return true;
        case KAEL_OP_MAXIMUM: runner.template run<T, T, T>(Maximum<T>{}); return true;
        case KAEL_OP_MINIMUM: runner.template run<T, T, T>(Minimum<T>{}); return true;
        case KAEL_OP_EQUAL: runner.template run<bool, T, T>(Equal<T>{}); return true;
        case KAEL_OP_NOT_EQUAL: runner.template run<bool, T, T>(NotEqual<T>{}); return true;
        case KAEL_OP_LESS: runner.template run<bool, T, T>(Less<T>{}); return true;
        case KAEL_OP_LESS_EQUAL: runner.template run<bool, T, T>(LessEqual<T>{}); return true;
        case KAEL_OP_GREATER: runner.template run<bool, T, T>(Greater<T>{}); return true;
        case KAEL_OP_GREATER_EQUAL: runner.template run<bool, T, T>(GreaterEqual<T>{}); return true;
        case KAEL_OP_LOGICAL_AND: runner.template run<bool, T, T>(LogicalAnd<T>{}); return true;
        case KAEL_OP_LOGICAL_OR: runner.template run<bool, T, T>(LogicalOr<T>{}); return true;
        case KAEL_OP_WHERE: runner.template run<T, bool, T, T>(Where<T>{}); return true;
        case KAEL_OP_CLAMP:
            runner.template run<T, T>(
                Clamp<T>{element_param<T>(*params, 0), element_param<T>(*params, 1)});
            return true;
        case KAEL_OP_MASKED_FILL:
            runner.template run<T, T, bool>(MaskedFill<T>{element_param<T>(*params, 0)});
            return true;
        default: return false;
    }
}

}  // namespace detail

// Validates the call (see check_elementwise_call), then runs the op's functor through runner.
// Throws StatusError: INVALID_ARGUMENT for a malformed call, UNSUPPORTED for an op the dtype
// lacks (transcendental functions on i64/bool; negate, minus, divide, power, relu_backward on
// bool).
template <typename Runner>
void dispatch_elementwise(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                          int operands, const kael_element_params* params, Runner& runner) {
    check_elementwise_call(op, out_dtype, in_dtype, operands, params);
    const bool ran = with_dtype(in_dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        if constexpr (is_floating_v<T>) {
            if (detail::run_floating<T>(op, runner)) {
                return true;
            }
        }
        if constexpr (!is_bool_v<T>) {
            if (detail::run_numeric<T>(op, runner)) {
                return true;
            }
        }
        return detail::run_any<T>(op, params, runner);
    });
    if (!ran) {
        detail::unsupported_op(op, in_dtype);
    }
}

// operand 0 (out_dtype) = operand 1 (in_dtype) through saturating_cast; all 16 pairs.
template <typename Runner>
void dispatch_convert(kael_dtype out_dtype, kael_dtype in_dtype, int operands, Runner& runner) {
    if (!valid_dtype(out_dtype) || !valid_dtype(in_dtype)) {
        plugin::invalid("convert: invalid dtype (out " + std::to_string(out_dtype) + ", in " +
                        std::to_string(in_dtype) + ")");
    }
    if (operands != 2) {
        plugin::invalid("convert takes 2 operands, got " + std::to_string(operands));
    }
    with_dtype(out_dtype, [&](auto out_tag) {
        using Out = TagType<decltype(out_tag)>;
        with_dtype(in_dtype, [&](auto in_tag) {
            using In = TagType<decltype(in_tag)>;
            if constexpr (std::is_same_v<Out, In>) {
                runner.template run<Out, In>(Identity<Out>{});
            } else {
                runner.template run<Out, In>(Convert<Out, In>{});
            }
        });
    });
}

}  // namespace kael::kernels
