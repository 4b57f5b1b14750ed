#pragma once
// Helpers shared by unit_cpu_ops's files (test_cpu_ops.cpp, test_cpu_elementwise.cpp).
#include <cstdint>
#include <vector>

#include "kael/ops.h"

namespace kael::test {

// 0, 1, 2, ... in the shape.
inline Tensor iota(const Shape& shape, DType dtype = DType::F32) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    return kael::arange(0, static_cast<double>(count), 1, dtype).view(shape);
}

template <typename T>
std::vector<T> v(const Tensor& t) {
    return t.to_vector<T>();
}

}  // namespace kael::test
