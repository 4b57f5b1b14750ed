#pragma once
// The mappings from the raw 64-bit stream to values, shared by the random factories and ops.
#include <cstdint>
#include <random>
#include <vector>

#include "kael/tensor.h"

namespace kael::detail {

// 53 random bits scaled into [0, 1).
inline double uniform_double(std::mt19937_64& engine) {
    return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}
// 24 random bits, so rounding to float can never reach 1.
inline double uniform_float(std::mt19937_64& engine) {
    return static_cast<double>(engine() >> 40) * 0x1.0p-24;
}
// Uniform in [0, range), without bias.
std::uint64_t bounded(std::mt19937_64& engine, std::uint64_t range);
// Standard normals into every element of values.
void fill_normal(std::mt19937_64& engine, std::vector<double>& values);

std::int64_t element_count(const Shape& shape, const char* op);  // ValueError on a negative size
void check_floating(DType dtype, const char* op);                  // TypeError naming op
// Host values as a tensor of dtype (any kael dtype) and shape on device.
Tensor from_values(const std::vector<double>& values, const Shape& shape, DType dtype,
                   const Device& device);

}  // namespace kael::detail
