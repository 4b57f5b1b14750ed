#pragma once
// The front end's op rows (PyTorch's native_functions.yaml for these families): one row per
// kael:: function that runs one element op of KAEL_ELEMENT_OPS, beside that table. The rows
// generate the declarations (kael/ops_elementwise.h), the definitions (core/src/ops_*.cpp),
// the Python functions and methods (python/src/bind_elemops.cpp) and the op lists that
// kael-conformance, the C++ reference test and the Python tests iterate
// (kael._kael._op_rows()). A new op of a family here touches: its KAEL_ELEMENT_OPS row and its
// functor (plugins/shared), its row here, its backward (core/src/autograd), its numpy reference
// (tests/reference/reference_cases_elemops.py) and its docstring (python/src/docs_elemops.h).

// Arithmetic with broadcasting and promotion: kael::NAME(a, b) runs KAEL_OP_<OP> under RULE
// (kPromote: in the promoted dtype; kNotBool: as kPromote, two bools a TypeError; kFloating: in
// the promoted floating dtype; kPower: not bool, integers to negative integer powers a
// ValueError). Their in-place forms and operators take Python numbers their own way
// (bind_ops_in_place.cpp, bind_tensor.cpp). X(NAME, OP, RULE).
#define KAEL_ARITHMETIC_FUNCTIONS(X) \
    X(add, PLUS, kPromote)           \
    X(sub, MINUS, kNotBool)          \
    X(mul, MULTIPLY, kPromote)       \
    X(div, DIVIDE, kFloating)        \
    X(pow, POWER, kPower)            \
    X(maximum, MAXIMUM, kPromote)    \
    X(minimum, MINIMUM, kPromote)

// Float math: kael::NAME(a) and its in-place form kael::NAME_(a) run KAEL_OP_<OP>; integer and
// bool inputs compute in f32, as exp's do. X(NAME, OP).
#define KAEL_FLOAT_MATH_FUNCTIONS(X) \
    X(exp, EXP)                      \
    X(log, LOG)                      \
    X(sqrt, SQRT)                    \
    X(rsqrt, RSQRT)                  \
    X(sin, SIN)                      \
    X(cos, COS)                      \
    X(tanh, TANH)                    \
    X(sigmoid, SIGMOID)              \
    X(reciprocal, RECIPROCAL)        \
    X(log1p, LOG1P)                  \
    X(expm1, EXPM1)                  \
    X(erf, ERF)                      \
    X(erfc, ERFC)                    \
    X(log2, LOG2)                    \
    X(log10, LOG10)                  \
    X(exp2, EXP2)

// Numeric: kael::NAME(a) and kael::NAME_(a) run KAEL_OP_<OP> in a's dtype (bool computes in
// i64). X(NAME, OP).
#define KAEL_NUMERIC_UNARY_FUNCTIONS(X) \
    X(abs, ABS)                         \
    X(sign, SIGN)                       \
    X(square, SQUARE)                   \
    X(relu, RELU)

// Rounding: kael::NAME(a) and kael::NAME_(a) run KAEL_OP_<OP> on floats; an integer input comes
// back as a copy and bool is a TypeError, as in PyTorch. X(NAME, OP).
#define KAEL_ROUNDING_FUNCTIONS(X) \
    X(floor, FLOOR)                \
    X(ceil, CEIL)                  \
    X(trunc, TRUNC)

// Classification, writing bool (no in-place form): kael::NAME(a) runs KAEL_OP_<OP> on floats;
// integer and bool inputs are finite, so the answer for them is INTEGERS. X(NAME, OP, INTEGERS).
#define KAEL_CLASSIFY_FUNCTIONS(X) \
    X(isnan, ISNAN, false)         \
    X(isinf, ISINF, false)         \
    X(isfinite, ISFINITE, true)    \
    X(isposinf, ISPOSINF, false)   \
    X(isneginf, ISNEGINF, false)

// Comparison and logical ops, writing bool after promoting both inputs (no in-place form):
// kael::NAME(a, b) runs KAEL_OP_<OP>; OPERATOR is the Tensor's Python operator for it, or
// nullptr. X(NAME, OP, OPERATOR).
#define KAEL_COMPARISON_FUNCTIONS(X)           \
    X(eq, EQUAL, "__eq__")                     \
    X(ne, NOT_EQUAL, "__ne__")                 \
    X(lt, LESS, "__lt__")                      \
    X(le, LESS_EQUAL, "__le__")                \
    X(gt, GREATER, "__gt__")                   \
    X(ge, GREATER_EQUAL, "__ge__")             \
    X(logical_and, LOGICAL_AND, nullptr)       \
    X(logical_or, LOGICAL_OR, nullptr)
