// kael.nn (Module subclassable from Python, the built-in layers, GPT) and kael.optim.
#include <set>

#include "bind_common.h"
#include "kael/autograd.h"
#include "kael/gpt.h"
#include "kael/optim.h"

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
            throw py::attribute_error("'" + name + "' is a registered parameter or submodule "
                                      "and cannot be reassigned; update a parameter in place "
                                      "with copy_");
        }
        if (is_module) {
            register_module(name, value.cast<std::shared_ptr<Module>>());
        } else if (is_parameter) {
            value = py::cast(register_parameter(name, value.cast<Tensor>()));
        } else {
            return value;
        }
        registered_.insert(name);
        return value;
    }

private:
    std::set<std::string> registered_;
};

using ModuleClass = py::class_<Module, PythonModule, std::shared_ptr<Module>>;

void set_attribute(py::object self, const std::string& name, py::object value) {
    if (auto* module = dynamic_cast<PythonModule*>(&self.cast<Module&>())) {
        value = module->register_attribute(name, std::move(value));
    }
    py::module_::import("builtins").attr("object").attr("__setattr__")(self, name, value);
}

py::dict state_dict(const Module& module) {
    py::dict state;
    for (const auto& [name, parameter] : module.named_parameters()) {
        state[py::str(name)] = parameter;
    }
    return state;
}

void load_state_dict(Module& module, const py::dict& state) {
    const NoGradGuard no_grad;
    for (auto& [name, parameter] : module.named_parameters()) {
        if (!state.contains(name)) {
            throw py::key_error("load_state_dict: missing parameter '" + name + "'");
        }
        parameter.copy_(state[py::str(name)].cast<Tensor>());
    }
}

void bind_module_base(py::module_& nn_module) {
    ModuleClass(nn_module, "Module", "Base of every layer; subclass it and define forward")
        .def(py::init<>())
        .def("forward", [](Module& m, const Tensor& input) { return m.forward(input); })
        .def("__call__", [](py::object self, const py::args& args, const py::kwargs& kwargs) {
            return self.attr("forward")(*args, **kwargs);
        })
        .def("__setattr__", &set_attribute)
        .def("parameters", &Module::parameters)
        .def("named_parameters", &Module::named_parameters)
        .def("parameter_count", &Module::parameter_count)
        .def("state_dict", &state_dict)
        .def("load_state_dict", &load_state_dict, py::arg("state_dict"))
        .def("zero_grad", &Module::zero_grad)
        .def("to", [](py::object self, py::handle device) {
            self.cast<Module&>().to(to_device(device));
            return self;
        }, py::arg("device"), "Moves every parameter in place; optimizers keep working")
        .def("cuda", [](py::object self, int index) {
            self.cast<Module&>().to(Device(DeviceType::CUDA, index));
            return self;
        }, py::arg("index") = 0)
        .def("cpu", [](py::object self) {
            self.cast<Module&>().to(kCPU);
            return self;
        })
        .def("train", [](py::object self, bool mode) {
            self.cast<Module&>().train(mode);
            return self;
        }, py::arg("mode") = true)
        .def("eval", [](py::object self) {
            self.cast<Module&>().eval();
            return self;
        })
        .def_property_readonly("training", &Module::is_training)
        .def("save", &Module::save, py::arg("path"))
        .def("load", &Module::load, py::arg("path"));
}

void bind_layers(py::module_& nn_module) {
    py::class_<nn::Linear, Module, std::shared_ptr<nn::Linear>>(nn_module, "Linear")
        .def(py::init([](std::int64_t in, std::int64_t out, bool bias, py::handle device) {
                 return std::make_shared<nn::Linear>(in, out, bias, to_device(device));
             }),
             py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true,
             py::kw_only(), py::arg("device") = py::none())
        .def_property_readonly("weight", [](const nn::Linear& m) { return m.weight; })
        .def_property_readonly("bias", [](const nn::Linear& m) { return tensor_or_none(m.bias); });
    py::class_<nn::Embedding, Module, std::shared_ptr<nn::Embedding>>(nn_module, "Embedding")
        .def(py::init([](std::int64_t count, std::int64_t dim, py::handle device) {
                 return std::make_shared<nn::Embedding>(count, dim, to_device(device));
             }),
             py::arg("num_embeddings"), py::arg("embedding_dim"), py::kw_only(),
             py::arg("device") = py::none())
        .def_property_readonly("weight", [](const nn::Embedding& m) { return m.weight; });
    py::class_<nn::LayerNorm, Module, std::shared_ptr<nn::LayerNorm>>(nn_module, "LayerNorm")
        .def(py::init([](std::int64_t dim, double eps, py::handle device) {
                 return std::make_shared<nn::LayerNorm>(dim, eps, to_device(device));
             }),
             py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::kw_only(),
             py::arg("device") = py::none())
        .def_property_readonly("weight", [](const nn::LayerNorm& m) { return m.weight; })
        .def_property_readonly("bias", [](const nn::LayerNorm& m) { return m.bias; })
        .def_readonly("eps", &nn::LayerNorm::eps);
    py::class_<nn::ReLU, Module, std::shared_ptr<nn::ReLU>>(nn_module, "ReLU").def(py::init<>());
    py::class_<nn::Sigmoid, Module, std::shared_ptr<nn::Sigmoid>>(nn_module, "Sigmoid")
        .def(py::init<>());
    py::class_<nn::Tanh, Module, std::shared_ptr<nn::Tanh>>(nn_module, "Tanh").def(py::init<>());
    py::class_<nn::GELU, Module, std::shared_ptr<nn::GELU>>(nn_module, "GELU")
        .def(py::init([](const std::string& approximate) {
                 return std::make_shared<nn::GELU>(approximate == "tanh");
             }),
             py::arg("approximate") = "none");
    py::class_<nn::Dropout, Module, std::shared_ptr<nn::Dropout>>(nn_module, "Dropout")
        .def(py::init<double>(), py::arg("p") = 0.5);
}

void bind_gpt(py::module_& nn_module) {
    py::class_<nn::GPTConfig>(nn_module, "GPTConfig")
        .def(py::init([](std::int64_t vocab_size, std::int64_t block_size, std::int64_t layers,
                         std::int64_t heads, std::int64_t embed, double dropout) {
                 return nn::GPTConfig{vocab_size, block_size, layers, heads, embed, dropout};
             }),
             py::kw_only(), py::arg("vocab_size") = 256, py::arg("block_size") = 64,
             py::arg("layers") = 2, py::arg("heads") = 2, py::arg("embed") = 64,
             py::arg("dropout") = 0.0)
        .def_readwrite("vocab_size", &nn::GPTConfig::vocab_size)
        .def_readwrite("block_size", &nn::GPTConfig::block_size)
        .def_readwrite("layers", &nn::GPTConfig::layers)
        .def_readwrite("heads", &nn::GPTConfig::heads)
        .def_readwrite("embed", &nn::GPTConfig::embed)
        .def_readwrite("dropout", &nn::GPTConfig::dropout)
        .def("__repr__", [](const nn::GPTConfig& c) {
            return "GPTConfig(vocab_size=" + std::to_string(c.vocab_size) +
                   ", block_size=" + std::to_string(c.block_size) +
                   ", layers=" + std::to_string(c.layers) + ", heads=" +
                   std::to_string(c.heads) + ", embed=" + std::to_string(c.embed) +
                   ", dropout=" + std::to_string(c.dropout) + ")";
        });
    py::class_<nn::GPT, Module, std::shared_ptr<nn::GPT>>(nn_module, "GPT")
        .def(py::init([](const nn::GPTConfig& config, py::handle device) {
                 return std::make_shared<nn::GPT>(config, to_device(device));
             }),
             py::arg("config"), py::kw_only(), py::arg("device") = py::none())
        .def("forward", [](nn::GPT& m, const Tensor& tokens) { return m.forward(tokens); },
             py::arg("tokens"), "int64 tokens [B, T] -> logits [B, T, vocab]")
        .def("loss", &nn::GPT::loss, py::arg("tokens"), py::arg("targets"))
        .def("generate", &nn::GPT::generate, py::arg("prompt"), py::arg("new_tokens"),
             py::arg("temperature") = 0.0, "Greedy (0) or sampled continuation of a token list")
        .def_property_readonly("config", &nn::GPT::config)
        .def_property_readonly("device", &nn::GPT::device);
}

std::vector<Tensor> parameter_list(py::handle parameters) {
    return py::list(py::reinterpret_borrow<py::iterable>(parameters)).cast<std::vector<Tensor>>();
}

void bind_optim(py::module_& optim_module) {
    using optim::Optimizer;
    py::class_<Optimizer, std::shared_ptr<Optimizer>>(optim_module, "Optimizer")
        .def("step", &Optimizer::step)
        .def("zero_grad", &Optimizer::zero_grad)
        .def_property_readonly("parameters", &Optimizer::parameters);
    py::class_<optim::SGD, Optimizer, std::shared_ptr<optim::SGD>>(optim_module, "SGD")
        .def(py::init([](py::handle params, double lr, double momentum, double weight_decay) {
                 return std::make_shared<optim::SGD>(parameter_list(params), lr, momentum,
                                                     weight_decay);
             }),
             py::arg("params"), py::arg("lr"), py::arg("momentum") = 0.0,
             py::arg("weight_decay") = 0.0);
    using Betas = std::pair<double, double>;
    py::class_<optim::Adam, Optimizer, std::shared_ptr<optim::Adam>>(optim_module, "Adam")
        .def(py::init([](py::handle params, double lr, Betas betas, double eps,
                         double weight_decay) {
                 return std::make_shared<optim::Adam>(parameter_list(params), lr, betas.first,
                                                      betas.second, eps, weight_decay);
             }),
             py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = Betas{0.9, 0.999},
             py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0);
    py::class_<optim::AdamW, optim::Adam, std::shared_ptr<optim::AdamW>>(optim_module, "AdamW")
        .def(py::init([](py::handle params, double lr, Betas betas, double eps,
                         double weight_decay) {
                 return std::make_shared<optim::AdamW>(parameter_list(params), lr, betas.first,
                                                       betas.second, eps, weight_decay);
             }),
             py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = Betas{0.9, 0.999},
             py::arg("eps") = 1e-8, py::arg("weight_decay") = 1e-2);
}

}  // namespace

void bind_nn(py::module_& module) {
    py::module_ nn_module = module.def_submodule("_nn", "kael.nn internals");
    bind_module_base(nn_module);
    bind_layers(nn_module);
    bind_gpt(nn_module);
    py::module_ optim_module = module.def_submodule("_optim", "kael.optim internals");
    bind_optim(optim_module);
}

}  // namespace kael::python
