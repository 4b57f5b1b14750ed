#pragma once
#include <cstdint>
#include <string>

namespace kael {

// Values match KAEL_DTYPE_* of the plugin ABI.
enum class DType : std::int32_t { F32 = 0, F64 = 1, I64 = 2, Bool = 3 };

[[nodiscard]] std::int64_t itemsize(DType dtype);
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
