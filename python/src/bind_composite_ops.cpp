// The composite ops of kael/ops.h as kael.* functions and Tensor methods (shape, factories,
// selection, reductions, einsum), with PyTorch's names, signatures and result tuples
// (kael.return_types.*, as torch.return_types).
#include <cmath>
#include <limits>

#include "bind_common.h"
#include "bind_composite_ops.h"
#include "docs_compops_reduce.h"
#include "docs_compops_shape.h"
#include "kael/ops.h"

namespace kael::python {

std::optional<Shape> optional_dims(py::handle object, const char* op) {
    if (object.is_none()) return std::nullopt;
    return int_or_ints(object, op, "dim");
}

namespace {

template <typename Func, typename... Extra>
void function_and_method(py::module_& module, py::class_<Tensor>& cls, const char* name,
                         const char* doc, Func function, const Extra&... extra) {
    module.def(name, function, py::arg("input"), extra..., doc);
    cls.def(name, function, extra..., doc);
}

std::optional<std::int64_t> optional_int(py::handle object, const char* op, const char* what) {
    if (object.is_none()) return std::nullopt;
    return to_int64(object, op, what);
}

py::object unique_result(const UniqueResult& result, bool inverse, bool counts) {
    if (!inverse && !counts) return py::cast(result.values);
    py::list parts;
    parts.append(result.values);
    if (inverse) parts.append(result.inverse);
    if (counts) parts.append(result.counts);
    return py::tuple(parts);
}

void bind_shape(py::module_& module, py::class_<Tensor>& cls) {
    function_and_method(module, cls, "narrow", docs::narrow, &narrow, py::arg("dim"),
                        py::arg("start"), py::arg("length"));
    const auto move = [](const Tensor& a, py::handle source, py::handle destination) {
        return movedim(a, int_or_ints(source, "movedim", "source"),
                       int_or_ints(destination, "movedim", "destination"));
    };
    function_and_method(module, cls, "movedim", docs::movedim, move, py::arg("source"),
                        py::arg("destination"));
    function_and_method(module, cls, "moveaxis", docs::moveaxis, move, py::arg("source"),
                        py::arg("destination"));
    function_and_method(module, cls, "flatten", docs::flatten,
                        [](const Tensor& a, std::int64_t start, std::int64_t end) {
                            return flatten(a, start, end);
                        }, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
    function_and_method(module, cls, "unflatten", docs::unflatten,
                        [](const Tensor& a, std::int64_t dim, py::handle sizes) {
                            return unflatten(a, dim, int_or_ints(sizes, "unflatten", "sizes"));
                        }, py::arg("dim"), py::arg("sizes"));
    cls.def_property_readonly("T", &reversed_dims, docs::T);
    cls.def_property_readonly("mT", &matrix_transpose, docs::mT);
    function_and_method(module, cls, "squeeze", docs::squeeze, [](const Tensor& a, py::handle dim) {
        return dim.is_none() ? a.squeeze() : squeeze(a, int_or_ints(dim, "squeeze", "dim"));
    }, py::arg("dim") = py::none());
    function_and_method(module, cls, "unbind", docs::unbind, [](const Tensor& a, std::int64_t dim) {
        return py::tuple(py::cast(unbind(a, dim)));
    }, py::arg("dim") = 0);
    cls.def("view_as", &view_as, py::arg("other"), docs::view_as);
    cls.def("reshape_as", &reshape_as, py::arg("other"), docs::reshape_as);
    cls.def("expand_as", &expand_as, py::arg("other"), docs::expand_as);
    function_and_method(module, cls, "flip", docs::flip, [](const Tensor& a, py::handle dims) {
        return flip(a, int_or_ints(dims, "flip", "dims"));
    }, py::arg("dims"));
    function_and_method(module, cls, "fliplr", docs::fliplr, &fliplr);
    function_and_method(module, cls, "flipud", docs::flipud, &flipud);
    function_and_method(module, cls, "roll", docs::roll,
                        [](const Tensor& a, py::handle shifts, py::handle dims) {
        return roll(a, int_or_ints(shifts, "roll", "shifts"),
                    dims.is_none() ? Shape{} : int_or_ints(dims, "roll", "dims"));
    }, py::arg("shifts"), py::arg("dims") = py::none());
    cls.def("repeat", [](const Tensor& a, const py::args& sizes) {
        return repeat(a, to_shape(sizes, "repeat"));
    }, docs::repeat);
    function_and_method(module, cls, "tile", docs::tile, [](const Tensor& a, py::handle dims) {
        return tile(a, int_or_ints(dims, "tile", "dims"));
    }, py::arg("dims"));
    function_and_method(module, cls, "repeat_interleave", docs::repeat_interleave,
                        [](const Tensor& a, py::handle repeats, py::handle dim) {
        const auto d = optional_int(dim, "repeat_interleave", "dim");
        if (is_tensor(repeats)) return repeat_interleave(a, tensor_of(repeats), d);
        return repeat_interleave(a, to_int64(repeats, "repeat_interleave", "repeats"), d);
    }, py::arg("repeats"), py::arg("dim") = py::none());
    function_and_method(module, cls, "tril", docs::tril, &tril, py::arg("diagonal") = 0);
    function_and_method(module, cls, "triu", docs::triu, &triu, py::arg("diagonal") = 0);
}

Tensor finish_factory(const Tensor& out, bool requires_grad) {
    return requires_grad ? out.set_requires_grad(true) : out;
}

void bind_factories_more(py::module_& module) {
    module.def("eye", [](std::int64_t n, py::handle m, py::handle dtype, py::handle device,
                         bool requires_grad) {
        return finish_factory(eye(n, optional_int(m, "eye", "m"),
                                  to_optional_dtype(dtype, "eye").value_or(DType::F32),
                                  to_device(device, "eye")),
                              requires_grad);
    }, py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
       py::arg("device") = py::none(), py::arg("requires_grad") = false, docs::eye);
    module.def("linspace", [](py::handle start, py::handle end, std::int64_t steps,
                              py::handle dtype, py::handle device, bool requires_grad) {
        return finish_factory(linspace(to_double(start, "linspace", "start"),
                                       to_double(end, "linspace", "end"), steps,
                                       to_optional_dtype(dtype, "linspace").value_or(DType::F32),
                                       to_device(device, "linspace")),
                              requires_grad);
    }, py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(),
       py::arg("dtype") = py::none(), py::arg("device") = py::none(),
       py::arg("requires_grad") = false, docs::linspace);
    module.def("logspace", [](py::handle start, py::handle end, std::int64_t steps, double base,
                              py::handle dtype, py::handle device, bool requires_grad) {
        return finish_factory(logspace(to_double(start, "logspace", "start"),
                                       to_double(end, "logspace", "end"), steps, base,
                                       to_optional_dtype(dtype, "logspace").value_or(DType::F32),
                                       to_device(device, "logspace")),
                              requires_grad);
    }, py::arg("start"), py::arg("end"), py::arg("steps"), py::arg("base") = 10.0, py::kw_only(),
       py::arg("dtype") = py::none(), py::arg("device") = py::none(),
       py::arg("requires_grad") = false, docs::logspace);
}

void bind_selection(py::module_& module, py::class_<Tensor>& cls, const ReturnTypes& types) {
    function_and_method(module, cls, "nonzero", docs::nonzero, [](const Tensor& a, bool as_tuple) {
        const Tensor coordinates = nonzero(a);
        if (!as_tuple) return py::cast(coordinates);
        if (a.dim() == 0) {  // a 0-d input counts as one element, as in PyTorch
            return py::object(py::make_tuple(zeros({coordinates.size(0)}, DType::I64,
                                                   a.device())));
        }
        py::list columns;
        for (std::int64_t d = 0; d < a.dim(); ++d) columns.append(coordinates.select(1, d));
        return py::object(py::tuple(columns));
    }, py::kw_only(), py::arg("as_tuple") = false);
    function_and_method(module, cls, "argwhere", docs::argwhere, &nonzero);
    function_and_method(module, cls, "unique", docs::unique,
                        [](const Tensor& a, bool, bool inverse, bool counts, py::handle dim) {
        return unique_result(unique(a, inverse, counts, optional_int(dim, "unique", "dim")),
                             inverse, counts);
    }, py::arg("sorted") = true, py::arg("return_inverse") = false,
       py::arg("return_counts") = false, py::arg("dim") = py::none());
    function_and_method(module, cls, "unique_consecutive", docs::unique_consecutive,
                        [](const Tensor& a, bool inverse, bool counts, py::handle dim) {
        return unique_result(unique_consecutive(a, inverse, counts,
                                                optional_int(dim, "unique_consecutive", "dim")),
                             inverse, counts);
    }, py::arg("return_inverse") = false, py::arg("return_counts") = false,
       py::arg("dim") = py::none());
    function_and_method(module, cls, "bincount", docs::bincount,
                        [](const Tensor& a, py::handle weights, std::int64_t minlength) {
        return bincount(a, optional_tensor(weights, "bincount", "weights"), minlength);
    }, py::arg("weights") = py::none(), py::arg("minlength") = 0);
    function_and_method(module, cls, "median", docs::median,
                        [types](const Tensor& a, py::handle dim, bool keepdim) {
        if (dim.is_none()) return py::cast(median(a));
        const auto [values, indices] = median(a, to_int64(dim, "median", "dim"), keepdim);
        return types.median(values, indices);
    }, py::arg("dim") = py::none(), py::arg("keepdim") = false);
    function_and_method(module, cls, "kthvalue", docs::kthvalue,
                        [types](const Tensor& a, std::int64_t k, std::int64_t dim, bool keepdim) {
        const auto [values, indices] = kthvalue(a, k, dim, keepdim);
        return types.kthvalue(values, indices);
    }, py::arg("k"), py::arg("dim") = -1, py::arg("keepdim") = false);
    module.def("searchsorted", [](const Tensor& sorted, py::handle values, bool right) {
        return searchsorted(sorted, operand(values, sorted, "searchsorted"), right);
    }, py::arg("sorted_sequence"), py::arg("input"), py::kw_only(), py::arg("right") = false,
       docs::searchsorted);
}

// max/min: no dim reduces all; an int dim gives (values, indices); a tensor is elementwise.
template <typename Full, typename WithIndices, typename Elementwise>
py::object extremum(const Tensor& a, py::handle dim, bool keepdim, const char* op, Full full,
                    WithIndices with_indices, Elementwise elementwise, const py::object& type) {
    if (dim.is_none()) return py::cast(full(a, std::nullopt, keepdim));  // keepdim: all dims 1
    if (is_tensor(dim)) return py::cast(elementwise(a, tensor_of(dim)));
    const auto [values, indices] = with_indices(a, to_int64(dim, op, "dim"), keepdim);
    return type(values, indices);
}

void bind_reductions_more(py::module_& module, py::class_<Tensor>& cls,
                          const ReturnTypes& types) {
    function_and_method(module, cls, "amax", docs::amax,
                        [](const Tensor& a, py::handle dim, bool keepdim) {
        return amax(a, int_or_ints(dim, "amax", "dim"), keepdim);
    }, py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
    function_and_method(module, cls, "amin", docs::amin,
                        [](const Tensor& a, py::handle dim, bool keepdim) {
        return amin(a, int_or_ints(dim, "amin", "dim"), keepdim);
    }, py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
    function_and_method(module, cls, "aminmax", docs::aminmax,
                        [types](const Tensor& a, py::handle dim, bool keepdim) {
        const Shape dims = dim.is_none() ? Shape{} : Shape{to_int64(dim, "aminmax", "dim")};
        return types.aminmax(amin(a, dims, keepdim), amax(a, dims, keepdim));
    }, py::kw_only(), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    function_and_method(module, cls, "max", docs::max,
                        [types](const Tensor& a, py::handle dim, bool keepdim) {
        return extremum(a, dim, keepdim, "max", &max, &max_with_indices, &maximum, types.max);
    }, py::arg("dim") = py::none(), py::arg("keepdim") = false);
    function_and_method(module, cls, "min", docs::min,
                        [types](const Tensor& a, py::handle dim, bool keepdim) {
        return extremum(a, dim, keepdim, "min", &min, &min_with_indices, &minimum, types.min);
    }, py::arg("dim") = py::none(), py::arg("keepdim") = false);
    function_and_method(module, cls, "norm", docs::norm,
                        [](const Tensor& a, py::handle p, py::handle dim, bool keepdim) {
        double order = 2;
        if (py::isinstance<py::str>(p)) {
            if (p.cast<std::string>() != "fro") {
                throw ValueError("norm: p must be 'fro' or a number, got '" +
                                 p.cast<std::string>() + "'");
            }
        } else if (!p.is_none()) {
            order = to_double(p, "norm", "p");
        }
        return norm(a, order, optional_dims(dim, "norm"), keepdim);
    }, py::arg("p") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false);
    for (const bool is_std : {false, true}) {
        const char* name = is_std ? "std" : "var";
        function_and_method(
            module, cls, name, is_std ? docs::std_ : docs::var,
            [is_std, name](const Tensor& a, py::handle dim, std::int64_t correction, bool keepdim,
                           py::handle unbiased) {
                if (py::isinstance<py::bool_>(dim)) {  // the legacy form: var(unbiased)
                    unbiased = dim;
                    dim = py::none();
                }
                if (!unbiased.is_none()) {  // torch's older flag: Bessel's correction or none
                    correction = unbiased.cast<bool>() ? 1 : 0;
                }
                if (dim.is_none() || PyIndex_Check(dim.ptr())) {
                    const auto d = optional_int(dim, name, "dim");
                    return is_std ? stddev(a, d, correction, keepdim)
                                  : var(a, d, correction, keepdim);
                }
                const Shape dims = int_or_ints(dim, name, "dim");
                return is_std ? stddev(a, dims, correction, keepdim)
                              : var(a, dims, correction, keepdim);
            },
            py::arg("dim") = py::none(), py::arg("correction") = 1, py::arg("keepdim") = false,
            py::arg("unbiased") = py::none());
    }
    function_and_method(module, cls, "cumprod", docs::cumprod, &cumprod, py::arg("dim"));
    module.def("einsum", [](const std::string& equation, const py::args& operands) {
        std::vector<Tensor> tensors;
        const bool one_list = operands.size() == 1 && !is_tensor(operands[0]);
        for (const py::handle item : one_list ? py::iter(operands[0]) : py::iter(operands)) {
            tensors.push_back(tensor_argument(item, "einsum", "each operand"));
        }
        return einsum(equation, tensors);
    }, py::arg("equation"), docs::einsum);
    py::module_ linalg = module.def_submodule("_linalg", "kael.linalg's bindings");
    linalg.def("vector_norm", [](const Tensor& x, double ord, py::handle dim, bool keepdim) {
        return vector_norm(x, ord, optional_dims(dim, "vector_norm"), keepdim);
    }, py::arg("x"), py::arg("ord") = 2, py::arg("dim") = py::none(),
       py::arg("keepdim") = false, docs::vector_norm);
}

}  // namespace

void bind_composite_ops(py::module_& module) {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(module.attr("Tensor"));
    // torch.return_types: one named tuple per op, so results unpack and name their parts.
    py::module_ return_types = module.def_submodule(
        "return_types", "Named tuples of ops returning several tensors, as torch.return_types");
    const py::object namedtuple = py::module_::import("collections").attr("namedtuple");
    const auto type = [&](const char* name, const char* fields) {
        py::object made = namedtuple(name, fields);
        made.attr("__module__") = "kael.return_types";
        return_types.attr(name) = made;
        return made;
    };
    const ReturnTypes types{type("max", "values indices"), type("min", "values indices"),
                            type("median", "values indices"), type("kthvalue", "values indices"),
                            type("aminmax", "min max")};
    bind_shape(module, cls);
    bind_factories_more(module);
    bind_selection(module, cls, types);
    bind_reductions_more(module, cls, types);
    bind_ops_in_place(module, cls);
}

}  // namespace kael::python
