// Every op of kael/ops.h as a kael.* function, and as a Tensor method where PyTorch
// has one. Python numbers are accepted wherever a tensor operand is.
#include <algorithm>
#include <limits>

#include "bind_common.h"
#include "bind_composite_ops.h"
#include "docs_fused.h"
#include "docs_functions.h"
#include "kael/ops.h"

namespace kael::python {

namespace {

// Binds op as kael.<name>(input, ...) and Tensor.<name>(...), sharing the keyword names.
// The function takes its docstring from docs_functions.h (none when it has none there), the
// method one that points to the function.
template <typename Func, typename... Extra>
void def_function_and_method(py::module_& module, py::class_<Tensor>& cls, const char* name,
                             Func function, const Extra&... extra) {
    module.def(name, function, py::arg("input"), extra..., docs::by_name(name));
    cls.def(name, function, extra..., docs::method_of(name).c_str());
}

std::optional<std::int64_t> optional_dim(py::handle dim, const char* op) {
    if (dim.is_none()) return std::nullopt;
    return to_int64(dim, op, "dim");
}

// sum and mean also take a tuple of dims (the core checks and orders them).
template <typename Reduce>
Tensor reduce_dims(const Tensor& input, py::handle dim, bool keepdim, const char* op,
                   Reduce reduce) {
    using OneDim = std::optional<std::int64_t>;
    if (dim.is_none()) {
        Tensor out = reduce(input, OneDim{}, false);
        return keepdim ? out.reshape(Shape(static_cast<std::size_t>(input.dim()), 1)) : out;
    }
    if (PyIndex_Check(dim.ptr())) return reduce(input, OneDim(to_int64(dim, op, "dim")), keepdim);
    if (!PySequence_Check(dim.ptr())) {
        throw TypeError(std::string(op) + ": dim must be an int or a tuple of ints, got " +
                        type_name(dim));
    }
    Shape dims;
    for (const py::handle d : py::iter(dim)) {  // py::iter checks for errors
        dims.push_back(to_int64(d, op, "dim"));
    }
    return reduce(input, dims, keepdim);
}

// (values, indices) results are a namedtuple, as in PyTorch.
py::object values_indices(const py::object& tuple_type, const std::pair<Tensor, Tensor>& result) {
    return tuple_type(result.first, result.second);
}

Reduction parse_reduction(const std::string& name) {
    if (name == "mean") return Reduction::Mean;
    if (name == "sum") return Reduction::Sum;
    if (name == "none") return Reduction::None;
    throw py::value_error("cross_entropy: reduction must be 'mean', 'sum' or 'none', got '" +
                          name + "'");
}

// Tensor bounds clamp elementwise (with broadcasting), as maximum and minimum do.
Tensor clamp_by_tensors(const Tensor& input, py::handle low, py::handle high) {
    Tensor out = input;
    if (!low.is_none()) out = maximum(out, operand(low, input, "clamp"));
    if (!high.is_none()) out = minimum(out, operand(high, input, "clamp"));
    return out;
}

// Number bounds promote like the weak scalars of a binary op (PyTorch's rule): an int tensor
// clamped to 1.5 becomes float32, never a bound cut to an int.
Tensor clamp_any(const Tensor& input, py::handle low, py::handle high) {
    if (low.is_none() && high.is_none()) {
        throw ValueError("clamp: at least one of min and max must not be None");
    }
    if (py::isinstance<Tensor>(low) || py::isinstance<Tensor>(high)) {
        return clamp_by_tensors(input, low, high);
    }
    DType dtype = input.dtype();
    for (const py::handle bound : {low, high}) {
        if (!bound.is_none()) dtype = promote(dtype, scalar_for(bound, input, "clamp").dtype());
    }
    const Tensor promoted = input.to(dtype);
    if (is_floating(dtype)) {
        const double infinity = std::numeric_limits<double>::infinity();
        return clamp(promoted, low.is_none() ? -infinity : to_double(low, "clamp", "min"),
                     high.is_none() ? infinity : to_double(high, "clamp", "max"));
    }
    using Limits = std::numeric_limits<std::int64_t>;
    return clamp_int(promoted, low.is_none() ? Limits::min() : to_int64(low, "clamp", "min"),
                     high.is_none() ? Limits::max() : to_int64(high, "clamp", "max"));
}

Tensor masked_fill_any(const Tensor& input, const Tensor& mask, py::handle value) {
    if (input.dtype() == DType::I64 && is_integral_number(value)) {
        return masked_fill_int(input, mask, to_int64(value, "masked_fill", "value"));
    }
    return masked_fill(input, mask, to_double(value, "masked_fill", "value"));
}

void bind_elementwise(py::module_& module, py::class_<Tensor>& cls) {
    // add ... minimum, neg, logical_not and the comparison rows (kael/op_rows.h) are bound with
    // their docstrings in bind_elemops.cpp.
    def_function_and_method(module, cls, "gelu", [](const Tensor& input, py::handle approximate) {
        return gelu(input, gelu_uses_tanh(approximate));
    }, py::arg("approximate") = "none");
    module.def("relu_backward", &relu_backward, py::arg("input"), py::arg("grad"));
    module.def("sigmoid_backward", &sigmoid_backward, py::arg("input"), py::arg("grad"));
    module.def("where", [](const Tensor& condition, py::handle input, py::handle other) {
        auto [a, b] = operands(input, other, "where");
        return where(condition, a, b);
    }, py::arg("condition"), py::arg("input"), py::arg("other"),
       docs::by_name("where"));
    def_function_and_method(module, cls, "clamp", &clamp_any, py::arg("min") = py::none(),
                            py::arg("max") = py::none());
    def_function_and_method(module, cls, "masked_fill", &masked_fill_any, py::arg("mask"),
                            py::arg("value"));
    cls.def("masked_fill_", [](Tensor& self, const Tensor& mask, py::handle value) -> Tensor& {
        return masked_fill_(self, mask, scalar_for(value, self, "masked_fill_"));
    }, py::arg("mask"), py::arg("value"), docs::tensor("masked_fill_"));
    def_function_and_method(module, cls, "allclose", [](const Tensor& a, const Tensor& b,
                                                         double rtol, double atol,
                                                         bool equal_nan) {
        return allclose(a, b, rtol, atol, equal_nan);
    }, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
       py::arg("equal_nan") = false);
}

void bind_reductions(py::module_& module, py::class_<Tensor>& cls) {
    // dtype=: the input converted first and the result of that dtype, as PyTorch's
    // (x.sum(dtype=kael.float32) of int8 data).
    const auto as_dtype = [](const Tensor& a, py::handle dtype, const char* op) {
        return dtype.is_none() ? a : a.to(to_dtype(dtype, op));
    };
    const auto of_dtype = [](const Tensor& result, py::handle dtype) {
        return dtype.is_none() ? result : result.to(dtype.cast<DType>());
    };
    def_function_and_method(module, cls, "sum", [as_dtype, of_dtype](const Tensor& a,
                                                                     py::handle dim, bool keep,
                                                                     py::handle dtype) {
        return of_dtype(reduce_dims(as_dtype(a, dtype, "sum"), dim, keep, "sum", [](const Tensor& t,
                                                                           auto d, bool k) {
            if constexpr (std::is_same_v<decltype(d), Shape>) {
                return sum(t, d, k);
            } else {
                return d ? sum(t, *d, k) : sum(t);
            }
        }), dtype);
    }, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
       py::arg("dtype") = py::none());
    def_function_and_method(module, cls, "mean", [as_dtype](const Tensor& a, py::handle dim,
                                                            bool keep, py::handle dtype) {
        return reduce_dims(as_dtype(a, dtype, "mean"), dim, keep, "mean", [](const Tensor& t,
                                                                             auto d, bool k) {
            if constexpr (std::is_same_v<decltype(d), Shape>) {
                return mean(t, d, k);
            } else {
                return d ? mean(t, *d, k) : mean(t);
            }
        });
    }, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
       py::arg("dtype") = py::none());
    using DimReduction = Tensor (*)(const Tensor&, std::optional<std::int64_t>, bool);
    const auto by_dim = [&](const char* name, DimReduction op) {
        def_function_and_method(module, cls, name, [op, name](const Tensor& a, py::handle dim,
                                                              bool keepdim) {
            return op(a, optional_dim(dim, name), keepdim);
        }, py::arg("dim") = py::none(), py::arg("keepdim") = false);
    };
    def_function_and_method(module, cls, "prod", [as_dtype, of_dtype](const Tensor& a,
                                                                      py::handle dim, bool keepdim,
                                                                      py::handle dtype) {
        return of_dtype(prod(as_dtype(a, dtype, "prod"), optional_dim(dim, "prod"), keepdim),
                        dtype);
    }, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
       py::arg("dtype") = py::none());
    by_dim("argmax", &argmax);
    by_dim("argmin", &argmin);
    by_dim("all", &all);
    by_dim("any", &any);
    // max, min, var, std and norm: bind_composite_ops.cpp (dims tuples, return_types).
    def_function_and_method(module, cls, "logsumexp", [](const Tensor& a, py::handle dim,
                                                         bool keepdim) {
        return logsumexp(a, int_or_ints(dim, "logsumexp", "dim"), keepdim);
    }, py::arg("dim"), py::arg("keepdim") = false);
}

void bind_indexing_and_linear_algebra(py::module_& module, py::class_<Tensor>& cls) {
    def_function_and_method(module, cls, "matmul", &matmul, py::arg("other"));
    def_function_and_method(module, cls, "gather", &gather, py::arg("dim"), py::arg("index"));
    def_function_and_method(module, cls, "index_select", &index_select, py::arg("dim"),
                            py::arg("index"));
    def_function_and_method(module, cls, "scatter_add_", [](Tensor& data, std::int64_t dim,
                                                            const Tensor& index,
                                                            const Tensor& source) -> Tensor& {
        return scatter_add_(data, dim, index, source);
    }, py::arg("dim"), py::arg("index"), py::arg("src"));
    def_function_and_method(module, cls, "scatter_add", [](const Tensor& data, std::int64_t dim,
                                                           const Tensor& index,
                                                           const Tensor& source) {
        Tensor out = data.clone();
        return scatter_add_(out, dim, index, source);
    }, py::arg("dim"), py::arg("index"), py::arg("src"));
}

void bind_nn_functions(py::module_& module, py::class_<Tensor>& cls) {
    def_function_and_method(module, cls, "softmax", &softmax, py::arg("dim"));
    def_function_and_method(module, cls, "log_softmax", &log_softmax, py::arg("dim"));
    module.def("cross_entropy", [](const Tensor& logits, const Tensor& targets,
                                   const std::string& reduction) {
        return cross_entropy(logits, targets, parse_reduction(reduction));
    }, py::arg("input"), py::arg("target"), py::arg("reduction") = "mean",
       docs::fused::cross_entropy);
    module.def("layer_norm", [](const Tensor& x, py::handle weight, py::handle bias, double eps) {
        return layer_norm(x, optional_tensor(weight, "layer_norm", "weight"),
                          optional_tensor(bias, "layer_norm", "bias"), eps);
    }, py::arg("input"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
       py::arg("eps") = 1e-5, docs::fused::layer_norm);
    module.def("embedding", &embedding, py::arg("weight"), py::arg("indices"),
               docs::fused::embedding);
    module.def("dropout", &dropout, py::arg("input"), py::arg("p") = 0.5,
               py::arg("training") = true, docs::fused::dropout);
    module.def("scaled_dot_product_attention", [](const Tensor& query, const Tensor& key,
                                                  const Tensor& value, bool is_causal,
                                                  std::optional<double> scale) {
        return scaled_dot_product_attention(query, key, value, is_causal, scale);
    }, py::arg("query"), py::arg("key"), py::arg("value"), py::arg("is_causal") = false,
       py::arg("scale") = py::none(), docs::fused::scaled_dot_product_attention);
    module.def("linear", [](const Tensor& x, const Tensor& weight, py::handle bias) {
        return linear(x, weight, optional_tensor(bias, "linear", "bias"));
    }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), docs::fused::linear);
}

void bind_joins_and_sequences(py::module_& module, py::class_<Tensor>& cls) {
    const py::object tuple_type = py::module_::import("collections")
                                      .attr("namedtuple")("values_indices", "values indices");
    module.attr("values_indices") = tuple_type;
    module.def("cat", &cat, py::arg("tensors"), py::arg("dim") = 0,
               docs::by_name("cat"));
    module.def("stack", &stack, py::arg("tensors"), py::arg("dim") = 0,
               docs::by_name("stack"));
    // torch.split: an int (piece size) or a list of sizes; a tuple of views either way.
    def_function_and_method(module, cls, "split", [](const Tensor& a, py::handle sizes,
                                                     std::int64_t dim) {
        const std::vector<Tensor> pieces =
            is_integral_number(sizes)
                ? split(a, to_int64(sizes, "split", "split_size_or_sections"), dim)
                : split(a, int_sequence(sizes, "split", "split_size_or_sections"), dim);
        return py::tuple(py::cast(pieces));
    }, py::arg("split_size_or_sections"), py::arg("dim") = 0);
    def_function_and_method(module, cls, "chunk", [](const Tensor& a, std::int64_t chunks,
                                                     std::int64_t dim) {
        return py::tuple(py::cast(chunk(a, chunks, dim)));
    }, py::arg("chunks"), py::arg("dim") = 0);
    def_function_and_method(module, cls, "sort", [tuple_type](const Tensor& a, std::int64_t dim,
                                                              bool descending) {
        return values_indices(tuple_type, sort(a, dim, descending));
    }, py::arg("dim") = -1, py::arg("descending") = false);
    def_function_and_method(module, cls, "argsort", &argsort, py::arg("dim") = -1,
                            py::arg("descending") = false);
    def_function_and_method(module, cls, "topk", [tuple_type](const Tensor& a, std::int64_t k,
                                                              std::int64_t dim, bool largest) {
        return values_indices(tuple_type, topk(a, k, dim, largest));
    }, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true);
    def_function_and_method(module, cls, "cumsum", &cumsum, py::arg("dim"));
}

}  // namespace

void bind_ops(py::module_& module) {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(module.attr("Tensor"));
    bind_elementwise(module, cls);
    bind_reductions(module, cls);
    bind_indexing_and_linear_algebra(module, cls);
    bind_nn_functions(module, cls);
    bind_joins_and_sequences(module, cls);
}

}  // namespace kael::python
