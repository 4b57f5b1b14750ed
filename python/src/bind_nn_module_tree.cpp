// kael.nn.Module's buffers, module tree (children, named_modules, apply) and requires_grad_,
// added to the class bind_nn.cpp defines.
#include <functional>
#include <set>

#include "bind_nn.h"
#include "docs_nn.h"

namespace kael::python {

using nn::Module;

namespace {

// class_::def for a class bound elsewhere: a method named name on cls.
template <typename Function, typename... Extra>
void def_method(py::handle cls, const char* name, Function&& function, const Extra&... extra) {
    py::cpp_function method(std::forward<Function>(function), py::name(name), py::is_method(cls),
                            py::sibling(py::getattr(cls, name, py::none())), extra...);
    py::setattr(cls, name, method);
}

// A child as Python sees it: the module's existing Python object where it has one.
py::object module_object(py::handle root, Module* module) {
    if (module == &module_of(root)) {
        return py::reinterpret_borrow<py::object>(root);
    }
    return py::cast(module, py::return_value_policy::reference_internal, root);
}

py::list named_modules(py::handle self) {
    py::list result;
    for (const auto& [name, module] : module_of(self).named_modules()) {
        result.append(py::make_tuple(name, module_object(self, module)));
    }
    return result;
}

py::object buffer_attribute(py::handle self, const std::string& name) {
    auto* instance = reinterpret_cast<py::detail::instance*>(self.ptr());
    bool constructed = true;
    for (const auto& value_and_holder : py::detail::values_and_holders(instance)) {
        constructed = constructed && value_and_holder.holder_constructed();
    }
    if (constructed) {
        Module& module = module_of(self);
        for (const auto& [buffer_name, tensor] : module.named_buffers()) {
            if (buffer_name == name) {
                return py::cast(tensor);
            }
        }
        // A plain Module() (no __dict__) keeps what is assigned to it only in C++.
        if (name.find('.') == std::string::npos) {
            for (const auto& [child_name, child] : module.named_children()) {
                if (child_name == name) {
                    return py::cast(child);
                }
            }
            for (const auto& [parameter_name, parameter] : module.named_parameters(false)) {
                if (parameter_name == name) {
                    return py::cast(parameter);
                }
            }
        }
    }
    throw py::attribute_error("'" +
                              std::string(py::str(py::type::handle_of(self).attr("__name__"))) +
                              "' object has no attribute '" + name + "'");
}

}  // namespace

void bind_module_tree(py::handle cls) {
    def_method(cls, "register_buffer",
               [](py::handle self, const std::string& name, py::handle tensor, bool persistent) {
                   if (!py::isinstance<Tensor>(tensor)) {
                       throw py::type_error("register_buffer: '" + name + "' must be a tensor, got " +
                                            std::string(py::str(py::type::handle_of(tensor).attr("__name__"))));
                   }
                   if (py::hasattr(self, name.c_str())) {
                       throw py::key_error("register_buffer: attribute '" + name + "' already exists");
                   }
                   module_of(self).register_buffer(name, tensor.cast<Tensor>(), persistent);
               },
               py::arg("name"), py::arg("tensor"), py::arg("persistent") = true,
               docs::register_buffer);
    def_method(cls, "__getattr__", &buffer_attribute, py::arg("name"), docs::module_getattr);
    def_method(cls, "named_buffers",
               [](py::handle self) { return module_of(self).named_buffers(); },
               docs::named_buffers);
    def_method(cls, "buffers", [](py::handle self) { return module_of(self).buffers(); },
               docs::buffers);
    def_method(cls, "named_children",
               [](py::handle self) { return module_of(self).named_children(); },
               docs::named_children);
    def_method(cls, "children", [](py::handle self) { return module_of(self).children(); },
               docs::children);
    def_method(cls, "named_modules", &named_modules, docs::named_modules);
    def_method(cls, "modules", [](py::handle self) {
        py::list result;
        for (const py::handle pair : named_modules(self)) {
            result.append(pair.cast<py::tuple>()[1]);
        }
        return result;
    }, docs::modules);
    def_method(cls, "apply", [](py::object self, py::function fn) {
        // Post-order like PyTorch: every child's subtree, then the module itself.
        std::set<Module*> done;
        std::function<void(py::handle)> visit = [&](py::handle module) {
            Module& node = module_of(module);
            if (!done.insert(&node).second) {
                return;
            }
            for (const auto& entry : node.named_children()) {
                visit(module_object(self, entry.second.get()));
            }
            fn(module);
        };
        visit(self);
        return self;
    }, py::arg("fn"), docs::apply);
    def_method(cls, "requires_grad_", [](py::object self, bool requires_grad) {
        module_of(self).requires_grad_(requires_grad);
        return self;
    }, py::arg("requires_grad") = true, docs::requires_grad_);
}

}  // namespace kael::python
