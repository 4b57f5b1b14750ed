#include "kael/dtype.h"

#include "kael/error.h"

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
    throw ValueError("unknown dtype '" + name + "'; expected f32, f64, i64, bool, bf16 or f16");
}

bool is_floating(DType dtype) {
    return dtype == DType::F32 || dtype == DType::F64 || is_low_precision(dtype);
}

DType promote(DType a, DType b) {
    auto rank = [](DType dtype) {
        switch (dtype) {
            case DType::Bool: return 0;
            case DType::I64: return 1;
            case DType::BF16:
            case DType::F16: return 2;
            case DType::F32: return 3;
            case DType::F64: return 4;
        }
        return 0;
    };
    if (a != b && is_low_precision(a) && is_low_precision(b)) return DType::F32;
    return rank(a) >= rank(b) ? a : b;
}

}  // namespace kael
