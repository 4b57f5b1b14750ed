#pragma once
// Matrix products: matmul through the plugin's (cuBLAS, BLAS) product, einsum composed from it.
#include <string>
#include <vector>

#include "kael/tensor.h"

namespace kael {

// How exactly float32 products (matmul, linear, their gradients) are computed, as
// torch.set_float32_matmul_precision: Highest (the default) keeps f32's every bit; High lets a
// device round their inputs to TF32 (a 10-bit mantissa, on tensor cores) and Medium to
// bfloat16. Process-wide; a device may always compute more exactly (the cpu plugin does).
enum class MatmulPrecision { Highest, High, Medium };
void set_float32_matmul_precision(MatmulPrecision precision);
[[nodiscard]] MatmulPrecision float32_matmul_precision();

// Matrix products: 1-d operands as in numpy, batch dimensions broadcast.
[[nodiscard]] Tensor matmul(const Tensor& a, const Tensor& b);

// einsum over any number of operands, contracted left to right through matmul. Labels are
// letters; '...' stands for broadcast dims; without '->' the output is the labels used once,
// sorted; a label repeated in one operand takes its diagonal.
[[nodiscard]] Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace kael
