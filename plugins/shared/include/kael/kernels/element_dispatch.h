#pragma once
// The one switch from (op, dtypes) at run time to a typed functor, shared by every plugin, and
// the op rules, all generated from plugin_api.h's op table (KAEL_ELEMENT_OPS).
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
        case KAEL_DTYPE_BF16:
        case KAEL_DTYPE_F16:
        case KAEL_DTYPE_I16: return 2;
        case KAEL_DTYPE_I32: return 4;
        case KAEL_DTYPE_I8:
        case KAEL_DTYPE_U8: return 1;
        default: plugin::invalid("invalid dtype " + std::to_string(dtype));
    }
}

inline bool is_low_precision(kael_dtype dtype) {
    return dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
}

inline bool is_narrow_int(kael_dtype dtype) {
    return dtype == KAEL_DTYPE_I32 || dtype == KAEL_DTYPE_I16 || dtype == KAEL_DTYPE_I8 ||
           dtype == KAEL_DTYPE_U8;
}

// Calls visit(TypeTag<T>{}) with T the compute type of dtype (bool for KAEL_DTYPE_BOOL). The
// low-precision dtypes are declined (KAEL_STATUS_UNSUPPORTED): the core then runs the call in
// f32. A kernel that computes in them dispatches with with_storage_dtype.
template <typename Visit>
decltype(auto) with_dtype(kael_dtype dtype, Visit&& visit) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return visit(TypeTag<float>{});
        case KAEL_DTYPE_F64: return visit(TypeTag<double>{});
        case KAEL_DTYPE_I64: return visit(TypeTag<std::int64_t>{});
        case KAEL_DTYPE_BOOL: return visit(TypeTag<bool>{});
        case KAEL_DTYPE_BF16:
        case KAEL_DTYPE_F16:
            plugin::unsupported(std::string(plugin::dtype_name(dtype)) +
                                " is computed in float32 by the core for this kernel");
        case KAEL_DTYPE_I32:
        case KAEL_DTYPE_I16:
        case KAEL_DTYPE_I8:
        case KAEL_DTYPE_U8:
            plugin::unsupported(std::string(plugin::dtype_name(dtype)) +
                                " is computed in int64 by the core for this kernel");
        default: plugin::invalid("invalid dtype " + std::to_string(dtype));
    }
}

// with_dtype, plus int32, int16, int8 and uint8 (only fill and convert store them).
template <typename Visit>
decltype(auto) with_narrow_int_dtype(kael_dtype dtype, Visit&& visit) {
    switch (dtype) {
        case KAEL_DTYPE_I32: return visit(TypeTag<std::int32_t>{});
        case KAEL_DTYPE_I16: return visit(TypeTag<std::int16_t>{});
        case KAEL_DTYPE_I8: return visit(TypeTag<std::int8_t>{});
        case KAEL_DTYPE_U8: return visit(TypeTag<std::uint8_t>{});
        default: return with_dtype(dtype, visit);
    }
}

// with_dtype, plus BFloat16 and Half (low_precision.h) for kernels that move or convert them.
template <typename Visit>
decltype(auto) with_storage_dtype(kael_dtype dtype, Visit&& visit) {
    switch (dtype) {
        case KAEL_DTYPE_BF16: return visit(TypeTag<BFloat16>{});
        case KAEL_DTYPE_F16: return visit(TypeTag<Half>{});
        default: return with_dtype(dtype, visit);
    }
}

// The float dtypes (f32, f64, bf16, f16) through with_storage_dtype; any other is unsupported,
// "<entry> takes float dtypes only".
template <typename Visit>
void with_float_storage_dtype(const std::string& entry, kael_dtype dtype, Visit&& visit) {
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64 && dtype != KAEL_DTYPE_BF16 &&
        dtype != KAEL_DTYPE_F16) {
        plugin::unsupported(entry + " takes float dtypes only");
    }
    with_storage_dtype(dtype, [&](auto tag) {
        using S = TagType<decltype(tag)>;
        if constexpr (is_floating_v<S> || is_low_precision_v<S>) {
            visit(tag);
        }
    });
}

// with_storage_dtype when kLowPrecision, else with_dtype (for kernels whose plugins opt in).
template <bool kLowPrecision, typename Visit>
decltype(auto) with_dtype_if(kael_dtype dtype, Visit&& visit) {
    if constexpr (kLowPrecision) {
        return with_storage_dtype(dtype, visit);
    } else {
        return with_dtype(dtype, visit);
    }
}

// One row of plugin_api.h's op table, KAEL_ELEMENT_OPS, as the checks below read it.
struct ElementOpInfo {
    kael_element_op op;
    const char* name;
    int inputs;       // input operands; the layout holds one more, the output
    int input_class;  // KAEL_OP_INPUTS_*
    int writes;       // KAEL_OP_WRITES_*
    bool uses_params;
    std::uint32_t since_minor;
};

// Indexed by op: plugin_api.h checks that each row's value is its position.
#define KAEL_ELEMENT_OP_INFO(op, value, name, inputs, in, out, params, since) \
    {KAEL_OP_##op, name, inputs, KAEL_OP_INPUTS_##in, KAEL_OP_WRITES_##out, params != 0, since},
inline constexpr ElementOpInfo kElementOps[KAEL_OP_COUNT] = {
    KAEL_ELEMENT_OPS(KAEL_ELEMENT_OP_INFO)};
#undef KAEL_ELEMENT_OP_INFO
inline constexpr ElementOpInfo kUnknownElementOp = {
    -1, "unknown op", 0, KAEL_OP_INPUTS_ANY, KAEL_OP_WRITES_SAME, false, 0};

inline constexpr bool valid_element_op(kael_element_op op) {
    return op >= 0 && op < KAEL_OP_COUNT;
}

// The op's row; an invalid op's is kUnknownElementOp (check_elementwise_call refuses it).
inline constexpr const ElementOpInfo& element_op_info(kael_element_op op) {
    return valid_element_op(op) ? kElementOps[op] : kUnknownElementOp;
}

inline const char* element_op_name(kael_element_op op) {
    return element_op_info(op).name;
}

inline bool writes_bool(kael_element_op op) {
    return element_op_info(op).writes == KAEL_OP_WRITES_BOOL;
}

// Number of input operands (the layout holds one more: the output).
inline int element_input_count(kael_element_op op) {
    return element_op_info(op).inputs;
}

inline bool uses_params(kael_element_op op) {
    return element_op_info(op).uses_params;
}

// Whether an op of input class KAEL_OP_INPUTS_<input_class> takes a dtype: at compile time
// (compute type T) or at run time.
constexpr bool class_takes(int input_class, bool floating, bool boolean) {
    return input_class == KAEL_OP_INPUTS_ANY ||
           (input_class == KAEL_OP_INPUTS_NUMERIC && !boolean) ||
           (input_class == KAEL_OP_INPUTS_FLOATING && floating) ||
           (input_class == KAEL_OP_INPUTS_INTEGER && !floating && !boolean);
}
template <typename T>
constexpr bool takes_inputs(int input_class) {
    return class_takes(input_class, is_floating_v<T>, is_bool_v<T>);
}
inline bool takes_dtype(int input_class, kael_dtype dtype) {
    return class_takes(input_class, dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64,
                       dtype == KAEL_DTYPE_BOOL);
}

// Checks op, dtypes, operand count and params; throws StatusError(INVALID_ARGUMENT) on a bad call.
inline void check_elementwise_call(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                                   int operands, const kael_element_params* params) {
    if (!valid_element_op(op)) {
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
    if (params != nullptr && params->struct_size < KAEL_ELEMENT_PARAMS_SIZE_1_0) {
        plugin::invalid("kael_element_params.struct_size too small");
    }
}

namespace detail {

[[noreturn]] inline void unsupported_op(kael_element_op op, kael_dtype dtype) {
    plugin::unsupported(std::string("element op ") + element_op_name(op) +
                        " is not supported for dtype " + plugin::dtype_name(dtype));
}

// A functor's operand types, from its call operator: Out (Ins...).
template <typename Call>
struct CallTypes;
template <typename Out_, typename F, typename... Ins>
struct CallTypes<Out_ (F::*)(Ins...) const> {
    using Out = Out_;
    static constexpr int inputs = sizeof...(Ins);
    template <typename Runner>
    static void run(Runner& runner, const F& function) {
        runner.template run<Out, Ins...>(function);
    }
};

// Runs Functor<T>, op's functor over compute type T, with the operand types of its call operator;
// made from params when the op reads them. The op's row must agree with the functor.
template <kael_element_op op, template <typename> class Functor, typename T, typename Runner>
void run_functor(const kael_element_params* params, Runner& runner) {
    constexpr ElementOpInfo info = kElementOps[op];
    using F = Functor<T>;
    using Types = CallTypes<decltype(&F::operator())>;
    static_assert(Types::inputs == info.inputs, "op table: inputs differ from the functor's");
    static_assert(std::is_same_v<typename Types::Out,
                                 std::conditional_t<info.writes == KAEL_OP_WRITES_BOOL, bool, T>>,
                  "op table: the output dtype differs from the functor's");
    static_assert(
        std::is_empty_v<F> != info.uses_params,
        "op table: params differ from the functor's (only functors with params hold data)");
    if constexpr (info.uses_params) {
        Types::run(runner, F::from(*params));
    } else {
        Types::run(runner, F{});
    }
}

// Runs op's functor over compute type T if op's input class is input_class; false otherwise.
// Only that class's functors are instantiated. One switch per class: one switch of all the ops
// changed GCC's inlining and grew the cpu plugin's elementwise code by 4%.
template <int input_class, typename T, typename Runner>
bool run_class(kael_element_op op, const kael_element_params* params, Runner& runner) {
    switch (op) {
#define KAEL_ELEMENT_OP_CASE(op, value, name, inputs, in, out, params_, since)                 \
    case KAEL_OP_##op:                                                                         \
        if constexpr (KAEL_OP_INPUTS_##in == input_class) {                                    \
            run_functor<KAEL_OP_##op, ElementFunctor<KAEL_OP_##op>::template type, T>(params,  \
                                                                                      runner); \
            return true;                                                                       \
        }                                                                                      \
        return false;
        KAEL_ELEMENT_OPS(KAEL_ELEMENT_OP_CASE)
#undef KAEL_ELEMENT_OP_CASE
        default: return false;
    }
}

// Runs op's functor over compute type T; false if the op does not take T (its input class).
template <typename T, typename Runner>
bool run_op(kael_element_op op, const kael_element_params* params, Runner& runner) {
    if constexpr (takes_inputs<T>(KAEL_OP_INPUTS_FLOATING)) {
        if (run_class<KAEL_OP_INPUTS_FLOATING, T>(op, params, runner)) {
            return true;
        }
    }
    if constexpr (takes_inputs<T>(KAEL_OP_INPUTS_INTEGER)) {
        if (run_class<KAEL_OP_INPUTS_INTEGER, T>(op, params, runner)) {
            return true;
        }
    }
    if constexpr (takes_inputs<T>(KAEL_OP_INPUTS_NUMERIC)) {
        if (run_class<KAEL_OP_INPUTS_NUMERIC, T>(op, params, runner)) {
            return true;
        }
    }
    return run_class<KAEL_OP_INPUTS_ANY, T>(op, params, runner);
}

// An operand type of a float functor as a low-precision kernel stores it: float becomes L.
template <typename L, typename T>
using LowStored = std::conditional_t<std::is_same_v<T, float>, L, T>;

// Functor F (over float) on bfloat16/float16 storage L: float operands are read as L and
// widened, the result is rounded once, bool operands and results pass as they are.
template <typename L, typename F, typename Call>
struct NarrowedCall;
template <typename L, typename F, typename Out, typename... Ins>
struct NarrowedCall<L, F, Out (F::*)(Ins...) const> {
    F function;
    KAEL_HD LowStored<L, Out> operator()(LowStored<L, Ins>... ins) const {
        return convert_value<LowStored<L, Out>>(function(convert_value<Ins>(ins)...));
    }
};
template <typename L, typename F>
using Narrowed = NarrowedCall<L, F, decltype(&F::operator())>;

template <kael_element_op op, typename L, typename Runner>
void run_low_functor(const kael_element_params* params, Runner& runner) {
    using F = typename ElementFunctor<op>::template type<float>;
    using N = Narrowed<L, F>;
    if constexpr (kElementOps[op].uses_params) {
        CallTypes<decltype(&N::operator())>::run(runner, N{F::from(*params)});
    } else {
        CallTypes<decltype(&N::operator())>::run(runner, N{F{}});
    }
}

// The ops computed in bf16/f16 storage: those autocast leaves in the low dtype between products
// (activations, their gradients, arithmetic, where). The rest are declined: the core runs them
// in f32, so each plugin compiles these few (x2 dtypes) rather than every op.
#define KAEL_LOW_PRECISION_ELEMENT_OPS(X)                                                \
    X(PLUS)                                                                              \
    X(MINUS) X(MULTIPLY) X(DIVIDE) X(NEGATE) X(SQUARE) X(EXP) X(TANH) X(SIGMOID) X(RELU) \
        X(GELU_EXACT) X(GELU_TANH) X(SILU) X(RELU_BACKWARD) X(SIGMOID_BACKWARD)          \
            X(GELU_EXACT_BACKWARD) X(GELU_TANH_BACKWARD) X(SILU_BACKWARD) X(WHERE)

template <typename L, typename Runner>
bool run_low_op(kael_element_op op, const kael_element_params* params, Runner& runner) {
    switch (op) {
#define KAEL_LOW_PRECISION_CASE(name) \
    case KAEL_OP_##name: run_low_functor<KAEL_OP_##name, L>(params, runner); return true;
        KAEL_LOW_PRECISION_ELEMENT_OPS(KAEL_LOW_PRECISION_CASE)
#undef KAEL_LOW_PRECISION_CASE
        default: return false;
    }
}

template <typename Call>
struct InputsAllFloat;
template <typename Out, typename F, typename... Ins>
struct InputsAllFloat<Out (F::*)(Ins...) const> {
    static constexpr bool value = (std::is_same_v<Ins, float> && ...);
};

template <kael_element_op op>
constexpr bool inputs_share_float_dtype() {
    if constexpr (kElementOps[op].input_class == KAEL_OP_INPUTS_INTEGER) {
        return false;
    } else {
        using F = typename ElementFunctor<op>::template type<float>;
        return InputsAllFloat<decltype(&F::operator())>::value;
    }
}

}  // namespace detail

// Whether a floating op reads every input in its own dtype, as its f32 functor says (where's
// condition and masked_fill's mask are bool; integer ops: false).
inline bool inputs_share_dtype(kael_element_op op) {
    switch (op) {
#define KAEL_SHARES_DTYPE_CASE(op, value, name, inputs, in, out, params_, since) \
    case KAEL_OP_##op: return detail::inputs_share_float_dtype<KAEL_OP_##op>();
        KAEL_ELEMENT_OPS(KAEL_SHARES_DTYPE_CASE)
#undef KAEL_SHARES_DTYPE_CASE
        default: return false;
    }
}

// Validates the call (see check_elementwise_call), then runs the op's functor through runner.
// Throws StatusError: INVALID_ARGUMENT for a malformed call, UNSUPPORTED for an op whose input
// class (KAEL_OP_INPUTS_*: floating ops on i64/bool, numeric ops on bool, integer ops on all
// but i64) lacks in_dtype.
// With kLowPrecision (a plugin that sets KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE), bf16 and
// f16 run the ops of KAEL_LOW_PRECISION_ELEMENT_OPS in f32 with one rounding, and decline others.
template <bool kLowPrecision = false, typename Runner>
void dispatch_elementwise(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                          int operands, const kael_element_params* params, Runner& runner) {
    check_elementwise_call(op, out_dtype, in_dtype, operands, params);
    if constexpr (kLowPrecision) {
        if (is_low_precision(in_dtype)) {
            const bool ran = in_dtype == KAEL_DTYPE_BF16
                                 ? detail::run_low_op<BFloat16>(op, params, runner)
                                 : detail::run_low_op<Half>(op, params, runner);
            if (!ran) {
                detail::unsupported_op(op, in_dtype);
            }
            return;
        }
    }
    const bool ran = with_dtype(in_dtype, [&](auto tag) {
        return detail::run_op<TagType<decltype(tag)>>(op, params, runner);
    });
    if (!ran) {
        detail::unsupported_op(op, in_dtype);
    }
}

namespace detail {

// A convert between a narrow integer and itself or one of the four compute dtypes.
template <typename Runner>
void run_narrow_convert(kael_dtype out_dtype, kael_dtype in_dtype, Runner& runner) {
    const kael_dtype narrow = is_narrow_int(out_dtype) ? out_dtype : in_dtype;
    const kael_dtype other = narrow == out_dtype ? in_dtype : out_dtype;
    if (other != narrow && (is_narrow_int(other) || is_low_precision(other))) {
        plugin::unsupported(std::string("convert from ") + plugin::dtype_name(in_dtype) + " to " +
                            plugin::dtype_name(out_dtype) + " (the core goes through i64 or f32)");
    }
    with_narrow_int_dtype(narrow, [&](auto narrow_tag) {
        using N = TagType<decltype(narrow_tag)>;
        with_narrow_int_dtype(other, [&](auto other_tag) {
            using O = TagType<decltype(other_tag)>;
            if constexpr (std::is_same_v<N, O>) {
                runner.template run<N, N>(Identity<N>{});
            } else if (narrow == out_dtype) {
                runner.template run<N, O>(Convert<N, O>{});
            } else {
                runner.template run<O, N>(Convert<O, N>{});
            }
        });
    });
}

}  // namespace detail

// operand 0 (out_dtype) = operand 1 (in_dtype) through convert_value: all 16 pairs of the four
// compute dtypes, with kLowPrecision the 36 pairs with bfloat16 and float16, and with kNarrowInt
// the 36 pairs of int32/int16/int8/uint8 with themselves or a compute dtype (a plugin without
// declines those, and the core converts on the cpu plugin).
template <bool kLowPrecision = false, bool kNarrowInt = false, typename Runner>
void dispatch_convert(kael_dtype out_dtype, kael_dtype in_dtype, int operands, Runner& runner) {
    if (!valid_dtype(out_dtype) || !valid_dtype(in_dtype)) {
        plugin::invalid("convert: invalid dtype (out " + std::to_string(out_dtype) + ", in " +
                        std::to_string(in_dtype) + ")");
    }
    if (operands != 2) {
        plugin::invalid("convert takes 2 operands, got " + std::to_string(operands));
    }
    if constexpr (kNarrowInt) {
        if (is_narrow_int(out_dtype) || is_narrow_int(in_dtype)) {
            return detail::run_narrow_convert(out_dtype, in_dtype, runner);
        }
    }
    with_dtype_if<kLowPrecision>(out_dtype, [&](auto out_tag) {
        using Out = TagType<decltype(out_tag)>;
        with_dtype_if<kLowPrecision>(in_dtype, [&](auto in_tag) {
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
