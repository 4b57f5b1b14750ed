#pragma once
// Matrix products: matmul through the plugin's (cuBLAS, BLAS) product, einsum composed from it.
#include <string>
#include <vector>

#include "kael/tensor.h"

namespace kael {

// Matrix products: 1-d operands as in numpy, batch dimensions broadcast.
[[nodiscard]] Tensor matmul(const Tensor& a, const Tensor& b);

// einsum over any number of operands, contracted left to right through matmul. Labels are
// letters; '...' stands for broadcast dims; without '->' the output is the labels used once,
// sorted; a label repeated in one operand takes its diagonal.
[[nodiscard]] Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace kael
