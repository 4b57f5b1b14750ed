#pragma once
// The one path by which ops write into an existing tensor's elements.
#include "kael/tensor.h"

namespace kael::detail {

// Writes value (broadcast, converted) into target as copy_ does, with errors naming op: target
// may not be expanded, value may overlap it, autograd records the write.
Tensor& write_into(Tensor& target, const Tensor& value, const char* op);
// TypeError naming op unless an op's result dtype may be written into target (PyTorch's rule).
void check_castable(DType result, const Tensor& target, const char* op);

// target = compute(target, other) as add_ does: the result must be castable to target's dtype
// (PyTorch's rule), and other's gradient may read target's old value.
Tensor& binary_in_place(Tensor& target, const Tensor& other, const char* op,
                        Tensor (*compute)(const Tensor&, const Tensor&));
// target = compute(target), under the same rules.
Tensor& unary_in_place(Tensor& target, const char* op, Tensor (*compute)(const Tensor&));

}  // namespace kael::detail
