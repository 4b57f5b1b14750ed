#pragma once
#include <cstdint>
#include <string>

namespace kael {

// Values match KAEL_DTYPE_* of the plugin ABI. BF16 (bfloat16) and F16 (IEEE half) are stored in
// two bytes; plugins that do not compute in them get the call in f32 (kernel_run.h).
enum class DType : std::int32_t { F32 = 0, F64 = 1, I64 = 2, Bool = 3, BF16 = 4, F16 = 5 };

// Throws ValueError for a value outside the enum (out of line, so itemsize stays inline).
[[noreturn]] void throw_unknown_dtype(DType dtype);
// Inline: every op asks, several times.
[[nodiscard]] inline std::int64_t itemsize(DType dtype) {
    switch (dtype) {
        case DType::F32: return 4;
        case DType::F64: return 8;
        case DType::I64: return 8;
        case DType::Bool: return 1;
        case DType::BF16:
        case DType::F16: return 2;
    }
    throw_unknown_dtype(dtype);
}
[[nodiscard]] std::string to_string(DType dtype);
[[nodiscard]] DType parse_dtype(const std::string& name);
[[nodiscard]] bool is_floating(DType dtype);
// bfloat16 or float16: stored in two bytes, computed in f32.
[[nodiscard]] inline bool is_low_precision(DType dtype) {
    return dtype == DType::BF16 || dtype == DType::F16;
}
// The dtype both operands of a binary op are computed in, as PyTorch's table: bool < i64 <
// bf16, f16 < f32 < f64, and bf16 with f16 gives f32.
[[nodiscard]] DType promote(DType a, DType b);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <typename T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace kael
