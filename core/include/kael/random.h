#pragma once
// One seeded generator for the whole process. Values are drawn on the host and then moved to the
// device, so a seed gives the same values on every device.
#include <cstdint>

#include "kael/tensor.h"

namespace kael {

// Reseeds the generator; the sequence after manual_seed(s) is the same in every run.
void manual_seed(std::uint64_t seed);

// Uniform in [0, 1). dtype must be floating (TypeError otherwise).
[[nodiscard]] Tensor rand(const Shape& shape, DType dtype = DType::F32, Device device = kCPU);
// Standard normal (mean 0, variance 1). dtype must be floating (TypeError otherwise).
[[nodiscard]] Tensor randn(const Shape& shape, DType dtype = DType::F32, Device device = kCPU);
// Uniform integers in [low, high), i64; ValueError unless low < high.
[[nodiscard]] Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
                             Device device = kCPU);
// Bool tensor, each element true with probability p; ValueError unless 0 <= p <= 1.
[[nodiscard]] Tensor bernoulli_mask(const Shape& shape, double p, Device device = kCPU);

}  // namespace kael
