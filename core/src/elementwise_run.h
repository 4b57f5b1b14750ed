#pragma once
// The elementwise front-end's one path to a kernel, shared by the op families' source files:
// broadcasting, conversion of inputs to the computing dtype, the plugin call and autograd.
#include <span>

#include "kael/plugin_api.h"
#include "kael/tensor.h"

namespace kael::detail {

// op over inputs (converted to compute from converted_from on), written as out_dtype; recorded
// for autograd through autograd::elementwise_backward. name is the op in errors.
[[nodiscard]] Tensor run_elementwise(kael_element_op op, const char* name, DType out_dtype,
                                     DType compute, std::span<const Tensor> inputs,
                                     const kael_element_params& params,
                                     std::size_t converted_from = 0);

// A scalar operand on tensor's device, in tensor's dtype when it holds value (operator+'s rule).
[[nodiscard]] Tensor scalar_operand(const Tensor& tensor, double value);

}  // namespace kael::detail
