// kael.nn.Module: subclassable from Python, with attribute registration, state dicts and files.
#include <set>

#include "bind_nn.h"
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
    bool unregister_attribute(const std::string& name) {
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

// self's Module, or AttributeError while it is not constructed (a method called from a
// subclass's __init__ before super().__init__()).
Module& module_of(py::handle self) {
    Module* module = constructed_module(self);
    if (module == nullptr) {
        throw py::attribute_error(
            std::string(py::str(py::type::handle_of(self).attr("__name__"))) +
            ".__init__ must call super().__init__() before using the module");
    }
    return *module;
}

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
    if (module == nullptr && (py::isinstance<Module>(value) || py::isinstance<Tensor>(value))) {
        throw py::attribute_error("cannot assign '" + name +
                                  "' before Module.__init__() call: call super().__init__() "
                                  "first in " + std::string(py::str(py::type::handle_of(self).attr("__name__"))) +
                                  ".__init__");
    }
    if (auto* python_module = dynamic_cast<PythonModule*>(module)) {
        value = python_module->register_attribute(name, std::move(value));
    }
    py::module_::import("builtins").attr("object").attr("__setattr__")(self, name, value);
}

void delete_attribute(py::object self, const std::string& name) {
    if (auto* python_module = dynamic_cast<PythonModule*>(constructed_module(self))) {
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

// Every name of a tied tensor, as PyTorch's state_dict lists them.
py::dict state_dict(const Module& module) {
    py::dict state;
    for (const auto& [name, parameter] : module.named_parameters(false)) {
        state[py::str(name)] = parameter;
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
    ModuleClass(nn_module, "Module", "Base of every layer; subclass it and define forward")
        .def(py::init<>())
        .def("forward", [](py::handle self, const Tensor& input) {
            return module_of(self).forward(input);
        })
        .def("__call__", [](py::object self, const py::args& args, const py::kwargs& kwargs) {
            module_of(self);
            return self.attr("forward")(*args, **kwargs);
        })
        .def("__setattr__", &set_attribute)
        .def("__delattr__", &delete_attribute)
        .def("_register_child", &register_child)
        .def("_unregister_child", &unregister_child)
        .def("parameters", [](py::handle self) { return module_of(self).parameters(); })
        .def("named_parameters", [](py::handle self, bool remove_duplicate) -> Named {
            return module_of(self).named_parameters(remove_duplicate);
        }, py::arg("remove_duplicate") = true,
             "(name, tensor) pairs; a tied tensor once, under its first name, unless "
             "remove_duplicate is False")
        .def("get_submodule", [](py::handle self, const std::string& target) {
            return module_of(self).get_submodule(target);
        }, py::arg("target"), "The submodule at a dotted path ('blocks.0.attention')")
        .def("get_parameter", [](py::handle self, const std::string& target) {
            return module_of(self).get_parameter(target);
        }, py::arg("target"), "The parameter at a dotted path ('head.weight')")
        .def("set_parameter", [](py::handle self, const std::string& target, const Tensor& value) {
            module_of(self).set_parameter(target, value);
        }, py::arg("target"), py::arg("value"),
             "Makes the parameter at a dotted path the tensor value: "
             "model.set_parameter('head.weight', model.get_parameter('embedding.weight')) "
             "ties the two")
        .def("parameter_count", [](py::handle self) { return module_of(self).parameter_count(); })
        .def("state_dict", [](py::handle self) { return state_dict(module_of(self)); })
        .def("load_state_dict", [](py::handle self, py::handle state, bool strict) {
            return load_state_dict(module_of(self), state, strict);
        }, py::arg("state_dict"), py::arg("strict") = true,
             "Copies every parameter after checking them all; strict=False returns the "
             "missing and unexpected names instead of raising")
        .def("zero_grad", [](py::handle self) { module_of(self).zero_grad(); })
        .def("to", [](py::object self, py::handle device) {
            module_of(self).to(to_device(device));
            return self;
        }, py::arg("device"), "Moves every parameter in place; optimizers keep working")
        .def("cuda", [](py::object self, int index) {
            module_of(self).to(Device("cuda", index));
            return self;
        }, py::arg("index") = 0)
        .def("cpu", [](py::object self) {
            module_of(self).to(kCPU);
            return self;
        })
        .def("train", [](py::object self, bool mode) {
            module_of(self).train(mode);
            return self;
        }, py::arg("mode") = true)
        .def("eval", [](py::object self) {
            module_of(self).eval();
            return self;
        })
        .def_property_readonly("training",
                               [](py::handle self) { return module_of(self).is_training(); })
        .def("save", [](py::handle self, py::handle path) {
            module_of(self).save(path_argument(path));
        }, py::arg("path"))
        .def("load", [](py::handle self, py::handle path) {
            module_of(self).load(path_argument(path));
        }, py::arg("path"))
        .def("save_safetensors", [](py::handle self, py::handle path) {
            module_of(self).save_safetensors(path_argument(path));
        }, py::arg("path"), "Writes every named parameter to a safetensors file, atomically")
        .def("load_safetensors", [](py::handle self, py::handle path, bool strict) {
            return incompatible_keys(module_of(self).load_safetensors(path_argument(path), strict));
        }, py::arg("path"), py::arg("strict") = true,
             "Reads a safetensors file into the parameters as load_state_dict does (F16/BF16 "
             "convert); a failure changes nothing");
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
    bind_layers(nn_module);
    bind_gpt(nn_module);
    py::module_ optim_module = module.def_submodule("_optim", "kael.optim internals");
    bind_optim(optim_module);
}

}  // namespace kael::python
