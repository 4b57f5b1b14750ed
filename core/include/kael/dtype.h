#pragma once
#include <cstdint>
#include <string>
#include <utility>

namespace kael {

// Values match KAEL_DTYPE_* of the plugin ABI. BF16 (bfloat16) and F16 (IEEE half) are stored in
// two bytes; plugins that do not compute in them get the call in f32 (kernel_run.h). The narrow
// integers (I32, I16, I8, U8) are computed in i64 the same way and narrowed back (wrapping).
enum class DType : std::int32_t {
    F32 = 0,
    F64 = 1,
    I64 = 2,
    Bool = 3,
    BF16 = 4,
    F16 = 5,
    I32 = 6,
    I16 = 7,
    I8 = 8,
    U8 = 9
};

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
        case DType::F16:
        case DType::I16: return 2;
        case DType::I32: return 4;
        case DType::I8:
        case DType::U8: return 1;
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
// int32, int16, int8 or uint8: stored narrow, computed in i64.
[[nodiscard]] inline bool is_narrow_int(DType dtype) {
    return dtype == DType::I32 || dtype == DType::I16 || dtype == DType::I8 || dtype == DType::U8;
}
// The integers: i64 and the narrow ones (not bool).
[[nodiscard]] inline bool is_integer(DType dtype) {
    return dtype == DType::I64 || is_narrow_int(dtype);
}
// The dtype kernels compute a stored dtype in: f32 for bf16/f16, i64 for the narrow integers.
[[nodiscard]] inline DType compute_dtype(DType dtype) {
    return is_low_precision(dtype) ? DType::F32 : is_narrow_int(dtype) ? DType::I64 : dtype;
}
// The values an integer or bool dtype holds, [first, second].
[[nodiscard]] std::pair<std::int64_t, std::int64_t> integer_range(DType dtype);
// value stored into a narrow integer dtype and read back (two's complement wrap-around, as
// PyTorch's integer arithmetic); other dtypes: value.
[[nodiscard]] std::int64_t wrap_integer(std::int64_t value, DType dtype);
// The dtype both operands of a binary op are computed in, as PyTorch's table: bool < integers <
// bf16, f16 < f32 < f64; bf16 with f16 gives f32, u8 with a signed integer the next wider signed
// (u8 with i8: i16).
[[nodiscard]] DType promote(DType a, DType b);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <typename T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace kael
