// The division family (fmod, remainder, floor_divide) and the bitwise ops: binary kernels run
// after PyTorch's promotion; bool bitwise ops are the logical kernels.
#include <array>
#include <string>

#include "elementwise_run.h"
#include "in_place.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

namespace {

Tensor run_binary(kael_element_op op, const char* name, DType dtype, const Tensor& a,
                  const Tensor& b) {
    const std::array<Tensor, 2> inputs{a, b};
    return detail::run_elementwise(op, name, dtype, dtype, inputs, detail::no_params());
}

Tensor division(kael_element_op op, const char* name, const Tensor& a, const Tensor& b) {
    const DType dtype = result_type(a, b);
    if (dtype == DType::Bool) {
        throw TypeError(std::string(name) + ": not supported for bool tensors");
    }
    return run_binary(op, name, dtype, a, b);
}

DType integral(const Tensor& a, const Tensor& b, const char* name) {
    const DType dtype = result_type(a, b);
    if (is_floating(dtype)) {
        throw TypeError(std::string(name) + ": takes integer and bool tensors, got " +
                        to_string(a.dtype()) + " and " + to_string(b.dtype()));
    }
    return dtype;
}

// and, or and xor: on bools the logical kernels, which write bool.
Tensor bitwise(kael_element_op op, const char* name, Tensor (*logical)(const Tensor&, const Tensor&),
               const Tensor& a, const Tensor& b) {
    const DType dtype = integral(a, b, name);
    return dtype == DType::Bool ? logical(a, b) : run_binary(op, name, dtype, a, b);
}

Tensor shift(kael_element_op op, const char* name, const Tensor& a, const Tensor& b) {
    const DType dtype = integral(a, b, name);
    if (dtype == DType::Bool) {
        throw TypeError(std::string(name) + ": not supported for bool tensors");
    }
    return run_binary(op, name, dtype, a, b);
}

}  // namespace

Tensor fmod(const Tensor& a, const Tensor& b) { return division(KAEL_OP_FMOD, "fmod", a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) {
    return division(KAEL_OP_REMAINDER, "remainder", a, b);
}
Tensor floor_divide(const Tensor& a, const Tensor& b) {
    return division(KAEL_OP_FLOOR_DIVIDE, "floor_divide", a, b);
}

Tensor bitwise_and(const Tensor& a, const Tensor& b) {
    return bitwise(KAEL_OP_BITWISE_AND, "bitwise_and", logical_and, a, b);
}
Tensor bitwise_or(const Tensor& a, const Tensor& b) {
    return bitwise(KAEL_OP_BITWISE_OR, "bitwise_or", logical_or, a, b);
}
Tensor bitwise_xor(const Tensor& a, const Tensor& b) {
    return bitwise(KAEL_OP_BITWISE_XOR, "bitwise_xor", ne, a, b);
}
Tensor bitwise_not(const Tensor& a) {
    if (a.dtype() == DType::Bool) {
        return logical_not(a);
    }
    if (is_floating(a.dtype())) {
        throw TypeError("bitwise_not: takes integer and bool tensors, got " +
                        to_string(a.dtype()));
    }
    const std::array<Tensor, 1> inputs{a};
    return detail::run_elementwise(KAEL_OP_BITWISE_NOT, "bitwise_not", a.dtype(), a.dtype(),
                                   inputs, detail::no_params());
}
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) {
    return shift(KAEL_OP_LEFT_SHIFT, "bitwise_left_shift", a, b);
}
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) {
    return shift(KAEL_OP_RIGHT_SHIFT, "bitwise_right_shift", a, b);
}

// The in-place forms; the bitwise ones check dtypes first, so errors name op ("&=" from Python).
#define KAEL_IN_PLACE(name, check)                                 \
    Tensor& name##_(Tensor& a, const Tensor& b, const char* op) { \
        if (check) {                                               \
            static_cast<void>(integral(a, b, op));                 \
        }                                                          \
        return detail::binary_in_place(a, b, op, name);            \
    }
KAEL_IN_PLACE(fmod, false)
KAEL_IN_PLACE(remainder, false)
KAEL_IN_PLACE(floor_divide, false)
KAEL_IN_PLACE(bitwise_and, true)
KAEL_IN_PLACE(bitwise_or, true)
KAEL_IN_PLACE(bitwise_xor, true)
KAEL_IN_PLACE(bitwise_left_shift, true)
KAEL_IN_PLACE(bitwise_right_shift, true)
#undef KAEL_IN_PLACE

Tensor& bitwise_not_(Tensor& a) { return detail::unary_in_place(a, "bitwise_not_", bitwise_not); }

Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator<<(const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }
Tensor operator>>(const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }

}  // namespace kael
