// The rounding, division, math, comparison and bitwise elementwise ops (kael/ops_elementwise.h)
// as kael.* functions, Tensor methods and in-place methods, and the operators % // & | ^ ~ << >>
// with their reflected and in-place forms.
#include <deque>
#include <initializer_list>
#include <string>
#include <utility>

#include "bind_common.h"
#include "docs_elemops.h"
#include "kael/ops.h"

namespace kael::python {

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);
using BinaryInPlace = Tensor& (*)(Tensor&, const Tensor&, const char*);

const docs::ElementDoc& doc_of(std::string_view name) {
    for (const docs::ElementDoc& doc : docs::kElementDocs) {
        if (name == doc.name) return doc;
    }
    throw std::logic_error("bind_elemops: no docstring for " + std::string(name));
}

// pybind11 keeps the char pointers it is given: the composed docstrings live here.
const char* keep(std::string text) {
    static std::deque<std::string> kept;
    return kept.emplace_back(std::move(text)).c_str();
}

std::string body(const docs::ElementDoc& doc) {
    return std::string(doc.text) + "\n" + docs::element_doc_arguments(doc);
}

const char* function_doc(const docs::ElementDoc& doc) {
    return keep(std::string(doc.name) + "(input" + doc.arguments + ")\n--\n\n" + body(doc) +
                "\n\nExample:\n\n    >>> kael." + doc.name + "(" + doc.example +
                doc.example_arguments + ")\n");
}

std::string method_example(const docs::ElementDoc& doc, const std::string& method) {
    std::string arguments = doc.example_arguments;
    if (arguments.starts_with(", ")) arguments.erase(0, 2);
    return "\n\nExample:\n\n    >>> " + std::string(doc.example) + "." + method + "(" +
           arguments + ")\n";
}

const char* method_doc(const docs::ElementDoc& doc) {
    return keep(std::string(doc.name) + "(self" + doc.arguments + ")\n--\n\n" + body(doc) +
                method_example(doc, doc.name));
}

const char* in_place_doc(const docs::ElementDoc& doc) {
    const std::string name = std::string(doc.name) + "_";
    std::string text = docs::kInPlaceText;
    text.replace(text.find("{name}"), 6, doc.name);
    return keep(name + "(self" + doc.arguments + ")\n--\n\n" + text +
                method_example(doc, name));
}

// kael.<name>(input, ...), Tensor.<name>(...) and, with in_place, Tensor.<name>_(...).
template <typename Function, typename InPlace, typename... Extra>
void def_op(py::module_& module, py::class_<Tensor>& cls, const char* name, Function function,
            InPlace in_place, const Extra&... extra) {
    const docs::ElementDoc& doc = doc_of(name);
    module.def(name, function, py::arg("input"), extra..., function_doc(doc));
    cls.def(name, function, extra..., method_doc(doc));
    if constexpr (!std::is_same_v<InPlace, std::nullptr_t>) {
        cls.def(keep(std::string(name) + "_"), in_place, extra..., in_place_doc(doc));
    }
}

void def_unary(py::module_& module, py::class_<Tensor>& cls, const char* name, Unary op,
               Tensor& (*in_place)(Tensor&)) {
    if (in_place == nullptr) {
        def_op(module, cls, name, op, nullptr);
        return;
    }
    def_op(module, cls, name, op, [in_place](Tensor& self) -> Tensor& { return in_place(self); });
}

void def_binary(py::module_& module, py::class_<Tensor>& cls, const char* name, Binary op,
                BinaryInPlace in_place) {
    def_op(module, cls, name, [op, name](py::handle a, py::handle b) {
        auto [left, right] = operands(a, b, name);
        return op(left, right);
    }, [in_place, name](Tensor& self, py::handle other) -> Tensor& {
        const std::string op_name = std::string(name) + "_";
        return in_place(self, operand(other, self, name), keep(op_name));
    }, py::arg("other"));
}

// kael.<name>(input, other) and Tensor.<name>(other), with no in-place form here.
void def_binary_function(py::module_& module, py::class_<Tensor>& cls, const char* name, Binary op) {
    def_op(module, cls, name, [op, name](py::handle a, py::handle b) {
        auto [left, right] = operands(a, b, name);
        return op(left, right);
    }, nullptr, py::arg("other"));
}

bool is_operand(py::handle other) { return is_tensor(other) || is_python_scalar(other); }

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// a op b and its reflected form b op a, NotImplemented for operands kael does not know (so
// Python asks the other one), and a op= b keeping a's identity.
void def_operator(py::class_<Tensor>& cls, const char* forward, const char* reflected,
                  const char* in_place_name, const char* symbol, Binary op,
                  BinaryInPlace in_place) {
    cls.def(forward, [op, symbol](py::handle a, py::handle b) -> py::object {
        if (!is_operand(b)) return not_implemented();
        auto [left, right] = operands(a, b, symbol);
        return py::cast(op(left, right));
    }, py::is_operator());
    cls.def(reflected, [op, symbol](py::handle a, py::handle b) -> py::object {
        if (!is_operand(b)) return not_implemented();
        auto [left, right] = operands(b, a, symbol);
        return py::cast(op(left, right));
    }, py::is_operator());
    const std::string assigning = std::string(symbol) + "=";
    cls.def(in_place_name, [in_place, symbol = keep(assigning)](const py::object& self,
                                                                py::handle other) -> py::object {
        if (!is_operand(other)) return not_implemented();
        auto& target = self.cast<Tensor&>();
        in_place(target, operand(other, target, symbol), symbol);
        return self;
    }, py::is_operator());
}

}  // namespace

void bind_elemops(py::module_& module) {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(module.attr("Tensor"));
#define KAEL_BIND_ROUNDING(name, OP) def_unary(module, cls, #name, name, name##_);
    KAEL_ROUNDING_FUNCTIONS(KAEL_BIND_ROUNDING)
#undef KAEL_BIND_ROUNDING
    def_unary(module, cls, "frac", frac, frac_);
    def_op(module, cls, "round", [](const Tensor& input, std::int64_t decimals) {
        return round(input, decimals);
    }, [](Tensor& self, std::int64_t decimals) -> Tensor& { return round_(self, decimals); },
           py::kw_only(), py::arg("decimals") = 0);
#define KAEL_BIND_CLASSIFY(name, OP, INTEGERS) def_unary(module, cls, #name, name, nullptr);
    KAEL_CLASSIFY_FUNCTIONS(KAEL_BIND_CLASSIFY)
#undef KAEL_BIND_CLASSIFY
    def_op(module, cls, "nan_to_num", [](const Tensor& input, double nan,
                                         std::optional<double> posinf,
                                         std::optional<double> neginf) {
        return nan_to_num(input, nan, posinf, neginf);
    }, [](Tensor& self, double nan, std::optional<double> posinf,
          std::optional<double> neginf) -> Tensor& {
        return nan_to_num_(self, nan, posinf, neginf);
    }, py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());
#define KAEL_BIND_UNARY(name, OP) def_unary(module, cls, #name, name, name##_);
    KAEL_FLOAT_MATH_FUNCTIONS(KAEL_BIND_UNARY)
    KAEL_NUMERIC_UNARY_FUNCTIONS(KAEL_BIND_UNARY)
#undef KAEL_BIND_UNARY
    // The arithmetic operators' functions; their in-place forms and operators take Python
    // numbers their own way (bind_ops_in_place.cpp, bind_tensor.cpp).
#define KAEL_BIND_ARITHMETIC(name, OP, RULE) def_binary_function(module, cls, #name, name);
    KAEL_ARITHMETIC_FUNCTIONS(KAEL_BIND_ARITHMETIC)
#undef KAEL_BIND_ARITHMETIC
    def_unary(module, cls, "neg", neg, nullptr);  // neg_: bind_ops_in_place.cpp
    def_unary(module, cls, "logical_not", logical_not, nullptr);
#define KAEL_BIND_COMPARISON(name, OP, OPERATOR) def_binary_function(module, cls, #name, name);
    KAEL_COMPARISON_FUNCTIONS(KAEL_BIND_COMPARISON)
#undef KAEL_BIND_COMPARISON
    // The test suites iterate the same rows.
    module.def("_op_rows", [] {
        py::dict rows;
        const auto family = [&rows](const char* key, std::initializer_list<const char*> names) {
            py::list list;
            for (const char* name : names) list.append(name);
            rows[key] = list;
        };
#define KAEL_ROW_NAME(name, ...) #name,
        family("float_math", {KAEL_FLOAT_MATH_FUNCTIONS(KAEL_ROW_NAME)});
        family("numeric", {KAEL_NUMERIC_UNARY_FUNCTIONS(KAEL_ROW_NAME)});
        family("rounding", {KAEL_ROUNDING_FUNCTIONS(KAEL_ROW_NAME)});
        family("classify", {KAEL_CLASSIFY_FUNCTIONS(KAEL_ROW_NAME)});
        family("comparison", {KAEL_COMPARISON_FUNCTIONS(KAEL_ROW_NAME)});
        family("arithmetic", {KAEL_ARITHMETIC_FUNCTIONS(KAEL_ROW_NAME)});
#undef KAEL_ROW_NAME
        return rows;
    }, "The front end's op rows by family (kael/op_rows.h), as the test suites iterate them.");
    def_unary(module, cls, "silu", silu, silu_);
    def_unary(module, cls, "bitwise_not", bitwise_not, bitwise_not_);
    def_binary(module, cls, "fmod", fmod, fmod_);
    def_binary(module, cls, "remainder", remainder, remainder_);
    def_binary(module, cls, "floor_divide", floor_divide, floor_divide_);
    def_binary(module, cls, "bitwise_and", bitwise_and, bitwise_and_);
    def_binary(module, cls, "bitwise_or", bitwise_or, bitwise_or_);
    def_binary(module, cls, "bitwise_xor", bitwise_xor, bitwise_xor_);
    def_binary(module, cls, "bitwise_left_shift", bitwise_left_shift, bitwise_left_shift_);
    def_binary(module, cls, "bitwise_right_shift", bitwise_right_shift, bitwise_right_shift_);
    def_operator(cls, "__mod__", "__rmod__", "__imod__", "%", remainder, remainder_);
    def_operator(cls, "__floordiv__", "__rfloordiv__", "__ifloordiv__", "//", floor_divide,
                 floor_divide_);
    def_operator(cls, "__and__", "__rand__", "__iand__", "&", bitwise_and, bitwise_and_);
    def_operator(cls, "__or__", "__ror__", "__ior__", "|", bitwise_or, bitwise_or_);
    def_operator(cls, "__xor__", "__rxor__", "__ixor__", "^", bitwise_xor, bitwise_xor_);
    def_operator(cls, "__lshift__", "__rlshift__", "__ilshift__", "<<", bitwise_left_shift,
                 bitwise_left_shift_);
    def_operator(cls, "__rshift__", "__rrshift__", "__irshift__", ">>", bitwise_right_shift,
                 bitwise_right_shift_);
    cls.def("__invert__", [](const Tensor& a) { return bitwise_not(a); });
}

}  // namespace kael::python
