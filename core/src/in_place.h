#pragma once
// The one path by which ops write into an existing tensor's elements.
#include "kael/tensor.h"

namespace kael::detail {

// Writes value (broadcast, converted) into target as copy_ does, with errors naming op: target
// may not be expanded, value may overlap it, autograd records the write.
Tensor& write_into(Tensor& target, const Tensor& value, const char* op);
// TypeError naming op unless an op's result dtype may be written into target (PyTorch's rule).
void check_castable(DType result, const Tensor& target, const char* op);

}  // namespace kael::detail
