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
    }
    return "unknown";
}

DType parse_dtype(const std::string& name) {
    if (name == "f32" || name == "float32" || name == "float") return DType::F32;
    if (name == "f64" || name == "float64" || name == "double") return DType::F64;
    if (name == "i64" || name == "int64" || name == "long") return DType::I64;
    if (name == "bool") return DType::Bool;
    throw ValueError("unknown dtype '" + name + "'; expected f32, f64, i64 or bool");
}

bool is_floating(DType dtype) { return dtype == DType::F32 || dtype == DType::F64; }

DType promote(DType a, DType b) {
    auto rank = [](DType dtype) {
        switch (dtype) {
            case DType::Bool: return 0;
            case DType::I64: return 1;
            case DType::F32: return 2;
            case DType::F64: return 3;
        }
        return 0;
    };
    return rank(a) >= rank(b) ? a : b;
}

}  // namespace kael
