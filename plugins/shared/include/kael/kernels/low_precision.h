#pragma once
// bfloat16 and IEEE binary16 as plugins store them (KAEL_DTYPE_BF16, KAEL_DTYPE_F16: two bytes),
// converted to and from float with integer operations alone, so host and device code round the
// same: round to nearest, ties to even; NaN stays NaN (quiet, sign kept); infinities, signed
// zeros and binary16's subnormals are exact. Wider sources round through float, as PyTorch's.
#include <cstdint>
#include <cstring>

#include "kael/kernels/element_math.h"

namespace kael::kernels {

struct BFloat16 {
    std::uint16_t bits;
};
struct Half {
    std::uint16_t bits;
};

template <typename T>
inline constexpr bool is_low_precision_v =
    std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

KAEL_HD inline std::uint32_t float_bits(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

KAEL_HD inline float bits_float(std::uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

KAEL_HD inline float to_float(BFloat16 value) {
    return bits_float(static_cast<std::uint32_t>(value.bits) << 16U);
}

KAEL_HD inline BFloat16 to_bfloat16(float value) {
    const std::uint32_t bits = float_bits(value);
    if ((bits & 0x7FFFFFFFU) > 0x7F800000U) {
        return {static_cast<std::uint16_t>((bits >> 16U) | 0x40U)};  // quiet, sign kept
    }
    // Adding half an ulp less one, plus the kept bit's parity, rounds ties to even; a carry
    // past the largest finite value gives infinity, as it should.
    return {static_cast<std::uint16_t>((bits + 0x7FFFU + ((bits >> 16U) & 1U)) >> 16U)};
}

KAEL_HD inline float to_float(Half value) {
    const std::uint32_t sign = static_cast<std::uint32_t>(value.bits & 0x8000U) << 16U;
    const std::uint32_t exponent = (value.bits >> 10U) & 0x1FU;
    const std::uint32_t mantissa = value.bits & 0x3FFU;
    if (exponent == 0x1FU) {  // infinity, or NaN with its payload
        return bits_float(sign | 0x7F800000U | (mantissa << 13U));
    }
    if (exponent != 0) {  // normal: rebias 15 -> 127
        return bits_float(sign | ((exponent + 112U) << 23U) | (mantissa << 13U));
    }
    // Zero or subnormal, mantissa * 2^-24: exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8F;
    return sign != 0 ? -magnitude : magnitude;
}

// a shifted right by shift (1 to 31), rounded to nearest, ties to even.
KAEL_HD inline std::uint32_t round_shift(std::uint32_t a, std::uint32_t shift) {
    const std::uint32_t kept = a >> shift;
    const std::uint32_t rest = a & ((1U << shift) - 1U);
    const std::uint32_t half = 1U << (shift - 1U);
    return kept + ((rest > half || (rest == half && (kept & 1U) != 0)) ? 1U : 0U);
}

KAEL_HD inline Half to_half(float value) {
    const std::uint32_t bits = float_bits(value);
    const auto sign = static_cast<std::uint16_t>((bits >> 16U) & 0x8000U);
    const std::uint32_t a = bits & 0x7FFFFFFFU;
    if (a > 0x7F800000U) {
        return {static_cast<std::uint16_t>(sign | 0x7E00U | ((a >> 13U) & 0x3FFU))};
    }
    if (a >= 0x477FF000U) {  // 65520 and up round to infinity
        return {static_cast<std::uint16_t>(sign | 0x7C00U)};
    }
    if (a >= 0x38800000U) {  // 2^-14 and up: normal; a mantissa carry steps the exponent
        return {static_cast<std::uint16_t>(sign | round_shift(a - 0x38000000U, 13U))};
    }
    if (a < 0x33000000U) {  // below 2^-25: zero (2^-25 itself ties to even, to zero too)
        return {sign};
    }
    // Subnormal: round(value / 2^-24) from the 24-bit significand m * 2^(e - 150).
    const std::uint32_t exponent = a >> 23U;
    const std::uint32_t significand = (a & 0x7FFFFFU) | 0x800000U;
    return {static_cast<std::uint16_t>(sign | round_shift(significand, 126U - exponent))};
}

template <typename T>
KAEL_HD inline T from_float(float value) {
    if constexpr (std::is_same_v<T, BFloat16>) {
        return to_bfloat16(value);
    } else {
        return to_half(value);
    }
}

// Out from In, for any pair of kernel dtypes: low precision through float (a wider source rounds
// to float first, as PyTorch's conversions do), everything else through saturating_cast.
template <typename Out, typename In>
KAEL_HD inline Out convert_value(In value) {
    if constexpr (std::is_same_v<Out, In>) {
        return value;
    } else if constexpr (is_low_precision_v<In>) {
        return convert_value<Out>(to_float(value));
    } else if constexpr (is_low_precision_v<Out>) {
        return from_float<Out>(saturating_cast<float>(value));
    } else {
        return saturating_cast<Out>(value);
    }
}

}  // namespace kael::kernels
