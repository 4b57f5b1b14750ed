#pragma once
// The numeric element functions (rounding, the division family, classification, the math
// beyond exp/log, silu, bitwise ops), one functor per row of KAEL_ELEMENT_OPS as
// element_functions.h has the arithmetic ones.
// Their formulas are PyTorch's, so every plugin agrees with it on signs, NaN and ties.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kael/kernels/element_math.h"

namespace kael::kernels {

// math::name(x) calls ::namef for float and ::name for double, host and device alike (_2: of
// two arguments).
#define KAEL_MATH_SPELLING(name)                     \
    template <typename T>                            \
    KAEL_HD inline T name(T x) {                     \
        if constexpr (std::is_same_v<T, float>) {    \
            return ::name##f(x);                     \
        } else {                                     \
            return ::name(x);                        \
        }                                            \
    }
#define KAEL_MATH_SPELLING_2(name)                   \
    template <typename T>                            \
    KAEL_HD inline T name(T a, T b) {                \
        if constexpr (std::is_same_v<T, float>) {    \
            return ::name##f(a, b);                  \
        } else {                                     \
            return ::name(a, b);                     \
        }                                            \
    }
namespace math {
KAEL_MATH_SPELLING(floor)
KAEL_MATH_SPELLING(ceil)
KAEL_MATH_SPELLING(rint)  // to nearest, ties to even (the default rounding mode)
KAEL_MATH_SPELLING(trunc)
KAEL_MATH_SPELLING(log1p)
KAEL_MATH_SPELLING(expm1)
KAEL_MATH_SPELLING(log2)
KAEL_MATH_SPELLING(log10)
KAEL_MATH_SPELLING(exp2)
KAEL_MATH_SPELLING_2(fmod)
KAEL_MATH_SPELLING_2(copysign)
}  // namespace math
#undef KAEL_MATH_SPELLING
#undef KAEL_MATH_SPELLING_2

// A functor applying math::function, op's: the unary math rows differ only in that.
#define KAEL_MATH_FUNCTOR(op, Name, function)                            \
    template <typename T>                                                \
    struct Name {                                                        \
        KAEL_HD T operator()(T x) const { return math::function(x); }    \
    };                                                                   \
    KAEL_ELEMENT_FUNCTOR(op, Name);
KAEL_MATH_FUNCTOR(FLOOR, Floor, floor)
KAEL_MATH_FUNCTOR(CEIL, Ceil, ceil)
KAEL_MATH_FUNCTOR(ROUND, Round, rint)
KAEL_MATH_FUNCTOR(TRUNC, Trunc, trunc)
KAEL_MATH_FUNCTOR(LOG1P, Log1p, log1p)
KAEL_MATH_FUNCTOR(EXPM1, Expm1, expm1)
KAEL_MATH_FUNCTOR(ERF, Erf, erf)
KAEL_MATH_FUNCTOR(ERFC, Erfc, erfc)
KAEL_MATH_FUNCTOR(LOG2, Log2, log2)
KAEL_MATH_FUNCTOR(LOG10, Log10, log10)
KAEL_MATH_FUNCTOR(EXP2, Exp2, exp2)
#undef KAEL_MATH_FUNCTOR

template <typename T>
struct Frac {
    KAEL_HD T operator()(T x) const { return x - math::trunc(x); }
};
KAEL_ELEMENT_FUNCTOR(FRAC, Frac);

// ---- Division family: integer division by zero gives 0, INT64_MIN by -1 wraps ---------------
template <typename T>
struct Fmod {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (is_floating_v<T>) {
            return math::fmod(a, b);
        } else {
            return b == 0 || b == -1 ? T(0) : a % b;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(FMOD, Fmod);
// The divisor's sign: fmod moved by one divisor where the signs differ (PyTorch's formula).
template <typename T>
struct Remainder {
    KAEL_HD T operator()(T a, T b) const {
        const T mod = Fmod<T>{}(a, b);
        return mod != T(0) && ((b < T(0)) != (mod < T(0))) ? mod + b : mod;
    }
};
KAEL_ELEMENT_FUNCTOR(REMAINDER, Remainder);
template <typename T>
struct FloorDivide {
    KAEL_HD T operator()(T a, T b) const {
        if constexpr (is_floating_v<T>) {
            // PyTorch's div_floor: the quotient of a - fmod(a, b), which is exact, floored; the
            // sign of a zero result is that of a / b.
            if (b == T(0)) {
                return a / b;
            }
            const T mod = math::fmod(a, b);
            T quotient = (a - mod) / b;
            if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) {
                quotient -= T(1);
            }
            if (quotient == T(0)) {
                return math::copysign(T(0), a / b);
            }
            T floored = math::floor(quotient);
            if (quotient - floored > T(0.5)) {
                floored += T(1);
            }
            return floored;
        } else {
            if (b == 0) {
                return 0;
            }
            if (b == -1) {
                return wrapping_negate(a);
            }
            const T quotient = a / b;
            return (a % b != 0 && ((a < 0) != (b < 0))) ? quotient - 1 : quotient;
        }
    }
};
KAEL_ELEMENT_FUNCTOR(FLOOR_DIVIDE, FloorDivide);

// ---- Classification --------------------------------------------------------------------------
template <typename T>
struct IsNan {
    KAEL_HD bool operator()(T x) const { return x != x; }
};
KAEL_ELEMENT_FUNCTOR(ISNAN, IsNan);
template <typename T>
struct IsInf {
    KAEL_HD bool operator()(T x) const { return math::fabs(x) == static_cast<T>(INFINITY); }
};
KAEL_ELEMENT_FUNCTOR(ISINF, IsInf);
template <typename T>
struct IsFinite {
    KAEL_HD bool operator()(T x) const { return x - x == T(0); }  // NaN for inf and NaN
};
KAEL_ELEMENT_FUNCTOR(ISFINITE, IsFinite);
template <typename T>
struct IsPosInf {
    KAEL_HD bool operator()(T x) const { return x == static_cast<T>(INFINITY); }
};
KAEL_ELEMENT_FUNCTOR(ISPOSINF, IsPosInf);
template <typename T>
struct IsNegInf {
    KAEL_HD bool operator()(T x) const { return x == -static_cast<T>(INFINITY); }
};
KAEL_ELEMENT_FUNCTOR(ISNEGINF, IsNegInf);

// ---- silu ------------------------------------------------------------------------------------
template <typename T>
struct Silu {
    KAEL_HD T operator()(T x) const { return x * stable_sigmoid(x); }
};
KAEL_ELEMENT_FUNCTOR(SILU, Silu);
// d/dx of x * s = s + x * s * (1 - s), s (1 - s) as sigmoid_slope.
template <typename T>
struct SiluBackward {
    KAEL_HD T operator()(T x, T grad) const {
        return grad * (stable_sigmoid(x) + x * sigmoid_slope(x));
    }
};
KAEL_ELEMENT_FUNCTOR(SILU_BACKWARD, SiluBackward);

// ---- Bitwise (i64) ---------------------------------------------------------------------------
template <typename T>
struct BitwiseAnd {
    KAEL_HD T operator()(T a, T b) const { return a & b; }
};
KAEL_ELEMENT_FUNCTOR(BITWISE_AND, BitwiseAnd);
template <typename T>
struct BitwiseOr {
    KAEL_HD T operator()(T a, T b) const { return a | b; }
};
KAEL_ELEMENT_FUNCTOR(BITWISE_OR, BitwiseOr);
template <typename T>
struct BitwiseXor {
    KAEL_HD T operator()(T a, T b) const { return a ^ b; }
};
KAEL_ELEMENT_FUNCTOR(BITWISE_XOR, BitwiseXor);
template <typename T>
struct BitwiseNot {
    KAEL_HD T operator()(T a) const { return ~a; }
};
KAEL_ELEMENT_FUNCTOR(BITWISE_NOT, BitwiseNot);
// Shifts of the bits as unsigned (no signed overflow); counts outside [0, 64) as PyTorch 2.
template <typename T>
struct LeftShift {
    KAEL_HD T operator()(T a, T b) const {
        if (b < 0 || b >= 64) {
            return 0;
        }
        return static_cast<T>(static_cast<std::uint64_t>(a) << b);
    }
};
KAEL_ELEMENT_FUNCTOR(LEFT_SHIFT, LeftShift);
template <typename T>
struct RightShift {
    KAEL_HD T operator()(T a, T b) const { return a >> (b < 0 || b >= 64 ? 63 : b); }
};
KAEL_ELEMENT_FUNCTOR(RIGHT_SHIFT, RightShift);

}  // namespace kael::kernels
