#pragma once
#include <cstdint>
#include <string>

namespace kael {

// Values match KAEL_DTYPE_* of the plugin ABI.
enum class DType : std::int32_t { F32 = 0, F64 = 1, I64 = 2, Bool = 3 };

// Throws ValueError for a value outside the enum (out of line, so itemsize stays inline).
[[noreturn]] void throw_unknown_dtype(DType dtype);
// Inline: every op asks, several times.
[[nodiscard]] inline std::int64_t itemsize(DType dtype) {
    switch (dtype) {
        case DType::F32: return 4;
        case DType::F64: return 8;
        case DType::I64: return 8;
        case DType::Bool: return 1;
    }
    throw_unknown_dtype(dtype);
}
[[nodiscard]] std::string to_string(DType dtype);
[[nodiscard]] DType parse_dtype(const std::string& name);
[[nodiscard]] bool is_floating(DType dtype);
// The dtype both operands of a binary op are computed in: bool < i64 < f32 < f64.
[[nodiscard]] DType promote(DType a, DType b);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <typename T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace kael
