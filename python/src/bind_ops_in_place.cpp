// PyTorch's in-place Tensor methods of existing ops (add_, mul_, exp_, clamp_, index_add_,
// scatter_, ...) and the out-of-place index_add/index_fill/scatter/lerp/addcmul/addcdiv.
// Python numbers become operands of the target's dtype, as PyTorch's in-place ops take them.
#include <deque>
#include <string>

#include "bind_composite_ops.h"
#include "docs_compops_inplace.h"
#include "kael/ops.h"

namespace kael::python {

namespace {

double number(py::handle object, const char* op, const char* what) {
    return to_double(object, op, what);
}

// value as a tensor on self's device: a tensor, or a number through scalar_for.
Tensor value_operand(py::handle value, const Tensor& self, const char* op) {
    return operand(value, self, op).to(self.device());
}

Tensor& scatter_any(Tensor& self, std::int64_t dim, const Tensor& index, py::handle src,
                    py::handle value, py::handle reduce) {
    if (src.is_none() == value.is_none()) {
        throw TypeError("scatter_: give exactly one of src (a tensor) or value (a number)");
    }
    const Tensor values = value_operand(src.is_none() ? value : src, self, "scatter_");
    return scatter_(self, dim, index, values,
                    reduce.is_none()
                        ? std::string()
                        : cast_argument<std::string>(reduce, "scatter_", "reduce", "a str"));
}

void bind_arithmetic(py::class_<Tensor>& cls) {
    cls.def("add_", [](Tensor& self, py::handle other, py::handle alpha) -> Tensor& {
        return add_(self, value_operand(other, self, "add_"), number(alpha, "add_", "alpha"),
                    "add_");
    }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1, docs::add_);
    cls.def("sub_", [](Tensor& self, py::handle other, py::handle alpha) -> Tensor& {
        return sub_(self, value_operand(other, self, "sub_"), number(alpha, "sub_", "alpha"),
                    "sub_");
    }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1, docs::sub_);
    cls.def("mul_", [](Tensor& self, py::handle other) -> Tensor& {
        return mul_(self, value_operand(other, self, "mul_"), "mul_");
    }, py::arg("other"), docs::mul_);
    cls.def("div_", [](Tensor& self, py::handle other, py::handle mode) -> Tensor& {
        const Tensor divisor = value_operand(other, self, "div_");
        if (mode.is_none()) return div_(self, divisor, "div_");
        // Integer division truncates: 'trunc' of integers is the plain kernel. Floats and
        // 'floor' wait for the trunc/floor ops.
        const auto rounding =
            cast_argument<std::string>(mode, "div_", "rounding_mode", "None or a str");
        if (rounding == "trunc" && !is_floating(self.dtype()) && !is_floating(divisor.dtype())) {
            return self.copy_(div(self, divisor));
        }
        throw ValueError("div_: rounding_mode '" + rounding +
                         "' is supported only as 'trunc' of integer tensors");
    }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none(), docs::div_);
    cls.def("pow_", [](Tensor& self, py::handle exponent) -> Tensor& {
        return pow_(self, value_operand(exponent, self, "pow_"));
    }, py::arg("exponent"), docs::pow_);
    // Docstrings live as long as the module: kept in a static list.
    static std::deque<std::string> unary_docs;
    // (exp_, abs_, relu_ and the other rows of kael/op_rows.h: bind_elemops.cpp)
    for (const char* name : {"neg_"}) {
        unary_docs.push_back(std::string(name) + "($self)\n--\n\n" + docs::unary_in_place);
        cls.def(name, [name = std::string(name)](Tensor& self) -> Tensor& {
            return unary_(self, name);
        }, unary_docs.back().c_str());
    }
    cls.def("clamp_", [](Tensor& self, py::handle low, py::handle high) -> Tensor& {
        const auto bound = [&](py::handle b) {
            return b.is_none() ? Tensor() : value_operand(b, self, "clamp_");
        };
        return clamp_(self, bound(low), bound(high));
    }, py::arg("min") = py::none(), py::arg("max") = py::none(), docs::clamp_);
}

void bind_indexed(py::module_& module, py::class_<Tensor>& cls) {
    const auto add = [](Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source,
                        py::handle alpha) -> Tensor& {
        return index_add_(self, dim, index, source, number(alpha, "index_add_", "alpha"));
    };
    cls.def("index_add_", add, py::arg("dim"), py::arg("index"), py::arg("source"),
            py::kw_only(), py::arg("alpha") = 1, docs::index_add_);
    const auto add_copy = [add](const Tensor& self, std::int64_t dim, const Tensor& index,
                                const Tensor& source, py::handle alpha) {
        Tensor out = self.clone();
        return add(out, dim, index, source, alpha);
    };
    module.def("index_add", add_copy, py::arg("input"), py::arg("dim"), py::arg("index"),
               py::arg("source"), py::kw_only(), py::arg("alpha") = 1, docs::index_add);
    cls.def("index_add", add_copy, py::arg("dim"), py::arg("index"), py::arg("source"),
            py::kw_only(), py::arg("alpha") = 1, docs::index_add);
    const auto fill = [](Tensor& self, std::int64_t dim, const Tensor& index,
                         py::handle value) -> Tensor& {
        return index_fill_(self, dim, index, value_operand(value, self, "index_fill_"));
    };
    cls.def("index_fill_", fill, py::arg("dim"), py::arg("index"), py::arg("value"),
            docs::index_fill_);
    const auto fill_copy = [fill](const Tensor& self, std::int64_t dim, const Tensor& index,
                                  py::handle value) {
        Tensor out = self.clone();
        return fill(out, dim, index, value);
    };
    module.def("index_fill", fill_copy, py::arg("input"), py::arg("dim"), py::arg("index"),
               py::arg("value"), docs::index_fill);
    cls.def("index_fill", fill_copy, py::arg("dim"), py::arg("index"), py::arg("value"),
            docs::index_fill);
    cls.def("scatter_", &scatter_any, py::arg("dim"), py::arg("index"),
            py::arg("src") = py::none(), py::kw_only(), py::arg("value") = py::none(),
            py::arg("reduce") = py::none(), docs::scatter_);
    const auto scatter_copy = [](const Tensor& self, std::int64_t dim, const Tensor& index,
                                 py::handle src, py::handle value, py::handle reduce) {
        Tensor out = self.clone();
        return scatter_any(out, dim, index, src, value, reduce);
    };
    module.def("scatter", scatter_copy, py::arg("input"), py::arg("dim"), py::arg("index"),
               py::arg("src") = py::none(), py::kw_only(), py::arg("value") = py::none(),
               py::arg("reduce") = py::none(), docs::scatter);
    cls.def("scatter", scatter_copy, py::arg("dim"), py::arg("index"),
            py::arg("src") = py::none(), py::kw_only(), py::arg("value") = py::none(),
            py::arg("reduce") = py::none(), docs::scatter);
}

void bind_blends(py::module_& module, py::class_<Tensor>& cls) {
    const auto blend = [](const Tensor& start, const Tensor& end, py::handle weight) {
        return lerp(start, end, value_operand(weight, start, "lerp"));
    };
    module.def("lerp", blend, py::arg("input"), py::arg("end"), py::arg("weight"), docs::lerp);
    cls.def("lerp", blend, py::arg("end"), py::arg("weight"), docs::lerp);
    cls.def("lerp_", [](Tensor& self, const Tensor& end, py::handle weight) -> Tensor& {
        return lerp_(self, end, value_operand(weight, self, "lerp_"));
    }, py::arg("end"), py::arg("weight"), docs::lerp_);
    using Combine = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, double);
    using CombineInPlace = Tensor& (*)(Tensor&, const Tensor&, const Tensor&, double);
    const auto combine = [&](const char* name, const char* name_, Combine op,
                             CombineInPlace op_, const char* doc, const char* doc_) {
        const auto out_of_place = [op, name](const Tensor& a, const Tensor& t1, const Tensor& t2,
                                             py::handle value) {
            return op(a, t1, t2, number(value, name, "value"));
        };
        module.def(name, out_of_place, py::arg("input"), py::arg("tensor1"), py::arg("tensor2"),
                   py::kw_only(), py::arg("value") = 1, doc);
        cls.def(name, out_of_place, py::arg("tensor1"), py::arg("tensor2"), py::kw_only(),
                py::arg("value") = 1, doc);
        cls.def(name_, [op_, name_](Tensor& a, const Tensor& t1, const Tensor& t2,
                                    py::handle value) -> Tensor& {
            return op_(a, t1, t2, number(value, name_, "value"));
        }, py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1, doc_);
    };
    combine("addcmul", "addcmul_", &addcmul, &addcmul_, docs::addcmul, docs::addcmul_);
    combine("addcdiv", "addcdiv_", &addcdiv, &addcdiv_, docs::addcdiv, docs::addcdiv_);
}

}  // namespace

void bind_ops_in_place(py::module_& module, py::class_<Tensor>& cls) {
    bind_arithmetic(cls);
    bind_indexed(module, cls);
    bind_blends(module, cls);
}

}  // namespace kael::python
