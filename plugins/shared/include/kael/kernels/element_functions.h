#pragma once
// One definition of every element function, shared by the cpu, emulated and cuda plugins so they
// cannot disagree on NaN propagation, integer overflow or rounding. One functor per
// row of plugin_api.h's KAEL_ELEMENT_OPS (named to it by KAEL_ELEMENT_FUNCTOR), templated on the
// compute type (bool for KAEL_DTYPE_BOOL); its call operator's parameters and result are the
// op's operand types. Convert serves the convert slot. Valid in CUDA device code.
#include <cstdint>
#include <type_traits>

#include "kael/kernels/element_functions_numeric.h"
#include "kael/kernels/element_math.h"
#include "kael/kernels/low_precision.h"

namespace kael::kernels {

// ---- Unary functors --------------------------------------------------------------------------
template <typename T>
struct Identity {
    KAEL_HD T operator()(T x) const { return x; }
};
KAEL_ELEMENT_FUNCTOR(IDENTITY, Identity);
template <typename Out, typename In>
struct Convert {
    KAEL_HD Out operator()(In x) const { return convert_value<Out>(x); }
};
template <typename T>
struct Negate {
    KAEL_HD T operator()(T x) const {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            return wrapping_negate(x);
        } else {
            return -x;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(NEGATE, Negate);
template <typename T>
struct Abs {
    KAEL_HD T operator()(T x) const {
        if constexpr (is_floating_v<T>) {
            return math::fabs(x);
        } else if constexpr (is_bool_v<T>) {
            return x;
        } else {
            return x < 0 ? wrapping_negate(x) : x;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(ABS, Abs);
template <typename T>
struct Sign {
    KAEL_HD T operator()(T x) const {
        if constexpr (is_bool_v<T>) {
            return x;
        } else {
            if (is_nan(x)) {
                return x;
            }
            return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
        }
    }
};
KAEL_ELEMENT_FUNCTOR(SIGN, Sign);
template <typename T>
struct Exp {
    KAEL_HD T operator()(T x) const { return math::exp(x); }
};
KAEL_ELEMENT_FUNCTOR(EXP, Exp);
template <typename T>
struct Log {
    KAEL_HD T operator()(T x) const { return math::log(x); }
};
KAEL_ELEMENT_FUNCTOR(LOG, Log);
template <typename T>
struct Sqrt {
    KAEL_HD T operator()(T x) const { return math::sqrt(x); }
};
KAEL_ELEMENT_FUNCTOR(SQRT, Sqrt);
template <typename T>
struct Rsqrt {
    KAEL_HD T operator()(T x) const { return T(1) / math::sqrt(x); }
};
KAEL_ELEMENT_FUNCTOR(RSQRT, Rsqrt);
template <typename T>
struct Sin {
    KAEL_HD T operator()(T x) const { return math::sin(x); }
};
KAEL_ELEMENT_FUNCTOR(SIN, Sin);
template <typename T>
struct Cos {
    KAEL_HD T operator()(T x) const { return math::cos(x); }
};
KAEL_ELEMENT_FUNCTOR(COS, Cos);
template <typename T>
struct Tanh {
    KAEL_HD T operator()(T x) const { return math::tanh(x); }
};
KAEL_ELEMENT_FUNCTOR(TANH, Tanh);
template <typename T>
struct Sigmoid {
    KAEL_HD T operator()(T x) const { return stable_sigmoid(x); }
};
KAEL_ELEMENT_FUNCTOR(SIGMOID, Sigmoid);
template <typename T>
struct Relu {
    KAEL_HD T operator()(T x) const { return x > T(0) ? x : (is_nan(x) ? x : T(0)); }
};
KAEL_ELEMENT_FUNCTOR(RELU, Relu);
// Phi(x) = (1 + erf(x / sqrt 2)) / 2 as PyTorch computes it, down to x = -3 (relative error
// under 3e-5 there); below, erfc(-x / sqrt 2) / 2 without the cancellation. erfc everywhere
// made gelu compute-bound on H200 (0.79 of PyTorch); few warps reach the tail branch.
// The tail is a separate, rarely taken branch: as a select both functions ran for every element
// (gelu 0.84 of PyTorch; 0.97 this way in a standalone kernel).
template <typename T>
KAEL_HD inline T gaussian_cdf(T x) {
    constexpr T kInverseSqrt2 = T(0.70710678118654752440);
    T cdf = T(0.5) * (T(1) + math::erf(x * kInverseSqrt2));  // NaN stays NaN
    if (__builtin_expect(x < T(-3), 0)) {
        cdf = T(0.5) * math::erfc(-x * kInverseSqrt2);
    }
    return cdf;
}
template <typename T>
struct GeluExact {
    KAEL_HD T operator()(T x) const { return x * gaussian_cdf(x); }
};
KAEL_ELEMENT_FUNCTOR(GELU_EXACT, GeluExact);
template <typename T>
struct GeluTanh {
    KAEL_HD T operator()(T x) const {
        constexpr T kSqrt2OverPi = T(0.79788456080286535588);
        constexpr T kKappa = T(0.044715);
        // (1 + tanh(u)) / 2 = sigmoid(2u), which keeps negative x free of cancellation.
        const T inner = kSqrt2OverPi * (x + kKappa * x * x * x);
        return x * stable_sigmoid(T(2) * inner);
    }
};
KAEL_ELEMENT_FUNCTOR(GELU_TANH, GeluTanh);
template <typename T>
struct Square {
    KAEL_HD T operator()(T x) const {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            return wrapping_multiply(x, x);
        } else if constexpr (is_bool_v<T>) {
            return x;
        } else {
            return x * x;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(SQUARE, Square);
template <typename T>
struct Reciprocal {
    KAEL_HD T operator()(T x) const { return T(1) / x; }
};
KAEL_ELEMENT_FUNCTOR(RECIPROCAL, Reciprocal);
template <typename T>
struct LogicalNot {
    KAEL_HD bool operator()(T x) const { return x == T(0); }
};
KAEL_ELEMENT_FUNCTOR(LOGICAL_NOT, LogicalNot);

// ---- Binary functors -------------------------------------------------------------------------
template <typename T>
struct Plus {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (is_bool_v<T>) {
            return a || b;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
            return wrapping_add(a, b);
        } else {
            return a + b;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(PLUS, Plus);
template <typename T>
struct Minus {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            return wrapping_subtract(a, b);
        } else {
            return a - b;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(MINUS, Minus);
template <typename T>
struct Multiply {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (is_bool_v<T>) {
            return a && b;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
            return wrapping_multiply(a, b);
        } else {
            return a * b;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(MULTIPLY, Multiply);
template <typename T>
struct Divide {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            if (b == 0) {
                return 0;
            }
            if (b == -1) {
                return wrapping_negate(a);  // INT64_MIN / -1 wraps instead of trapping
            }
            return a / b;
        } else {
            return a / b;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(DIVIDE, Divide);
template <typename T>
struct Power {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            return integer_power(a, b);
        } else {
            // x ** 2, the commonest power (losses, variances), is x * x exactly, NaN, infinities
            // and -0.0 alike: a multiply instead of a libm call per element.
            return b == T(2) ? a * a : math::pow(a, b);
        }
    }
};
KAEL_ELEMENT_FUNCTOR(POWER, Power);
template <typename T>
struct Maximum {
    KAEL_HD T operator()(T a, T b) const { return nan_aware_max(a, b); }
};
KAEL_ELEMENT_FUNCTOR(MAXIMUM, Maximum);
template <typename T>
struct Minimum {
    KAEL_HD T operator()(T a, T b) const { return nan_aware_min(a, b); }
};
KAEL_ELEMENT_FUNCTOR(MINIMUM, Minimum);
template <typename T>
struct Equal {
    KAEL_HD bool operator()(T a, T b) const { return a == b; }
};
KAEL_ELEMENT_FUNCTOR(EQUAL, Equal);
template <typename T>
struct NotEqual {
    KAEL_HD bool operator()(T a, T b) const { return a != b; }
};
KAEL_ELEMENT_FUNCTOR(NOT_EQUAL, NotEqual);
template <typename T>
struct Less {
    KAEL_HD bool operator()(T a, T b) const { return a < b; }
};
KAEL_ELEMENT_FUNCTOR(LESS, Less);
template <typename T>
struct LessEqual {
    KAEL_HD bool operator()(T a, T b) const { return a <= b; }
};
KAEL_ELEMENT_FUNCTOR(LESS_EQUAL, LessEqual);
template <typename T>
struct Greater {
    KAEL_HD bool operator()(T a, T b) const { return a > b; }
};
KAEL_ELEMENT_FUNCTOR(GREATER, Greater);
template <typename T>
struct GreaterEqual {
    KAEL_HD bool operator()(T a, T b) const { return a >= b; }
};
KAEL_ELEMENT_FUNCTOR(GREATER_EQUAL, GreaterEqual);
template <typename T>
struct LogicalAnd {
    KAEL_HD bool operator()(T a, T b) const { return a != T(0) && b != T(0); }
};
KAEL_ELEMENT_FUNCTOR(LOGICAL_AND, LogicalAnd);
template <typename T>
struct LogicalOr {
    KAEL_HD bool operator()(T a, T b) const { return a != T(0) || b != T(0); }
};
KAEL_ELEMENT_FUNCTOR(LOGICAL_OR, LogicalOr);
template <typename T>
struct ReluBackward {
    KAEL_HD T operator()(T input, T grad) const { return input > T(0) ? grad : T(0); }
};
KAEL_ELEMENT_FUNCTOR(RELU_BACKWARD, ReluBackward);
template <typename T>
struct SigmoidBackward {
    KAEL_HD T operator()(T input, T grad) const { return grad * sigmoid_slope(input); }
};
KAEL_ELEMENT_FUNCTOR(SIGMOID_BACKWARD, SigmoidBackward);

// d/dx of x * Phi(x) = Phi(x) + x * phi(x), Phi as GeluExact computes it.
template <typename T>
struct GeluExactBackward {
    KAEL_HD T operator()(T x, T grad) const {
        constexpr T kInverseSqrt2Pi = T(0.39894228040143267794);
        const T cdf = gaussian_cdf(x);
        const T pdf = math::exp(T(-0.5) * x * x) * kInverseSqrt2Pi;
        return grad * (cdf + x * pdf);
    }
};
KAEL_ELEMENT_FUNCTOR(GELU_EXACT_BACKWARD, GeluExactBackward);
// d/dx of x * s, s = sigmoid(2u), u = k (x + kappa x^3): s + x * 2 s (1 - s) * k (1 + 3 kappa x^2).
template <typename T>
struct GeluTanhBackward {
    KAEL_HD T operator()(T x, T grad) const {
        constexpr T kSqrt2OverPi = T(0.79788456080286535588);
        constexpr T kKappa = T(0.044715);
        const T u2 = T(2) * kSqrt2OverPi * (x + kKappa * x * x * x);
        const T du = kSqrt2OverPi * (T(1) + T(3) * kKappa * x * x);
        return grad * (stable_sigmoid(u2) + x * T(2) * sigmoid_slope(u2) * du);
    }
};
KAEL_ELEMENT_FUNCTOR(GELU_TANH_BACKWARD, GeluTanhBackward);

// ---- Functors with more inputs or parameters ---------------------------------------------------
template <typename T>
struct Where {
    KAEL_HD T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};
KAEL_ELEMENT_FUNCTOR(WHERE, Where);
// The functors of ops that read params (the op table's params column) are made by from().
template <typename T>
struct Clamp {
    T low;
    T high;
    static Clamp from(const kael_element_params& params) {
        return {element_param<T>(params, 0), element_param<T>(params, 1)};
    }
    KAEL_HD T operator()(T x) const { return nan_aware_min(nan_aware_max(x, low), high); }
};
KAEL_ELEMENT_FUNCTOR(CLAMP, Clamp);
template <typename T>
struct MaskedFill {
    T value;
    static MaskedFill from(const kael_element_params& params) {
        return {element_param<T>(params, 0)};
    }
    KAEL_HD T operator()(T x, bool mask) const { return mask ? value : x; }
};
KAEL_ELEMENT_FUNCTOR(MASKED_FILL, MaskedFill);

}  // namespace kael::kernels
