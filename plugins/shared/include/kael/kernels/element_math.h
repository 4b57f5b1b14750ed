#pragma once
// Scalar helpers under the element functions: storage of bool, saturating and wrapping integer
// arithmetic, NaN-aware max/min, and float/double math that host and device spell the same.
// Header-only and valid in CUDA device code: no exceptions, no allocation.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kael/plugin_api.h"

#if defined(__CUDACC__)
#define KAEL_HD __host__ __device__
#else
#define KAEL_HD
#endif

namespace kael::kernels {

// The functor of each KAEL_ELEMENT_OPS row: ElementFunctor<KAEL_OP_X>::type<T>, declared with
// KAEL_ELEMENT_FUNCTOR beside the functor (element_functions*.h). The C header names no C++
// template; a row without one fails to compile in element_dispatch.h.
template <int op>
struct ElementFunctor;
#define KAEL_ELEMENT_FUNCTOR(op, Functor)     \
    template <>                               \
    struct ElementFunctor<KAEL_OP_##op> {     \
        template <typename T>                 \
        using type = Functor<T>;              \
    }

// bool is computed as C++ bool and stored as one byte holding 0 or 1.
template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

template <typename T>
KAEL_HD inline T load_element(const void* address) {
    if constexpr (std::is_same_v<T, bool>) {
        return *static_cast<const std::uint8_t*>(address) != 0;
    } else {
        return *static_cast<const T*>(address);
    }
}

template <typename T>
KAEL_HD inline void store_element(void* address, T value) {
    if constexpr (std::is_same_v<T, bool>) {
        *static_cast<std::uint8_t*>(address) = value ? 1 : 0;
    } else {
        *static_cast<T*>(address) = value;
    }
}

template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;

template <typename T>
KAEL_HD inline bool is_nan(T value) {
    if constexpr (is_floating_v<T>) {
        return value != value;
    } else {
        return false;
    }
}

// Float to int saturates and maps NaN to 0; anything non-zero (NaN included) becomes true.
template <typename To, typename From>
KAEL_HD inline To saturating_cast(From value) {
    if constexpr (std::is_same_v<To, From>) {
        return value;
    } else if constexpr (is_bool_v<To>) {
        return value != From(0);
    } else if constexpr (is_bool_v<From>) {
        return value ? To(1) : To(0);
    } else if constexpr (std::is_same_v<To, std::int64_t> && is_floating_v<From>) {
        constexpr double kTwoTo63 = 9223372036854775808.0;
        if (value != value) {
            return 0;
        }
        if (static_cast<double>(value) >= kTwoTo63) {
            return INT64_MAX;  // macros, not numeric_limits: usable in device code
        }
        if (static_cast<double>(value) <= -kTwoTo63) {
            return INT64_MIN;
        }
        return static_cast<std::int64_t>(value);
    } else if constexpr (std::is_integral_v<To> && is_floating_v<From>) {
        // a narrow integer from a float wraps from int64, as PyTorch's x86 conversions do
        return static_cast<To>(saturating_cast<std::int64_t>(value));
    } else {
        return static_cast<To>(value);
    }
}

KAEL_HD inline std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

KAEL_HD inline std::int64_t wrapping_subtract(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

KAEL_HD inline std::int64_t wrapping_multiply(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

KAEL_HD inline std::int64_t wrapping_negate(std::int64_t a) {
    return wrapping_subtract(0, a);
}

// a if it is NaN, else b if it is NaN, else the larger (b on ties). Written as selects, not
// early returns, so loops of it vectorize (the cpu's max over dim 0 ran at 0.64 of PyTorch). A
// NaN b needs no test of its own: a > b is false, so the compare picks b (x86's maxps/minps
// pick the same, so a loop is a max, a compare and a blend).
template <typename T>
KAEL_HD inline T nan_aware_max(T a, T b) {
    const T larger = a > b ? a : b;
    return is_nan(a) ? a : larger;
}

template <typename T>
KAEL_HD inline T nan_aware_min(T a, T b) {
    const T smaller = a < b ? a : b;
    return is_nan(a) ? a : smaller;
}

// Explicit float/double spellings so host and device pick the same precision.
namespace math {
template <typename T>
KAEL_HD inline T exp(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::expf(x);
    } else {
        return ::exp(x);
    }
}
template <typename T>
KAEL_HD inline T log(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::logf(x);
    } else {
        return ::log(x);
    }
}
template <typename T>
KAEL_HD inline T sqrt(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::sqrtf(x);
    } else {
        return ::sqrt(x);
    }
}
template <typename T>
KAEL_HD inline T sin(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::sinf(x);
    } else {
        return ::sin(x);
    }
}
template <typename T>
KAEL_HD inline T cos(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::cosf(x);
    } else {
        return ::cos(x);
    }
}
template <typename T>
KAEL_HD inline T tanh(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::tanhf(x);
    } else {
        return ::tanh(x);
    }
}
template <typename T>
KAEL_HD inline T erf(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::erff(x);
    } else {
        return ::erf(x);
    }
}
template <typename T>
KAEL_HD inline T erfc(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::erfcf(x);
    } else {
        return ::erfc(x);
    }
}
template <typename T>
KAEL_HD inline T fabs(T x) {
    if constexpr (std::is_same_v<T, float>) {
        return ::fabsf(x);
    } else {
        return ::fabs(x);
    }
}
template <typename T>
KAEL_HD inline T pow(T x, T y) {
    if constexpr (std::is_same_v<T, float>) {
        return ::powf(x, y);
    } else {
        return ::pow(x, y);
    }
}
}  // namespace math

// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: no overflow, no cancellation, and no
// branch around the exp (a divergent one made gelu_tanh compute-bound on H200).
template <typename T>
KAEL_HD inline T stable_sigmoid(T x) {
    const T e = math::exp(-math::fabs(x));  // NaN stays NaN through e and r
    const T r = T(1) / (T(1) + e);
    return x >= T(0) ? r : e * r;
}
// sigmoid's derivative s (1 - s) as e / (1 + e)^2, e = exp(-|x|): no 1 - s that rounds to 0
// (s(1-s) was 0 for x above 17 in f32, and a few ulps off well before).
template <typename T>
KAEL_HD inline T sigmoid_slope(T x) {
    const T e = math::exp(-math::fabs(x));
    const T r = T(1) / (T(1) + e);
    return e * r * r;
}

// Exponentiation by squaring with wrapping; a negative exponent truncates 1/base^n toward zero.
KAEL_HD inline std::int64_t integer_power(std::int64_t base, std::int64_t exponent) {
    if (exponent < 0) {
        if (base == 1) {
            return 1;
        }
        if (base == -1) {
            return (exponent & 1) != 0 ? -1 : 1;
        }
        return 0;
    }
    std::int64_t result = 1;
    while (exponent > 0) {
        if ((exponent & 1) != 0) {
            result = wrapping_multiply(result, base);
        }
        base = wrapping_multiply(base, base);
        exponent >>= 1;
    }
    return result;
}

// Reads parameter slot `index` as T: integers[] for integers and bool, reals[] for floats.
template <typename T>
inline T element_param(const kael_element_params& params, int index) {
    if constexpr (is_bool_v<T>) {
        return params.integers[index] != 0;
    } else if constexpr (std::is_integral_v<T>) {  // i64, and the narrow integers wrapped
        return static_cast<T>(params.integers[index]);
    } else {
        return static_cast<T>(params.reals[index]);
    }
}

}  // namespace kael::kernels
