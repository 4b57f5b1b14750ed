// kael.nn.Module: subclassable from Python, with attribute registration, state dicts and files.
#include <tuple>
#include <set>

#include "bind_nn.h"
#include "docs_nn.h"
#include "kael/autograd.h"
#include "kael/gpt.h"

namespace kael::python {

namespace {

using nn::Module;

// The C++ side of a Module subclass written in Python: forward is Python's, and attributes
// that are modules or leaf tensors requiring grad are registered, so parameters(), to(),
// save() and the optimizers see them.
class PythonModule : public Module {
public:
    Tensor forward(const Tensor& input) override {
        PYBIND11_OVERRIDE(Tensor, Module, forward, input);
    }
    // repr prints the Python class's name and its extra_repr, when it defines one.
    std::string type_name() const override {
        const py::gil_scoped_acquire gil;
        const py::handle self = py::detail::get_object_handle(
            static_cast<const Module*>(this), py::detail::get_type_info(typeid(Module)));
        return self ? py::str(py::type::handle_of(self).attr("__name__")).cast<std::string>()
                    : "Module";
    }
    std::string extra_repr() const override {
        PYBIND11_OVERRIDE(std::string, Module, extra_repr, );
    }
    // Returns the object to store as the Python attribute (a registered parameter is a new
    // handle that shares the value's storage).
    py::object register_attribute(const std::string& name, py::object value) {
        const bool is_module = py::isinstance<Module>(value);
        const bool is_parameter = py::isinstance<Tensor>(value) &&
                                  value.cast<Tensor>().requires_grad() &&
                                  value.cast<Tensor>().is_leaf();
        if (registered_.count(name) != 0) {
            if (parameters_.count(name) != 0 && py::isinstance<Tensor>(value)) {
                // self.head.weight = self.embedding.weight: one tensor from now on (tying).
                set_parameter(name, value.cast<Tensor>());
                return py::cast(get_parameter(name));
            }
            throw py::attribute_error("'" + name + "' is a registered " +
                                      (parameters_.count(name) != 0 ? "parameter" : "submodule") +
                                      " and cannot be reassigned to a " +
                                      std::string(py::str(py::type::handle_of(value).attr("__name__"))) +
                                      "; delete it first");
        }
        if (!is_module && !is_parameter) {
            return value;
        }
        check_name(name);
        if (is_module) {
            register_module(name, value.cast<std::shared_ptr<Module>>());
        } else {
            value = py::cast(register_parameter(name, value.cast<Tensor>()));
            parameters_.insert(name);
        }
        registered_.insert(name);
        return value;
    }
    [[nodiscard]] bool is_registered(const std::string& name) const {
        return registered_.count(name) != 0;
    }
    bool unregister_attribute(const std::string& name) {
        if (has_buffer(name)) {
            return unregister(name);
        }
        parameters_.erase(name);
        return registered_.erase(name) != 0 && unregister(name);
    }

private:
    // Names join into dotted paths ("blocks.0.weight"), so a dot would make them ambiguous.
    static void check_name(const std::string& name) {
        if (name.empty() || name.find('.') != std::string::npos) {
            throw py::key_error("module and parameter names must be non-empty and contain no "
                                "'.', got '" + name + "'");
        }
    }
    std::set<std::string> registered_;
    std::set<std::string> parameters_;  // the registered names that are parameters
};

using ModuleClass = py::class_<Module, PythonModule, std::shared_ptr<Module>>;

// The C++ module behind self, or nullptr while a subclass's __init__ has not yet called
// Module.__init__ (pybind11 has then constructed nothing).
Module* constructed_module(py::handle self) {
    auto* instance = reinterpret_cast<py::detail::instance*>(self.ptr());
    for (const auto& value_and_holder : py::detail::values_and_holders(instance)) {
        if (!value_and_holder.holder_constructed()) {
            return nullptr;
        }
    }
    return &self.cast<Module&>();
}

}  // namespace

Module& module_of(py::handle self) {
    Module* module = constructed_module(self);
    if (module == nullptr) {
        throw py::attribute_error(
            std::string(py::str(py::type::handle_of(self).attr("__name__"))) +
            ".__init__ must call super().__init__() before using the module");
    }
    return *module;
}

std::string extra_repr_of(py::handle self) {
    // A Python subclass's super().extra_repr() must not dispatch back to its own override.
    Module& module = module_of(self);
    return dynamic_cast<PythonModule*>(&module) ? module.Module::extra_repr() : module.extra_repr();
}

namespace {

// A list, tuple or dict holding modules would be stored without registering them.
void reject_module_containers(const std::string& name, py::handle value) {
    const bool is_sequence = py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value);
    const bool is_dict = py::isinstance<py::dict>(value);
    if (!is_sequence && !is_dict) {
        return;
    }
    const py::iterable items =
        is_dict ? py::reinterpret_borrow<py::iterable>(value.attr("values")())
                : py::reinterpret_borrow<py::iterable>(value);
    for (const py::handle item : items) {
        if (py::isinstance<Module>(item)) {
            throw py::type_error(std::string("cannot assign a plain ") +
                                 (is_dict ? "dict" : "list") + " of modules to '" + name +
                                 "': its modules would not be registered; use kael.nn." +
                                 (is_dict ? "ModuleDict" : "ModuleList"));
        }
    }
}

void set_attribute(py::object self, const std::string& name, py::object value) {
    reject_module_containers(name, value);
    Module* module = constructed_module(self);
    if (module != nullptr && module->has_buffer(name)) {
        if (!py::isinstance<Tensor>(value)) {
            throw py::type_error("cannot assign a " +
                                 std::string(py::str(py::type::handle_of(value).attr("__name__"))) +
                                 " to buffer '" + name + "' (a tensor is expected)");
        }
        module->set_buffer(name, value.cast<Tensor>());  // read back through __getattr__
        return;
    }
    if (module == nullptr && (py::isinstance<Module>(value) || py::isinstance<Tensor>(value))) {
        throw py::attribute_error("cannot assign '" + name +
                                  "' before Module.__init__() call: call super().__init__() "
                                  "first in " + std::string(py::str(py::type::handle_of(self).attr("__name__"))) +
                                  ".__init__");
    }
    if (auto* python_module = dynamic_cast<PythonModule*>(module)) {
        const bool registers = py::isinstance<Module>(value) || py::isinstance<Tensor>(value);
        value = python_module->register_attribute(name, std::move(value));
        // A plain Module() has no __dict__ (a dynamic_attr base kept module cycles alive at
        // exit, and unflushed files with them): what it registers is read back from C++.
        if (registers && !PyObject_HasAttrString(self.ptr(), "__dict__") &&
            python_module->is_registered(name)) {
            return;
        }
    }
    py::module_::import("builtins").attr("object").attr("__setattr__")(self, name, value);
}

void delete_attribute(py::object self, const std::string& name) {
    Module* module = constructed_module(self);
    if (module != nullptr && module->has_buffer(name)) {  // buffers live in C++ only
        if (auto* python_module = dynamic_cast<PythonModule*>(module)) {
            python_module->unregister_attribute(name);
            return;
        }
    }
    if (auto* python_module = dynamic_cast<PythonModule*>(module)) {
        python_module->unregister_attribute(name);
    }
    py::module_::import("builtins").attr("object").attr("__delattr__")(self, name);
}

// Registers a child without making it an attribute (ModuleList and ModuleDict keep their own).
void register_child(py::object self, const std::string& name, py::object module) {
    auto* python_module = dynamic_cast<PythonModule*>(constructed_module(self));
    if (python_module == nullptr || !py::isinstance<Module>(module)) {
        throw py::type_error("_register_child: needs a constructed Python Module and a module");
    }
    python_module->register_attribute(name, std::move(module));
}

void unregister_child(py::object self, const std::string& name) {
    if (auto* python_module = dynamic_cast<PythonModule*>(constructed_module(self))) {
        python_module->unregister_attribute(name);
    }
}

// Every name of a tied tensor and the persistent buffers, detached, as PyTorch's state_dict.
py::dict state_dict(const Module& module) {
    py::dict state;
    for (const auto& [name, tensor] : module.state_dict()) {
        state[py::str(name)] = tensor;
    }
    return state;
}

py::object incompatible_keys(const nn::IncompatibleKeys& result) {
    return py::module_::import("kael._kael")
        .attr("_nn")
        .attr("IncompatibleKeys")(result.missing_keys, result.unexpected_keys);
}

py::object load_state_dict(Module& module, py::handle state, bool strict) {
    if (!py::hasattr(state, "items")) {
        throw py::type_error("load_state_dict: expected a dict of name -> tensor, got " +
                             std::string(py::str(py::type::handle_of(state).attr("__name__"))));
    }
    std::vector<std::pair<std::string, Tensor>> entries;
    for (const py::handle item : state.attr("items")()) {
        const py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
        if (!py::isinstance<py::str>(pair[0])) {
            throw py::type_error("load_state_dict: keys must be str, got " +
                                 std::string(py::repr(pair[0])));
        }
        const auto name = pair[0].cast<std::string>();
        if (!py::isinstance<Tensor>(pair[1])) {
            throw py::type_error(
                "load_state_dict: parameter '" + name + "' is a " +
                std::string(py::str(py::type::handle_of(pair[1]).attr("__name__"))) +
                ", not a kael tensor");
        }
        entries.emplace_back(name, pair[1].cast<Tensor>());
    }
    return incompatible_keys(module.load_state_dict(entries, strict));
}

// Every method reaches the C++ module through module_of, so none runs on an unconstructed one.
void bind_module_base(py::module_& nn_module) {
    using Named = std::vector<std::pair<std::string, Tensor>>;
    ModuleClass module_class(nn_module, "Module", docs::Module);
    // half(), bfloat16(), float(), double(): to(dtype), returning the module.
    for (const auto& [name, dtype, doc] :
         {std::tuple{"half", DType::F16, docs::module_half},
          std::tuple{"bfloat16", DType::BF16, docs::module_bfloat16},
          std::tuple{"float", DType::F32, docs::module_float},
          std::tuple{"double", DType::F64, docs::module_double}}) {
        module_class.def(name, [dtype = dtype](py::object self) {
            module_of(self).to(dtype);
            return self;
        }, doc);
    }
    // init_alias: Module() itself is a PythonModule, so it registers what is assigned to it.
    module_class.def(py::init_alias<>(), docs::module_init)
        .def("forward", [](py::handle self, const Tensor& input) {
            return module_of(self).forward(input);
        }, py::arg("input"), docs::module_forward)
        .def("__call__", [](py::object self, const py::args& args, const py::kwargs& kwargs) {
            module_of(self);
            return self.attr("forward")(*args, **kwargs);
        }, docs::module_call)
        .def("__setattr__", &set_attribute)
        .def("__delattr__", &delete_attribute)
        .def("_register_child", &register_child)
        .def("_unregister_child", &unregister_child)
        .def("parameters", [](py::handle self) { return module_of(self).parameters(); },
             docs::parameters)
        .def("named_parameters", [](py::handle self, bool remove_duplicate) -> Named {
            return module_of(self).named_parameters(remove_duplicate);
        }, py::arg("remove_duplicate") = true, docs::named_parameters)
        .def("get_submodule", [](py::handle self, const std::string& target) {
            return module_of(self).get_submodule(target);
        }, py::arg("target"), docs::get_submodule)
        .def("get_parameter", [](py::handle self, const std::string& target) {
            return module_of(self).get_parameter(target);
        }, py::arg("target"), docs::get_parameter)
        .def("set_parameter", [](py::handle self, const std::string& target, const Tensor& value) {
            module_of(self).set_parameter(target, value);
        }, py::arg("target"), py::arg("value"), docs::set_parameter)
        .def("parameter_count", [](py::handle self) { return module_of(self).parameter_count(); },
             docs::parameter_count)
        .def("state_dict", [](py::handle self) { return state_dict(module_of(self)); },
             docs::state_dict)
        .def("load_state_dict", [](py::handle self, py::handle state, bool strict) {
            return load_state_dict(module_of(self), state, strict);
        }, py::arg("state_dict"), py::arg("strict") = true, docs::load_state_dict)
        .def("zero_grad", [](py::handle self) { module_of(self).zero_grad(); }, docs::zero_grad)
        .def("to", [](py::object self, const py::args& args, const py::kwargs& kwargs) {
            if (args.size() > 2) {
                throw TypeError("Module.to: expected at most a device and a dtype, got " +
                                std::to_string(args.size()) + " arguments");
            }
            for (const auto& [key, value] : kwargs) {
                const auto name = key.cast<std::string>();
                if (name != "device" && name != "dtype" && name != "non_blocking") {
                    throw TypeError("Module.to: unexpected keyword argument '" + name + "'");
                }
            }
            const auto [device, dtype] = to_arguments(args, kwargs, "Module.to");
            if (device) module_of(self).to(*device);
            if (dtype) module_of(self).to(*dtype);
            return self;
        }, docs::module_to)
        .def("cuda", [](py::object self, int index) {
            module_of(self).to(Device("cuda", index));
            return self;
        }, py::arg("index") = 0, docs::module_cuda)
        .def("cpu", [](py::object self) {
            module_of(self).to(kCPU);
            return self;
        }, docs::module_cpu)
        .def("train", [](py::object self, bool mode) {
            module_of(self).train(mode);
            return self;
        }, py::arg("mode") = true, docs::train)
        .def("eval", [](py::object self) {
            module_of(self).eval();
            return self;
        }, docs::eval)
        .def_property("training", [](py::handle self) { return module_of(self).is_training(); },
                      [](py::handle self, bool mode) { module_of(self).set_training(mode); },
                      docs::training)
        .def("extra_repr", &extra_repr_of, docs::extra_repr)
        .def("__repr__", [](py::handle self) { return module_of(self).repr(); }, docs::module_repr)
        .def("save", [](py::handle self, py::handle path) {
            module_of(self).save(path_argument(path));
        }, py::arg("path"), docs::module_save)
        .def("load", [](py::handle self, py::handle path) {
            module_of(self).load(path_argument(path));
        }, py::arg("path"), docs::module_load)
        .def("save_safetensors", [](py::handle self, py::handle path) {
            module_of(self).save_safetensors(path_argument(path));
        }, py::arg("path"), docs::save_safetensors)
        .def("load_safetensors", [](py::handle self, py::handle path, bool strict) {
            return incompatible_keys(module_of(self).load_safetensors(path_argument(path), strict));
        }, py::arg("path"), py::arg("strict") = true, docs::load_safetensors);
}

}  // namespace

std::string path_argument(py::handle path) {
    return py::module_::import("os").attr("fsencode")(path).cast<std::string>();
}

void bind_nn(py::module_& module) {
    py::module_ nn_module = module.def_submodule("_nn", "kael.nn internals");
    nn_module.attr("IncompatibleKeys") = py::module_::import("collections")
                                             .attr("namedtuple")("IncompatibleKeys",
                                                                 "missing_keys unexpected_keys",
                                                                 py::arg("module") = "kael.nn");
    bind_module_base(nn_module);
    bind_module_tree(nn_module.attr("Module"));
    bind_layers(nn_module);
    bind_layers_more(nn_module);
    bind_nn_functional(nn_module);
    bind_conv_layers(nn_module);
    bind_rnn_layers(nn_module);
    bind_gpt(nn_module);
    py::module_ optim_module = module.def_submodule("_optim", "kael.optim internals");
    bind_optim(optim_module);
}

}  // namespace kael::python
