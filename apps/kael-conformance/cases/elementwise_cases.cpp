// Conformance of fill, the random factories, convert and every elementwise op, each in every
// dtype over every layout, on the device against cpu.
#include <cmath>
#include <limits>

#include "conformance.h"

using namespace conformance;

namespace {

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
// The first integer a double cannot hold: an i64 path through double would lose its last bit.
constexpr std::int64_t kPastDouble = (std::int64_t{1} << 53) + 1;
const double kNaN = std::nan("");
const double kInf = std::numeric_limits<double>::infinity();

// Operand roles of an elementwise op: a value of the case's first or second dtype, or a bool
// mask (where's condition, masked_fill's mask).
enum class Role { First, Second, Mask };

struct ElementCase {
    std::string name;
    std::vector<Role> roles;
    std::function<Tensor(const Tensors&)> op;
    conformance::Tolerance tolerance{};
};

// gelu's and silu's derivatives cross zero (x near -0.75 and -1.28): their two O(1) terms cancel
// there, so device and host math differing by an ulp differ by ~1e-7 * |grad| absolute, not
// relative.
const conformance::Tolerance kCancelling{.scale = 0.01};

std::vector<ElementCase> unary_cases() {
    using F = Tensor (*)(const Tensor&);
    const std::pair<const char*, F> unary[] = {
        {"neg", kael::neg},
        {"logical_not", kael::logical_not},
        // rounding, division, classification, more math, bitwise
        {"frac", kael::frac},
        {"silu", kael::silu},
        {"bitwise_not", kael::bitwise_not},
    };
    std::vector<ElementCase> cases;
    for (const auto& [name, f] : unary) {
        cases.push_back({name, {Role::First}, [f = f](const Tensors& x) { return f(x[0]); }});
    }
    cases.push_back({"gelu", {Role::First}, [](const Tensors& x) { return kael::gelu(x[0]); }});
    cases.push_back(
        {"gelu_tanh", {Role::First}, [](const Tensors& x) { return kael::gelu(x[0], true); }});
    cases.push_back(
        {"clamp", {Role::First}, [](const Tensors& x) { return kael::clamp(x[0], -1.5, 2.0); }});
    cases.push_back({"clamp_point", {Role::First}, [](const Tensors& x) {
                         return kael::clamp(x[0], -2.0, -2.0);
                     }});
    cases.push_back({"clamp_int", {Role::First}, [](const Tensors& x) {
                         return kael::clamp_int(x[0], -3, 5);
                     }});
    cases.push_back({"clamp_int_extremes", {Role::First}, [](const Tensors& x) {
                         return kael::clamp_int(x[0], kI64Min + 1, 0);
                     }});
    cases.push_back({"clamp_int_past_double", {Role::First}, [](const Tensors& x) {
                         return kael::clamp_int(x[0], 7, kPastDouble);  // every bit of the bound
                     }});
    cases.push_back({"add_scalar", {Role::First}, [](const Tensors& x) { return x[0] + 2.5; }});
    cases.push_back({"scalar_times", {Role::First}, [](const Tensors& x) { return -3.0 * x[0]; }});
    cases.push_back({"sub_scalar", {Role::First}, [](const Tensors& x) { return x[0] - 1.0; }});
    cases.push_back({"div_by_zero", {Role::First}, [](const Tensors& x) { return x[0] / 0.0; }});
    // The float math rows (kael/op_rows.h). Their tails may be subnormal in f32 (erfc(10) =
    // 2.1e-45): vector and scalar math may differ by one subnormal step there.
#define KAEL_FLOAT_MATH_CASE(name, OP)                                                    \
    cases.push_back({#name, {Role::First}, [](const Tensors& x) { return kael::name(x[0]); }, \
                     {.scale = 1e-30}});
    KAEL_FLOAT_MATH_FUNCTIONS(KAEL_FLOAT_MATH_CASE)
#undef KAEL_FLOAT_MATH_CASE
#define KAEL_NUMERIC_CASE(name, OP) \
    cases.push_back({#name, {Role::First}, [](const Tensors& x) { return kael::name(x[0]); }});
    KAEL_NUMERIC_UNARY_FUNCTIONS(KAEL_NUMERIC_CASE)
    KAEL_ROUNDING_FUNCTIONS(KAEL_NUMERIC_CASE)
#define KAEL_CLASSIFY_CASE(name, OP, INTEGERS) KAEL_NUMERIC_CASE(name, OP)
    KAEL_CLASSIFY_FUNCTIONS(KAEL_CLASSIFY_CASE)
#undef KAEL_CLASSIFY_CASE
#undef KAEL_NUMERIC_CASE
    cases.push_back({"round", {Role::First}, [](const Tensors& x) { return kael::round(x[0]); }});
    cases.push_back({"round_to_hundredths", {Role::First}, [](const Tensors& x) {
                         return kael::round(x[0], 2);
                     }});
    cases.push_back({"nan_to_num", {Role::First}, [](const Tensors& x) {
                         return kael::nan_to_num(kael::log(x[0]), -1.0);  // log makes nan, -inf
                     }});
    return cases;
}

std::vector<ElementCase> binary_cases() {
    using F = Tensor (*)(const Tensor&, const Tensor&);
    const std::pair<const char*, F> binary[] = {
#define KAEL_BINARY_CASE(name, ...) {#name, kael::name},
        KAEL_ARITHMETIC_FUNCTIONS(KAEL_BINARY_CASE)
        KAEL_COMPARISON_FUNCTIONS(KAEL_BINARY_CASE)
#undef KAEL_BINARY_CASE
        {"relu_backward", kael::relu_backward},
        {"sigmoid_backward", kael::sigmoid_backward},
        // rounding, division, classification, more math, bitwise
        {"fmod", kael::fmod},
        {"remainder", kael::remainder},
        {"floor_divide", kael::floor_divide},
        {"bitwise_and", kael::bitwise_and},
        {"bitwise_or", kael::bitwise_or},
        {"bitwise_xor", kael::bitwise_xor},
        {"bitwise_left_shift", kael::bitwise_left_shift},
        {"bitwise_right_shift", kael::bitwise_right_shift},
    };
    std::vector<ElementCase> cases;
    for (const auto& [name, f] : binary) {
        cases.push_back({name, {Role::First, Role::Second}, [f = f](const Tensors& x) {
                             return f(x[0], x[1]);
                         }});
    }
    cases.push_back({"gelu_backward",
                     {Role::First, Role::Second},
                     [](const Tensors& x) { return kael::gelu_backward(x[0], x[1]); },
                     kCancelling});
    cases.push_back({"gelu_tanh_backward",
                     {Role::First, Role::Second},
                     [](const Tensors& x) { return kael::gelu_backward(x[0], x[1], true); },
                     kCancelling});
    cases.push_back({"silu_backward",
                     {Role::First, Role::Second},
                     [](const Tensors& x) { return kael::silu_backward(x[0], x[1]); },
                     kCancelling});
    cases.push_back({"where", {Role::Mask, Role::First, Role::Second}, [](const Tensors& x) {
                         return kael::where(x[0], x[1], x[2]);
                     }});
    return cases;
}

std::vector<ElementCase> masked_cases() {
    return {
        {"masked_fill",
         {Role::First, Role::Mask},
         [](const Tensors& x) { return kael::masked_fill(x[0], x[1], 7.5); }},
        {"masked_fill_nan",
         {Role::First, Role::Mask},
         [](const Tensors& x) { return kael::masked_fill(x[0], x[1], kNaN); }},
        {"masked_fill_int",
         {Role::First, Role::Mask},
         [](const Tensors& x) { return kael::masked_fill_int(x[0], x[1], 3); }},
        {"masked_fill_int_min",
         {Role::First, Role::Mask},
         [](const Tensors& x) { return kael::masked_fill_int(x[0], x[1], kI64Min); }},
        {"masked_fill_int_past_double",
         {Role::First, Role::Mask},
         [](const Tensors& x) { return kael::masked_fill_int(x[0], x[1], kPastDouble); }},
    };
}

void run_element_case(const ElementCase& c, DType first, DType second) {
    std::string dtypes = dtype_name(first);
    if (first != second) {
        dtypes.append("/").append(dtype_name(second));
    }
    for (const Layout& layout : element_layouts()) {
        BOOST_TEST_CONTEXT("op " << c.name << ", dtype " << dtypes << ", layout " << layout.name) {
            std::vector<Operand> operands;
            for (std::size_t i = 0; i < c.roles.size(); ++i) {
                const DType dtype = c.roles[i] == Role::Mask    ? DType::Bool
                                    : c.roles[i] == Role::First ? first
                                                                : second;
                const std::function<Tensor(const Tensor&)> view = [&layout, i](const Tensor& t) {
                    return layout.view(t, i);
                };
                operands.push_back({values(dtype, layout.base(i)), view});
            }
            run_and_compare(
                operands, [&](const Tensors& x) { return Tensors{c.op(x)}; }, c.tolerance);
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fill_factories) {
    const std::vector<Shape> shapes = {{}, {0}, {7}, {3, 4}, {2, 3, 5}, {1000}};
    const std::vector<double> reals = {0.0, -0.0, 2.5, -3.0, kNaN, kInf, -kInf, 1e30};
    const std::vector<std::int64_t> integers = {kI64Min, kI64Max, kPastDouble, -1, 0, 2};
    for (const DType dtype : kAllDTypes) {
        for (const Shape& shape : shapes) {
            BOOST_TEST_CONTEXT("op fill, dtype " << dtype_name(dtype) << ", shape "
                                                 << kael::to_string(shape)) {
                compare_factory([&](const kael::Device& where) {
                    return Tensors{kael::zeros(shape, dtype, where),
                                   kael::ones(shape, dtype, where),
                                   kael::scalar_tensor(-1.25, dtype, where)};
                });
                for (const double value : reals) {
                    BOOST_TEST_CONTEXT("full " << value) {
                        compare_factory([&](const kael::Device& where) {
                            return Tensors{kael::full(shape, value, dtype, where)};
                        });
                    }
                }
                for (const std::int64_t value : integers) {
                    BOOST_TEST_CONTEXT("full_int " << value) {
                        compare_factory([&](const kael::Device& where) {
                            return Tensors{kael::full_int(shape, value, dtype, where)};
                        });
                    }
                }
            }
        }
        for (const Layout& layout : element_layouts()) {
            BOOST_TEST_CONTEXT("op fill_, dtype " << dtype_name(dtype) << ", layout "
                                                  << layout.name) {
                const Shape base = layout.base(0);
                run_and_compare({{kael::zeros(base, dtype)}}, [&](const Tensors& x) {
                    Tensor target = layout.view(x[0], 0);
                    target.fill_(-6.5);
                    return Tensors{target};
                });
            }
        }
    }
}

// A seed gives the same values on every device: the core draws them on the host.
BOOST_AUTO_TEST_CASE(random_factories_follow_the_seed) {
    const Shape shape{3, 50};
    for (const DType dtype : {DType::F32, DType::F64}) {
        BOOST_TEST_CONTEXT("op rand and randn, dtype " << dtype_name(dtype)) {
            compare_factory([&](const kael::Device& where) {
                kael::manual_seed(21);
                return Tensors{kael::rand(shape, dtype, where), kael::randn(shape, dtype, where)};
            });
        }
    }
    BOOST_TEST_CONTEXT("op randint and bernoulli_mask") {
        compare_factory([&](const kael::Device& where) {
            kael::manual_seed(22);
            return Tensors{kael::randint(-5, 5, shape, where),
                           kael::bernoulli_mask(shape, 0.3, where)};
        });
    }
}

BOOST_AUTO_TEST_CASE(convert_every_dtype_pair) {
    kael::manual_seed(11);
    const std::vector<double> reals = {kNaN,
                                       kInf,
                                       -kInf,
                                       -0.0,
                                       0.0,
                                       0.5,
                                       -0.5,
                                       2.5,
                                       -2.7,
                                       1e30,
                                       -1e30,
                                       9.3e18,
                                       -9.3e18,
                                       9223372036854775807.0,
                                       -9223372036854775808.0,
                                       1e300,
                                       -1e300,
                                       1e-300,
                                       3.4028235677973366e38,
                                       16777217.0,
                                       1.0,
                                       1e-45};
    const std::vector<std::int64_t> integers = {kI64Min,
                                                kI64Max,
                                                0,
                                                -1,
                                                1,
                                                kPastDouble,
                                                -(std::int64_t{1} << 53) - 1,
                                                (std::int64_t{1} << 24) + 1,
                                                256};
    for (const DType from : kAllDTypes) {
        Tensor specials = kael::tensor_bool({true, false, true, true});
        if (from == DType::I64) {
            specials = kael::tensor(integers);
        } else if (kael::is_floating(from)) {
            specials = kael::tensor(reals).to(from);
        }
        for (const DType to : kAllDTypes) {
            BOOST_TEST_CONTEXT("op convert, dtype " << dtype_name(from) << "->" << dtype_name(to)
                                                    << ", layout specials") {
                run_and_compare({{specials}},
                                [&](const Tensors& x) { return Tensors{x[0].to(to)}; });
            }
            for (const Layout& layout : element_layouts()) {
                BOOST_TEST_CONTEXT("op convert, dtype " << dtype_name(from) << "->"
                                                        << dtype_name(to) << ", layout "
                                                        << layout.name) {
                    const Operand input{values(from, layout.base(0)),
                                        [&](const Tensor& t) { return layout.view(t, 0); }};
                    run_and_compare({input}, [&](const Tensors& x) {
                        // Also into a transposed destination: convert with a strided output.
                        const Shape& shape = x[0].shape();
                        Tensor target = kael::empty(shape, to, x[0].device());
                        if (shape.size() == 2) {
                            target = kael::empty({shape[1], shape[0]}, to, x[0].device()).T();
                        }
                        target.copy_(x[0]);
                        return Tensors{x[0].to(to), target};
                    });
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(elementwise_every_op_dtype_layout) {
    kael::manual_seed(12);
    std::vector<ElementCase> cases = unary_cases();
    for (std::vector<ElementCase> more : {binary_cases(), masked_cases()}) {
        cases.insert(cases.end(), more.begin(), more.end());
    }
    for (const ElementCase& c : cases) {
        for (const DType dtype : kAllDTypes) {
            run_element_case(c, dtype, dtype);
        }
    }
}

BOOST_AUTO_TEST_CASE(elementwise_mixed_dtypes_promote) {
    kael::manual_seed(13);
    const std::pair<DType, DType> pairs[] = {{DType::I64, DType::F32},
                                             {DType::Bool, DType::F64},
                                             {DType::F32, DType::F64},
                                             {DType::Bool, DType::I64}};
    for (const ElementCase& c : binary_cases()) {
        for (const auto& [first, second] : pairs) {
            run_element_case(c, first, second);
        }
    }
}
