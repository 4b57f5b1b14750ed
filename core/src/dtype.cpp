#include "kael/dtype.h"

#include "kael/error.h"

#include <cstdint>

namespace kael {

void throw_unknown_dtype(DType dtype) {
    throw ValueError("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

std::string to_string(DType dtype) {
    switch (dtype) {
        case DType::F32: return "f32";
        case DType::F64: return "f64";
        case DType::I64: return "i64";
        case DType::Bool: return "bool";
        case DType::BF16: return "bf16";
        case DType::F16: return "f16";
        case DType::I32: return "i32";
        case DType::I16: return "i16";
        case DType::I8: return "i8";
        case DType::U8: return "u8";
    }
    return "unknown";
}

DType parse_dtype(const std::string& name) {
    if (name == "f32" || name == "float32" || name == "float") return DType::F32;
    if (name == "f64" || name == "float64" || name == "double") return DType::F64;
    if (name == "i64" || name == "int64" || name == "long") return DType::I64;
    if (name == "bool") return DType::Bool;
    if (name == "bf16" || name == "bfloat16") return DType::BF16;
    if (name == "f16" || name == "float16" || name == "half") return DType::F16;
    if (name == "i32" || name == "int32" || name == "int") return DType::I32;
    if (name == "i16" || name == "int16" || name == "short") return DType::I16;
    if (name == "i8" || name == "int8") return DType::I8;
    if (name == "u8" || name == "uint8") return DType::U8;
    throw ValueError("unknown dtype '" + name +
                     "'; expected f32, f64, i64, i32, i16, i8, u8, bool, bf16 or f16");
}

bool is_floating(DType dtype) {
    return dtype == DType::F32 || dtype == DType::F64 || is_low_precision(dtype);
}

std::pair<std::int64_t, std::int64_t> integer_range(DType dtype) {
    switch (dtype) {
        case DType::Bool: return {0, 1};
        case DType::U8: return {0, 255};
        case DType::I8: return {-128, 127};
        case DType::I16: return {-32768, 32767};
        case DType::I32: return {INT32_MIN, INT32_MAX};
        case DType::I64: return {INT64_MIN, INT64_MAX};
        default: throw TypeError("integer_range: " + to_string(dtype) + " is not an integer dtype");
    }
}

std::int64_t wrap_integer(std::int64_t value, DType dtype) {
    switch (dtype) {
        case DType::I32: return static_cast<std::int32_t>(value);
        case DType::I16: return static_cast<std::int16_t>(value);
        case DType::I8: return static_cast<std::int8_t>(value);
        case DType::U8: return static_cast<std::uint8_t>(value);
        default: return value;
    }
}

DType promote(DType a, DType b) {
    if (a == b) {
        return a;
    }
    auto rank = [](DType dtype) {
        switch (dtype) {
            case DType::Bool: return 0;
            case DType::U8:
            case DType::I8: return 1;
            case DType::I16: return 2;
            case DType::I32: return 3;
            case DType::I64: return 4;
            case DType::BF16:
            case DType::F16: return 5;
            case DType::F32: return 6;
            case DType::F64: return 7;
        }
        return 0;
    };
    if (is_low_precision(a) && is_low_precision(b)) return DType::F32;
    // u8 holds what no signed integer of its width does: with i8, both fit in i16
    if ((a == DType::U8 && b == DType::I8) || (a == DType::I8 && b == DType::U8)) {
        return DType::I16;
    }
    return rank(a) >= rank(b) ? a : b;
}

}  // namespace kael
