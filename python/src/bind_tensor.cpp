// kael.Tensor: properties, host conversions, indexing, views, copies and Python operators.
#include <algorithm>

#include "bind_common.h"
#include "docs_functions.h"
#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

namespace kael::python {

namespace {

bool is_operand(py::handle other) {
    return is_tensor(other) || is_python_scalar(other);
}

// A binary operator: NotImplemented for operands it does not know, so Python tries the other
// side (numpy arrays, for instance).
template <typename Op> py::object binary(py::handle a, py::handle b, const char* name, Op op) {
    if (!is_operand(a) || !is_operand(b)) {
        return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    }
    auto [left, right] = operands(a, b, name);
    return py::cast(op(left, right));
}

// In-place operators keep the tensor's identity: the result is written into its elements.
template <typename Op>
py::object in_place(const py::object& self, py::handle other, const char* name, Op op) {
    if (!is_operand(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    auto& target = self.cast<Tensor&>();
    op(target, operand(other, target, name));
    return self;
}

py::tuple shape_tuple(const Shape& shape) { return py::cast(shape); }

}  // namespace

// to(dtype), to(device), to('cuda'), to(device, dtype), to(other), to(dtype=..., device=...).
std::pair<std::optional<Device>, std::optional<DType>> to_arguments(const py::args& args,
                                                                    const py::kwargs& kwargs,
                                                                    const char* op) {
    std::optional<DType> dtype;
    std::optional<Device> device;
    const auto take = [&](py::handle value) {
        if (value.is_none()) return;
        if (py::isinstance<Tensor>(value)) {  // .to(other): other's dtype and device
            dtype = value.cast<Tensor>().dtype();
            device = value.cast<Tensor>().device();
        } else if (py::isinstance<Device>(value)) {
            device = value.cast<Device>();
        } else if (py::isinstance<py::str>(value)) {
            // A device when its type part is a type some plugin declares, else a dtype name.
            const std::string text = value.cast<std::string>();
            const std::vector<std::string> types = registered_device_types();
            if (std::find(types.begin(), types.end(), text.substr(0, text.find(':'))) !=
                types.end()) {
                device = Device(text);
            } else {
                try {
                    dtype = to_dtype(value, op);
                } catch (const std::exception& error) {
                    std::string names;
                    for (const std::string& type : types) {
                        names += (names.empty() ? "'" : ", '") + type + "'";
                    }
                    throw ValueError(std::string(op) + ": '" + text + "' is neither a dtype (" +
                                     error.what() + ") nor a registered device type (" + names +
                                     ")");
                }
            }
        } else {
            dtype = to_dtype(value, op);
        }
    };
    for (const py::handle arg : args) take(arg);
    // None keeps the device or the dtype, as a positional None does (and as in PyTorch).
    if (kwargs.contains("device") && !kwargs["device"].is_none()) {
        device = to_device(kwargs["device"], op);
    }
    if (kwargs.contains("dtype")) dtype = to_optional_dtype(kwargs["dtype"], op);
    return {device, dtype};
}

namespace {

// .to(self, ...): the device and dtype to_arguments reads.
Tensor convert(const Tensor& self, const py::args& args, const py::kwargs& kwargs) {
    const auto [device, dtype] = to_arguments(args, kwargs, "to");
    Tensor out = self;
    if (device) out = out.to(*device);
    if (dtype) out = out.to(*dtype);
    return out;
}

Shape expand_sizes(const Tensor& self, const Shape& sizes) {
    Shape shape = sizes;
    const auto lead = static_cast<std::int64_t>(sizes.size()) - self.dim();
    const auto rank = static_cast<std::int64_t>(shape.size());
    for (std::int64_t i = std::max<std::int64_t>(lead, 0); i < rank; ++i) {
        if (shape[i] == -1) shape[i] = self.size(i - lead);  // -1 keeps the size, as in PyTorch
    }
    return shape;
}

void bind_properties(py::class_<Tensor>& cls) {
    // torch.Tensor's two forms: sizes (kael zeroes the elements PyTorch leaves unset) or one data
    // argument copied, both float32 (the default dtype) unless dtype is given.
    cls.def(py::init([](const py::args& args, py::handle dtype, py::handle device) {
               const DType wanted = to_optional_dtype(dtype, "Tensor").value_or(DType::F32);
               const Device where = to_device(device, "Tensor");
               const auto is_size = [](py::handle h) {
                   return py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h);
               };
               if (std::all_of(args.begin(), args.end(), is_size)) {
                   Shape shape;
                   for (const py::handle size : args) {
                       shape.push_back(size.cast<std::int64_t>());
                       if (shape.back() < 0) {
                           throw ValueError("Tensor: negative size " +
                                            std::to_string(shape.back()) + " in " +
                                            to_string(shape));
                       }
                   }
                   return zeros(args.empty() ? Shape{0} : shape, wanted, where);
               }
               if (args.size() != 1) {
                   throw TypeError("Tensor: expected sizes (ints) or one data argument, got " +
                                   std::to_string(args.size()) + " arguments");
               }
               return tensor_from_data(args[0], wanted, where);
           }),
           py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
           docs::tensor("__init__"))
        .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); },
                               docs::tensor("shape"))
        .def_property_readonly("dtype", &Tensor::dtype, docs::tensor("dtype"))
        .def_property_readonly("device", [](const Tensor& t) { return t.device(); },
                               docs::tensor("device"))
        .def_property_readonly("ndim", &Tensor::dim, docs::tensor("ndim"))
        .def_property_readonly("is_cuda", [](const Tensor& t) { return !t.device().is_cpu(); },
                               docs::tensor("is_cuda"))
        .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); },
                               docs::tensor("is_cpu"))
        .def_property_readonly("itemsize", [](const Tensor& t) { return itemsize(t.dtype()); },
                               docs::tensor("itemsize"))
        .def_property_readonly("nbytes", &Tensor::nbytes, docs::tensor("nbytes"))
        .def("dim", &Tensor::dim, docs::tensor("dim"))
        .def("numel", &Tensor::numel, docs::tensor("numel"))
        .def("size", [](const Tensor& t, py::handle dim) -> py::object {
            if (dim.is_none()) return shape_tuple(t.shape());
            return py::int_(t.size(to_int64(dim, "size", "dim")));
        }, py::arg("dim") = py::none(), docs::tensor("size"))
        .def("stride", [](const Tensor& t) { return shape_tuple(t.strides()); },
             docs::tensor("stride"))
        .def("storage_offset", &Tensor::offset, docs::tensor("storage_offset"))
        .def("is_contiguous", &Tensor::is_contiguous, docs::tensor("is_contiguous"))
        .def("data_ptr", [](const Tensor& t) {
            return reinterpret_cast<std::uintptr_t>(t.device_data());
        }, docs::tensor("data_ptr"))
        .def("__len__", [](const Tensor& t) {
            if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
            return t.size(0);
        })
        // Without __iter__ Python would iterate through __getitem__ and take the IndexError of
        // t[0] on a 0-d tensor for the end: list(kael.tensor(1.)) would be [].
        .def("__iter__", [](const Tensor& t) {
            if (t.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
            py::list rows;
            for (std::int64_t i = 0; i < t.size(0); ++i) rows.append(t.select(0, i));
            return py::iter(rows);
        })
        .def("__hash__", [](const Tensor& t) {
            return reinterpret_cast<std::uintptr_t>(t.impl_ptr().get());
        })
        .def("_str", &Tensor::str)
        .def("numpy", &to_numpy, docs::tensor("numpy"))
        .def("__array__", [](const Tensor& t, py::handle dtype, py::handle) {
            // numpy's implicit conversion (w * ndarray, np.asarray(w)) would drop w's gradient
            // path without a word: refused, as PyTorch refuses it. An explicit .numpy() copies.
            if (t.requires_grad()) {
                throw std::runtime_error(
                    "__array__: cannot convert a tensor that requires grad to a numpy array; "
                    "use tensor.detach().numpy()");
            }
            py::object array = to_numpy(t);
            return dtype.is_none() ? array : array.attr("astype")(dtype);
        }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
        .def("tolist", &to_list, docs::tensor("tolist"))
        .def("item", &to_item, docs::tensor("item"))
        .def("__float__", [](const Tensor& t) { return to_item(t).cast<double>(); })
        .def("__int__", [](const Tensor& t) { return py::int_(to_item(t)); })
        .def("__index__", [](const Tensor& t) {
            if (is_floating(t.dtype())) {
                throw py::type_error("only integer tensors of one element can be an index");
            }
            return py::int_(to_item(t));
        })
        .def("__bool__", [](const Tensor& t) {
            if (t.numel() != 1) {
                throw py::value_error("the truth value of a tensor with more than one element "
                                      "is ambiguous; use any() or all()");
            }
            return PyObject_IsTrue(to_item(t).ptr()) == 1;
        })
        .def("__getitem__", &get_item)
        .def("__setitem__", &set_item);
    cls.attr("__array_priority__") = 1000;  // numpy defers to Tensor's reflected operators
}

void bind_views_and_copies(py::class_<Tensor>& cls) {
    cls.def("view", [](const Tensor& t, const py::args& s) { return t.view(to_shape(s, "view")); },
            docs::tensor("view"))
        .def("reshape", [](const Tensor& t, const py::args& s) {
            return t.reshape(to_shape(s, "reshape"));
        }, docs::tensor("reshape"))
        .def("transpose", &Tensor::transpose, py::arg("dim0"), py::arg("dim1"),
             docs::tensor("transpose"))
        .def("t", &Tensor::T, docs::tensor("t"))
        .def("permute", [](const Tensor& t, const py::args& s) {
            return t.permute(to_shape(s, "permute"));
        }, docs::tensor("permute"))
        .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"), docs::tensor("unsqueeze"))
        .def("expand", [](const Tensor& t, const py::args& s) {
            return t.expand(expand_sizes(t, to_shape(s, "expand")));
        }, docs::tensor("expand"))
        .def("slice", &Tensor::slice, py::arg("dim"), py::arg("start"), py::arg("stop"),
             py::arg("step") = 1, docs::tensor("slice"))
        .def("select", &Tensor::select, py::arg("dim"), py::arg("index"), docs::tensor("select"))
        .def("as_strided", &Tensor::as_strided, py::arg("size"), py::arg("stride"),
             py::arg("storage_offset") = 0, docs::tensor("as_strided"))
        .def("contiguous", &Tensor::contiguous, docs::tensor("contiguous"))
        .def("clone", &Tensor::clone, docs::tensor("clone"))
        .def("detach", &Tensor::detach, docs::tensor("detach"))
        .def("to", &convert, docs::tensor("to"))
        .def("cuda", [](const Tensor& t, int index) { return t.cuda(index); },
             py::arg("index") = 0, docs::tensor("cuda"))
        .def("cpu", &Tensor::cpu, docs::tensor("cpu"))
        .def("float", [](const Tensor& t) { return t.to(DType::F32); }, docs::tensor("float"))
        .def("double", [](const Tensor& t) { return t.to(DType::F64); }, docs::tensor("double"))
        .def("half", [](const Tensor& t) { return t.to(DType::F16); }, docs::tensor("half"))
        .def("bfloat16", [](const Tensor& t) { return t.to(DType::BF16); },
             docs::tensor("bfloat16"))
        .def("long", [](const Tensor& t) { return t.to(DType::I64); }, docs::tensor("long"))
        .def("bool", [](const Tensor& t) { return t.to(DType::Bool); }, docs::tensor("bool"))
        .def("copy_", [](Tensor& t, py::handle source) -> Tensor& {
            return t.copy_(operand(source, t, "copy_"));
        }, py::arg("source"), docs::tensor("copy_"))
        .def("fill_", [](Tensor& t, py::handle value) -> Tensor& {
            // A number or a one-element tensor, from any device as in PyTorch. A float written
            // into an integer tensor goes through fill_(double), which refuses what int64
            // cannot hold (nan, inf, 1e20) instead of converting it.
            if (py::isinstance<py::float_>(value) && !is_floating(t.dtype())) {
                return t.fill_(value.cast<double>());
            }
            return t.fill_(operand(value, t, "fill_").to(t.device()));
        }, py::arg("value"), docs::tensor("fill_"))
        .def("zero_", [](Tensor& t) -> Tensor& { return t.fill_(0); }, docs::tensor("zero_"))
        .def("move_to_", [](Tensor& t, py::handle d) -> Tensor& {
            return t.move_to_(to_device(d, "move_to_"));
        }, py::arg("device"), docs::tensor("move_to_"))
        .def("pin_memory", [](py::object self, py::handle d) -> py::object {
            const auto& t = self.cast<const Tensor&>();
            const Tensor pinned =
                d.is_none() ? t.pin_memory() : t.pin_memory(to_device(d, "pin_memory"));
            return pinned.same_impl(t) ? self : py::cast(pinned);  // self when already pinned
        }, py::arg("device") = py::none(), docs::tensor("pin_memory"))
        .def("is_pinned", [](const Tensor& t, py::handle /*device*/) { return t.is_pinned(); },
             py::arg("device") = py::none(), docs::tensor("is_pinned"));
}

void bind_operators(py::class_<Tensor>& cls) {
    const auto def_binary = [&cls](const char* name, const char* reflected, auto op) {
        cls.def(name, [op, name](py::handle a, py::handle b) { return binary(a, b, name, op); },
                py::is_operator());
        if (reflected != nullptr) {
            cls.def(reflected, [op, name](py::handle a, py::handle b) {
                return binary(b, a, name, op);
            }, py::is_operator());
        }
    };
    def_binary("__add__", "__radd__", [](const Tensor& a, const Tensor& b) { return add(a, b); });
    def_binary("__sub__", "__rsub__", [](const Tensor& a, const Tensor& b) { return sub(a, b); });
    def_binary("__mul__", "__rmul__", [](const Tensor& a, const Tensor& b) { return mul(a, b); });
    def_binary("__truediv__", "__rtruediv__",
               [](const Tensor& a, const Tensor& b) { return div(a, b); });
    def_binary("__pow__", "__rpow__", [](const Tensor& a, const Tensor& b) { return pow(a, b); });
    def_binary("__matmul__", "__rmatmul__",
               [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
    // == != < <= > >= from the comparison rows (kael/op_rows.h) that name an operator.
#define KAEL_BIND_COMPARISON_OPERATOR(name, OP, OPERATOR)                        \
    if (const char* dunder = OPERATOR; dunder != nullptr) {                      \
        def_binary(dunder, nullptr,                                              \
                   [](const Tensor& a, const Tensor& b) { return name(a, b); }); \
    }
    KAEL_COMPARISON_FUNCTIONS(KAEL_BIND_COMPARISON_OPERATOR)
#undef KAEL_BIND_COMPARISON_OPERATOR
    cls.def("__neg__", [](const Tensor& a) { return neg(a); })
        .def("__pos__", [](const Tensor& a) { return a; })
        .def("__abs__", [](const Tensor& a) { return abs(a); });
    // & | ^ ~ << >> % // are bound with their ops (bind_elemops.cpp).
    // symbol names the operator in errors, as the core's in-place ops do.
    const auto def_in_place = [&cls](const char* name, const char* symbol, auto op) {
        cls.def(name, [op, symbol](const py::object& self, py::handle other) {
            return in_place(self, other, symbol, op);
        }, py::is_operator());
    };
    def_in_place("__iadd__", "+=", [](Tensor& a, const Tensor& b) { add_(a, b, "+="); });
    def_in_place("__isub__", "-=", [](Tensor& a, const Tensor& b) { sub_(a, b, "-="); });
    def_in_place("__imul__", "*=", [](Tensor& a, const Tensor& b) { mul_(a, b, "*="); });
    def_in_place("__itruediv__", "/=", [](Tensor& a, const Tensor& b) { div_(a, b, "/="); });
}

}  // namespace

void bind_tensor(py::module_& module) {
    py::class_<Tensor> cls(module, "Tensor", docs::by_name("Tensor"));
    bind_properties(cls);
    bind_views_and_copies(cls);
    bind_operators(cls);
}

}  // namespace kael::python
