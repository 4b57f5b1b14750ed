// Autograd: Tensor.backward/grad/requires_grad, grad mode and gradcheck (kael._kael._autograd).
#include <memory>

#include "bind_common.h"
#include "docs_functions.h"
#include "kael/autocast.h"
#include "kael/autograd.h"

namespace kael::python {

namespace {

std::vector<Tensor> tensor_list(py::handle inputs) {
    if (py::isinstance<Tensor>(inputs)) return {inputs.cast<Tensor>()};
    if (!PySequence_Check(inputs.ptr())) {
        throw TypeError("gradcheck: inputs must be a tensor or a sequence of tensors, got " +
                        type_name(inputs));
    }
    std::vector<Tensor> tensors;
    for (const py::handle input : py::iter(inputs)) {  // py::iter checks for errors
        tensors.push_back(tensor_argument(input, "gradcheck", "each input"));
    }
    return tensors;
}

// gradcheck's function gets the inputs as separate arguments, as in PyTorch.
bool run_gradcheck(const py::function& function, py::handle inputs, double eps, double atol,
                   double rtol, bool raise_exception) {
    const auto call = [&function](const std::vector<Tensor>& arguments) {
        py::tuple packed(arguments.size());
        for (std::size_t i = 0; i < arguments.size(); ++i) packed[i] = py::cast(arguments[i]);
        return tensor_argument(function(*packed), "gradcheck", "the function's result");
    };
    return autograd::gradcheck(call, tensor_list(inputs), eps, atol, rtol, raise_exception);
}

// Backward runs no Python code (an imported DLPack buffer's deleter takes the GIL itself), so it
// releases the GIL: Python threads then run backward concurrently, as C++ threads may.
void run_backward(const Tensor& root, py::handle gradient, bool retain_graph) {
    std::optional<Tensor> seed;
    if (!gradient.is_none()) seed = operand(gradient, root, "backward");
    const py::gil_scoped_release released;
    autograd::backward(root, seed, retain_graph);
}

// A Python callable held by C++ (a hook): called and released with the GIL.
std::shared_ptr<py::function> held_function(py::function function) {
    return {new py::function(std::move(function)), [](py::function* f) {
                const py::gil_scoped_acquire gil;
                delete f;
            }};
}

// autograd.Function's node: backward is a Python callable taking and returning lists (None for
// undefined gradients), called with the GIL and released with it.
void record_python_function(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                            const std::string& name, py::function backward) {
    auto held = held_function(std::move(backward));
    autograd::record_function(outputs, inputs, name,
                              [held](const std::vector<Tensor>& grads) {
        const py::gil_scoped_acquire gil;
        py::list given;
        for (const Tensor& grad : grads) {
            given.append(grad.defined() ? py::cast(grad) : py::none());
        }
        const py::object result = (*held)(given);
        std::vector<Tensor> out;
        for (const py::handle item : py::iter(result)) {
            out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
        }
        return out;
    });
}

void register_python_hook(const Tensor& tensor, py::function hook) {
    autograd::register_hook(tensor, [held = held_function(std::move(hook))](const Tensor& grad) {
        const py::gil_scoped_acquire gil;
        const py::object result = (*held)(grad);
        if (result.is_none()) {
            return Tensor();
        }
        if (!py::isinstance<Tensor>(result)) {
            throw TypeError("a tensor hook must return None or a Tensor, not " +
                            type_name(result));
        }
        return result.cast<Tensor>();
    });
}

std::vector<py::object> run_grad(const std::vector<Tensor>& outputs, py::handle grad_outputs,
                                 const std::vector<Tensor>& inputs, bool retain_graph,
                                 bool create_graph, bool allow_unused) {
    std::vector<Tensor> seeds(outputs.size());
    if (!grad_outputs.is_none()) {
        std::size_t i = 0;
        for (const py::handle item : py::iter(grad_outputs)) {
            if (i == seeds.size()) {
                throw ValueError("grad: more grad_outputs than outputs");
            }
            seeds[i++] = item.is_none() ? Tensor() : tensor_argument(item, "grad", "grad_outputs");
        }
    }
    std::vector<Tensor> result;
    {
        const py::gil_scoped_release released;
        result = autograd::grad(outputs, seeds, inputs, retain_graph, create_graph, allow_unused);
    }
    std::vector<py::object> out;
    for (const Tensor& t : result) {
        out.push_back(t.defined() ? py::cast(t) : py::none());
    }
    return out;
}

}  // namespace

void bind_autograd(py::module_& module) {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(module.attr("Tensor"));
    cls.def("backward", &run_backward, py::arg("gradient") = py::none(),
            py::arg("retain_graph") = false, docs::tensor("backward"))
        .def_property("grad", [](const Tensor& t) { return tensor_or_none(t.grad()); },
                      [](const Tensor& t, py::handle grad) {
                          t.set_grad(optional_tensor(grad, "grad", "the assigned value"));
                      }, docs::tensor("grad"))
        .def_property("requires_grad", &Tensor::requires_grad,
                      [](const Tensor& t, bool value) { t.set_requires_grad(value); },
                      docs::tensor("requires_grad"))
        .def("requires_grad_", [](const Tensor& t, bool value) {
            return t.set_requires_grad(value);
        }, py::arg("requires_grad") = true, docs::tensor("requires_grad_"))
        .def_property_readonly("is_leaf", &Tensor::is_leaf, docs::tensor("is_leaf"))
        .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
            const auto node = t.grad_fn();
            if (!node) return py::none();
            return py::str(node->name());
        }, docs::tensor("grad_fn"))
        .def("zero_grad", &Tensor::zero_grad, docs::tensor("zero_grad"))
        .def_property_readonly("_version", [](const Tensor& t) {
            return t.impl().storage->version();
        }, "Writes into this tensor's storage so far (shared by its views); autograd compares it "
           "with the version a saved tensor had. Only differences are meaningful");

    module.def("is_grad_enabled", &is_grad_enabled, docs::by_name("is_grad_enabled"));
    // kael.autocast's regions (python/kael/amp.py): entered by the with-block, left by close().
    struct AutocastRegion {
        std::unique_ptr<autocast::Region> region;
    };
    py::class_<AutocastRegion>(module, "_AutocastRegion", "An entered autocast region")
        .def("close", [](AutocastRegion& self) { self.region.reset(); }, "Leaves the region");
    module.def("_autocast_region", [](const std::string& device_type, py::handle dtype,
                                      bool enabled) {
        return AutocastRegion{std::make_unique<autocast::Region>(
            device_type, to_dtype(dtype, "autocast"), enabled)};
    }, py::arg("device_type"), py::arg("dtype"), py::arg("enabled"));
    module.def("_autocast_enabled", &autocast::is_enabled, py::arg("device_type"));
    module.def("_set_grad_enabled", &set_grad_enabled, py::arg("enabled"));

    py::module_ autograd_module = module.def_submodule("_autograd", "kael.autograd internals");
    autograd_module.def("backward", &run_backward, py::arg("tensor"),
                        py::arg("gradient") = py::none(), py::arg("retain_graph") = false,
                        docs::by_name("autograd.backward"));
    autograd_module.def("gradcheck", &run_gradcheck, py::arg("function"), py::arg("inputs"),
                        py::arg("eps") = 1e-6, py::arg("atol") = 1e-5, py::arg("rtol") = 1e-3,
                        py::arg("raise_exception") = true, docs::by_name("autograd.gradcheck"));
    autograd_module.def("register_hook", &register_python_hook, py::arg("tensor"),
                        py::arg("hook"));
    autograd_module.def("retain_grad", &autograd::retain_grad, py::arg("tensor"));
    autograd_module.def("detach_", &autograd::detach_in_place, py::arg("tensor"));
    autograd_module.def("grad", &run_grad, py::arg("outputs"), py::arg("grad_outputs"),
                        py::arg("inputs"), py::arg("retain_graph"), py::arg("create_graph"),
                        py::arg("allow_unused"));
    autograd_module.def("set_anomaly_enabled", &autograd::set_anomaly_enabled,
                        py::arg("enabled"));
    autograd_module.def("is_anomaly_enabled", &autograd::is_anomaly_enabled);
    autograd_module.def("backward_runs", &autograd::backward_runs);
    autograd_module.def("reaches", &autograd::reaches, py::arg("outputs"), py::arg("leaves"));
    autograd_module.def("record_function", &record_python_function, py::arg("outputs"),
                        py::arg("inputs"), py::arg("name"), py::arg("backward"));
    autograd_module.def("sum_to", [](const Tensor& grad, py::handle shape) {
        return autograd::sum_to(grad, sequence_to_shape(shape, "sum_to"));
    }, py::arg("grad"), py::arg("shape"));
}

}  // namespace kael::python
