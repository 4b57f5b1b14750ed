/* kael plugin ABI, part of plugin_api.h (include that): the element and reduce operations.
 * Each list is written once, as an X-macro; the enums, and every name table, arity and dtype
 * rule kael has, are generated from it. Values are released: rows are only appended.
 * This header compiles as C99 and as C++. */
#ifndef KAEL_PLUGIN_OPS_H
#define KAEL_PLUGIN_OPS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Elementwise operations. Inputs are operands 1.. of the layout, the output is operand 0.
 * KAEL_ELEMENT_OPS is their one list: kael generates every enum, name table, arity and dtype rule
 * from it. A row is X(op, value, name, inputs, in, out, params, since):
 *   op, value  KAEL_OP_<op> = value, as released: never changed, rows are only appended
 *   name       the op as messages and tools spell it
 *   inputs     input operands, 1..3 (the layout holds one more, the output)
 *   in         the in_dtypes it takes, KAEL_OP_INPUTS_<in>; a plugin refuses others (UNSUPPORTED)
 *   out        the out_dtype it writes, KAEL_OP_WRITES_<out>
 *   params     1 if it reads kael_element_params (which must then be given)
 *   since      the ABI minor it arrived in; the core sends it only to plugins of that minor on
 * Paste in and out (KAEL_OP_INPUTS_##in) rather than use them bare: a bare word such as BOOL may
 * be someone's macro. */
#define KAEL_OP_INPUTS_ANY 0      /* all four dtypes */
#define KAEL_OP_INPUTS_NUMERIC 1  /* all but bool */
#define KAEL_OP_INPUTS_FLOATING 2 /* f32 and f64 */
#define KAEL_OP_INPUTS_INTEGER 3  /* i64 only (since 1.6: bitwise ops; bool's are logical ops) */
#define KAEL_OP_WRITES_SAME 0     /* the inputs' dtype, in_dtype */
#define KAEL_OP_WRITES_BOOL 1

/* clang-format off */
#define KAEL_ELEMENT_OPS(X)                                                                        \
    /* copy (convert uses it with out_dtype != in_dtype) */                                        \
    X(IDENTITY,             0, "identity",            1, ANY,      SAME, 0, 0)                     \
    X(NEGATE,               1, "negate",              1, NUMERIC,  SAME, 0, 0)                     \
    X(ABS,                  2, "abs",                 1, ANY,      SAME, 0, 0)                     \
    X(SIGN,                 3, "sign",                1, ANY,      SAME, 0, 0)                     \
    X(EXP,                  4, "exp",                 1, FLOATING, SAME, 0, 0)                     \
    X(LOG,                  5, "log",                 1, FLOATING, SAME, 0, 0)                     \
    X(SQRT,                 6, "sqrt",                1, FLOATING, SAME, 0, 0)                     \
    X(RSQRT,                7, "rsqrt",               1, FLOATING, SAME, 0, 0)                     \
    X(SIN,                  8, "sin",                 1, FLOATING, SAME, 0, 0)                     \
    X(COS,                  9, "cos",                 1, FLOATING, SAME, 0, 0)                     \
    X(TANH,                10, "tanh",                1, FLOATING, SAME, 0, 0)                     \
    X(SIGMOID,             11, "sigmoid",             1, FLOATING, SAME, 0, 0)                     \
    X(RELU,                12, "relu",                1, ANY,      SAME, 0, 0)                     \
    X(GELU_EXACT,          13, "gelu_exact",          1, FLOATING, SAME, 0, 0)                     \
    X(GELU_TANH,           14, "gelu_tanh",           1, FLOATING, SAME, 0, 0)                     \
    X(SQUARE,              15, "square",              1, ANY,      SAME, 0, 0)                     \
    X(RECIPROCAL,          16, "reciprocal",          1, FLOATING, SAME, 0, 0)                     \
    X(LOGICAL_NOT,         17, "logical_not",         1, ANY,      BOOL, 0, 0)                     \
    X(PLUS,                18, "plus",                2, ANY,      SAME, 0, 0)                     \
    X(MINUS,               19, "minus",               2, NUMERIC,  SAME, 0, 0)                     \
    X(MULTIPLY,            20, "multiply",            2, ANY,      SAME, 0, 0)                     \
    /* integer division truncates toward zero; division by zero gives 0 */                         \
    X(DIVIDE,              21, "divide",              2, NUMERIC,  SAME, 0, 0)                     \
    X(POWER,               22, "power",               2, NUMERIC,  SAME, 0, 0)                     \
    /* maximum and minimum: NaN propagates */                                                      \
    X(MAXIMUM,             23, "maximum",             2, ANY,      SAME, 0, 0)                     \
    X(MINIMUM,             24, "minimum",             2, ANY,      SAME, 0, 0)                     \
    /* comparisons and logical ops write bool */                                                   \
    X(EQUAL,               25, "equal",               2, ANY,      BOOL, 0, 0)                     \
    X(NOT_EQUAL,           26, "not_equal",           2, ANY,      BOOL, 0, 0)                     \
    X(LESS,                27, "less",                2, ANY,      BOOL, 0, 0)                     \
    X(LESS_EQUAL,          28, "less_equal",          2, ANY,      BOOL, 0, 0)                     \
    X(GREATER,             29, "greater",             2, ANY,      BOOL, 0, 0)                     \
    X(GREATER_EQUAL,       30, "greater_equal",       2, ANY,      BOOL, 0, 0)                     \
    X(LOGICAL_AND,         31, "logical_and",         2, ANY,      BOOL, 0, 0)                     \
    X(LOGICAL_OR,          32, "logical_or",          2, ANY,      BOOL, 0, 0)                     \
    /* (input, grad): grad where input > 0 else 0 */                                               \
    X(RELU_BACKWARD,       33, "relu_backward",       2, NUMERIC,  SAME, 0, 0)                     \
    /* (input, grad): grad * s * (1 - s), s = sigmoid(input) */                                    \
    X(SIGMOID_BACKWARD,    34, "sigmoid_backward",    2, FLOATING, SAME, 0, 0)                     \
    /* (bool condition, a, b): a where condition else b; in_dtype is that of a and b */            \
    X(WHERE,               35, "where",               3, ANY,      SAME, 0, 0)                     \
    /* params: [0] low, [1] high */                                                                \
    X(CLAMP,               36, "clamp",               1, ANY,      SAME, 1, 0)                     \
    /* (input, bool mask): params[0] where mask else input */                                      \
    X(MASKED_FILL,         37, "masked_fill",         2, ANY,      SAME, 1, 0)                     \
    X(GELU_EXACT_BACKWARD, 38, "gelu_exact_backward", 2, FLOATING, SAME, 0, 2)                     \
    X(GELU_TANH_BACKWARD,  39, "gelu_tanh_backward",  2, FLOATING, SAME, 0, 2)                     \
    /* since 1.6. Rounding: round is half to even; frac = x - trunc(x) */                          \
    X(FLOOR,               40, "floor",               1, FLOATING, SAME, 0, 6)                     \
    X(CEIL,                41, "ceil",                1, FLOATING, SAME, 0, 6)                     \
    X(ROUND,               42, "round",               1, FLOATING, SAME, 0, 6)                     \
    X(TRUNC,               43, "trunc",               1, FLOATING, SAME, 0, 6)                     \
    X(FRAC,                44, "frac",                1, FLOATING, SAME, 0, 6)                     \
    /* fmod takes the dividend's sign, remainder the divisor's; floor_divide floors. Integer   \
     * division by zero gives 0, INT64_MIN by -1 wraps */                                         \
    X(FMOD,                45, "fmod",                2, NUMERIC,  SAME, 0, 6)                     \
    X(REMAINDER,           46, "remainder",           2, NUMERIC,  SAME, 0, 6)                     \
    X(FLOOR_DIVIDE,        47, "floor_divide",        2, NUMERIC,  SAME, 0, 6)                     \
    /* classification writes bool */                                                          \
    X(ISNAN,               48, "isnan",               1, FLOATING, BOOL, 0, 6)                     \
    X(ISINF,               49, "isinf",               1, FLOATING, BOOL, 0, 6)                     \
    X(ISFINITE,            50, "isfinite",            1, FLOATING, BOOL, 0, 6)                     \
    X(ISPOSINF,            51, "isposinf",            1, FLOATING, BOOL, 0, 6)                     \
    X(ISNEGINF,            52, "isneginf",            1, FLOATING, BOOL, 0, 6)                     \
    X(LOG1P,               53, "log1p",               1, FLOATING, SAME, 0, 6)                     \
    X(EXPM1,               54, "expm1",               1, FLOATING, SAME, 0, 6)                     \
    X(ERF,                 55, "erf",                 1, FLOATING, SAME, 0, 6)                     \
    X(ERFC,                56, "erfc",                1, FLOATING, SAME, 0, 6)                     \
    X(LOG2,                57, "log2",                1, FLOATING, SAME, 0, 6)                     \
    X(LOG10,               58, "log10",               1, FLOATING, SAME, 0, 6)                     \
    X(EXP2,                59, "exp2",                1, FLOATING, SAME, 0, 6)                     \
    /* silu = x * sigmoid(x); (input, grad): grad * s * (1 + x * (1 - s)) */                      \
    X(SILU,                60, "silu",                1, FLOATING, SAME, 0, 6)                     \
    X(SILU_BACKWARD,       61, "silu_backward",       2, FLOATING, SAME, 0, 6)                     \
    /* bitwise ops on i64 (two's complement). A shift by a negative count or >= 64 gives 0      \
     * (left) or the sign fill, a >> 63 (right), as PyTorch's cpu kernels */                      \
    X(BITWISE_AND,         62, "bitwise_and",         2, INTEGER,  SAME, 0, 6)                     \
    X(BITWISE_OR,          63, "bitwise_or",          2, INTEGER,  SAME, 0, 6)                     \
    X(BITWISE_XOR,         64, "bitwise_xor",         2, INTEGER,  SAME, 0, 6)                     \
    X(BITWISE_NOT,         65, "bitwise_not",         1, INTEGER,  SAME, 0, 6)                     \
    X(LEFT_SHIFT,          66, "left_shift",          2, INTEGER,  SAME, 0, 6)                     \
    X(RIGHT_SHIFT,         67, "right_shift",         2, INTEGER,  SAME, 0, 6)
/* clang-format on */

typedef int32_t kael_element_op;
#define KAEL_OP_ENUMERATOR_(op, value, name, inputs, in, out, params, since) \
    KAEL_OP_##op = value,
enum {
    KAEL_ELEMENT_OPS(KAEL_OP_ENUMERATOR_)
    /* the number of rows: raise it with each row appended (checked at the end) */
    KAEL_OP_COUNT = 68
};
/* Each row's position, for the check at the end that the values are 0.. in row order. */
#define KAEL_OP_POSITION_(op, value, name, inputs, in, out, params, since) \
    kael_op_position_##op##_,
enum { KAEL_ELEMENT_OPS(KAEL_OP_POSITION_) kael_op_rows_ };
#undef KAEL_OP_ENUMERATOR_
#undef KAEL_OP_POSITION_

/* Reductions over contiguous rows. Sum accumulates in double for floats and wraps in int64 for
 * integers; Max/Min propagate NaN; Argmax/Argmin write int64 (first occurrence, NaN wins).
 * Variance (f32/f64 input only) writes the population variance M2 / n as f64, Welford/Chan
 * states in double (f64 out: the variance of f32 data can exceed f32's range before a root);
 * NaN propagates and n == 0 gives NaN.
 * Norm2 (f32/f64, since 1.7) writes sqrt(sum of x^2) in the input's dtype, the squares summed in
 * double (so an f32 row cannot overflow before the root); empty rows give 0. Reducing a row of
 * norms again gives the norm of the whole, so norms over several runs of memory compose.
 * LogSumExp (f32/f64, since 1.9) writes log(sum(exp(x))) in the input's dtype, accumulated in at
 * least the input's dtype with the row's max subtracted (kael's reducer keeps one online max and
 * sum of exp(x - max), as PyTorch does): all -inf and empty rows give -inf, a +inf gives +inf,
 * NaN propagates. A logsumexp of logsumexps is the whole one's, so it composes like Norm2.
 * KAEL_REDUCE_OPS is their one list, as KAEL_ELEMENT_OPS is for elementwise operations. A row is
 * X(op, value, name, in, out, empty, since): KAEL_REDUCE_<op> = value (as released, appended
 * only), its name, the in_dtypes it takes (KAEL_OP_INPUTS_<in>), the out_dtype it writes
 * (KAEL_REDUCE_WRITES_<out>), 1 if an empty row has a value (the identity: sum 0, prod 1,
 * variance NaN) and the ABI minor it arrived in (the core sends it only to that minor or later). */
#define KAEL_REDUCE_WRITES_WIDE 0 /* floats their own dtype, int64 and bool int64 */
#define KAEL_REDUCE_WRITES_SAME 1 /* in_dtype */
#define KAEL_REDUCE_WRITES_I64 2
#define KAEL_REDUCE_WRITES_F64 3

/* clang-format off */
#define KAEL_REDUCE_OPS(X)                                                                         \
    X(SUM,      0, "sum",      ANY,      WIDE, 1, 0)                                               \
    X(PROD,     1, "prod",     ANY,      WIDE, 1, 0)                                               \
    X(MAX,      2, "max",      ANY,      SAME, 0, 0)                                               \
    X(MIN,      3, "min",      ANY,      SAME, 0, 0)                                               \
    X(ARGMAX,   4, "argmax",   ANY,      I64,  0, 0)                                               \
    X(ARGMIN,   5, "argmin",   ANY,      I64,  0, 0)                                               \
    X(VARIANCE, 6, "variance", FLOATING, F64,  1, 2)                                               \
    X(NORM2,    7, "norm2",    FLOATING, WIDE, 1, 7)                                               \
    X(LOGSUMEXP, 8, "logsumexp", FLOATING, WIDE, 1, 9)
/* clang-format on */

typedef int32_t kael_reduce_op;
#define KAEL_REDUCE_ENUMERATOR_(op, value, name, in, out, empty, since) KAEL_REDUCE_##op = value,
enum {
    KAEL_REDUCE_OPS(KAEL_REDUCE_ENUMERATOR_)
    /* the number of rows: raise it with each row appended (checked at the end) */
    KAEL_REDUCE_COUNT = 9
};
#define KAEL_REDUCE_POSITION_(op, value, name, in, out, empty, since) kael_reduce_position_##op##_,
enum { KAEL_REDUCE_OPS(KAEL_REDUCE_POSITION_) kael_reduce_rows_ };
#undef KAEL_REDUCE_ENUMERATOR_
#undef KAEL_REDUCE_POSITION_

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The op tables have as many rows as the counts say and each value at its row's position (0..,
 * no gaps): a row appended without raising the count, or out of order, does not compile. The
 * enums are distinct types, so their values are compared as ints (+ 0). */
#if defined(__cplusplus)
#define KAEL_STATIC_ASSERT_(condition, message) static_assert(condition, message);
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KAEL_STATIC_ASSERT_(condition, message) _Static_assert(condition, message);
#endif
#ifdef KAEL_STATIC_ASSERT_
KAEL_STATIC_ASSERT_(kael_op_rows_ + 0 == KAEL_OP_COUNT + 0,
                    "KAEL_OP_COUNT is not the number of rows")
KAEL_STATIC_ASSERT_(kael_reduce_rows_ + 0 == KAEL_REDUCE_COUNT + 0,
                    "KAEL_REDUCE_COUNT is not the number of rows")
#define KAEL_OP_IN_ORDER_(op, value, name, inputs, in, out, params, since) \
    KAEL_STATIC_ASSERT_(KAEL_OP_##op + 0 == kael_op_position_##op##_ + 0,           \
                        "element op " name " misplaced")
#define KAEL_REDUCE_IN_ORDER_(op, value, name, in, out, empty, since)             \
    KAEL_STATIC_ASSERT_(KAEL_REDUCE_##op + 0 == kael_reduce_position_##op##_ + 0, \
                        "reduce op " name " misplaced")
KAEL_ELEMENT_OPS(KAEL_OP_IN_ORDER_)
KAEL_REDUCE_OPS(KAEL_REDUCE_IN_ORDER_)
#undef KAEL_OP_IN_ORDER_
#undef KAEL_REDUCE_IN_ORDER_
#undef KAEL_STATIC_ASSERT_
#endif

#endif /* KAEL_PLUGIN_OPS_H */
