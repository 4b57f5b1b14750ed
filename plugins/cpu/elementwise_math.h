#pragma once
// The cpu plugin's elementwise fast path for transcendental functions (elementwise_math.cpp).
#include "kael/plugin_api.h"

namespace kael::cpu {

// Runs exp, log, tanh, sigmoid, gelu (exact or tanh) on contiguous f32 through glibc's vector
// math and returns true (out may be an input itself); false, having done nothing, otherwise.
// (pow's libmvec loop sits in elementwise.cpp's runs, which also spell out broadcast operands.)
bool run_vector_math(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                     const kael_element_layout& layout);

// Runs sigmoid, silu and gelu's backward ops (input, grad) on contiguous f32 the same way
// (activation_backward.cpp) and returns true; false, having done nothing, otherwise.
bool run_activation_backward(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                             const kael_element_layout& layout);

}  // namespace kael::cpu
