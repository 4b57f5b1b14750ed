// kael.Generator, the RNG-state functions and every random op (factories, sampling, in-place
// fills), each with generator= as in PyTorch.
#include <memory>

#include "bind_common.h"
#include "docs_random.h"
#include "kael/random.h"

namespace kael::python {

namespace {

// A Python Generator: a shared C++ generator (the default one is never freed) and its device.
struct GeneratorHandle {
    std::shared_ptr<Generator> generator;
    Device device = kCPU;
};

GeneratorHandle& default_handle() {
    static GeneratorHandle handle{std::shared_ptr<Generator>(&default_generator(), [](Generator*) {}),
                                  kCPU};
    return handle;
}

Generator& generator_argument(py::handle object, const char* op) {
    if (object.is_none()) {
        return default_generator();
    }
    if (!py::isinstance<GeneratorHandle>(object)) {
        throw py::type_error(std::string(op) + ": generator must be a kael.Generator or None, got " +
                             type_name(object));
    }
    return *object.cast<GeneratorHandle&>().generator;
}

// Seeds as PyTorch takes them: any int in [-2**63, 2**64), negative ones modulo 2**64.
std::uint64_t seed_argument(py::handle seed, const char* op) {
    if (!is_integral_number(seed)) {
        throw py::type_error(std::string(op) + ": seed must be an int, got " + type_name(seed));
    }
    const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(seed.ptr()));
    if (value.attr("__lt__")(py::int_(0)).cast<bool>()) {
        return static_cast<std::uint64_t>(to_int64(value, op, "seed"));
    }
    const unsigned long long result = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred()) {
        PyErr_Clear();
        throw OverflowError(std::string(op) + ": seed must be less than 2**64");
    }
    return result;
}

Tensor state_tensor(const Generator& generator) {
    const std::vector<std::uint8_t> bytes = generator.get_state();
    const std::vector<std::int64_t> values(bytes.begin(), bytes.end());
    return tensor(values, {static_cast<std::int64_t>(values.size())});
}

// A state as get_state gives it (a tensor of bytes), or bytes / bytearray.
std::vector<std::uint8_t> state_argument(py::handle state, const char* op) {
    if (py::isinstance<py::bytes>(state) || py::isinstance<py::bytearray>(state)) {
        const std::string text = py::bytes(py::reinterpret_borrow<py::object>(state));
        return {text.begin(), text.end()};
    }
    if (!is_tensor(state)) {
        throw py::type_error(std::string(op) + ": the state must be a Tensor from get_state (or "
                             "bytes), got " + type_name(state));
    }
    const Tensor values = tensor_of(state);
    if (values.dim() != 1 || values.dtype() == DType::Bool) {
        throw ValueError(std::string(op) + ": the state must be a 1-D tensor of bytes");
    }
    std::vector<std::uint8_t> bytes;
    for (const std::int64_t value : values.to(DType::I64).to_vector<std::int64_t>()) {
        if (value < 0 || value > 255) {
            throw ValueError(std::string(op) + ": a state holds bytes (0..255), got " +
                             std::to_string(value));
        }
        bytes.push_back(static_cast<std::uint8_t>(value));
    }
    return bytes;
}

Tensor finish(Tensor tensor, bool requires_grad) {
    return requires_grad ? tensor.set_requires_grad(true) : tensor;
}

void bind_generator(py::module_& module) {
    py::class_<GeneratorHandle>(module, "Generator", docs::Generator)
        .def(py::init([](py::handle device) {
            return GeneratorHandle{std::make_shared<Generator>(), to_device(device, "Generator")};
        }), py::arg("device") = "cpu",
             "__init__(self, device='cpu')\n--\n\nA new generator seeded with the default seed; "
             "its values are drawn on the host, so device only records where it is used.")
        .def("manual_seed", [](py::object self, py::handle seed) {
            self.cast<GeneratorHandle&>().generator->manual_seed(
                seed_argument(seed, "Generator.manual_seed"));
            return self;
        }, py::arg("seed"), docs::generator_manual_seed)
        .def("seed", [](GeneratorHandle& self) { return self.generator->seed(); },
             docs::generator_seed)
        .def("initial_seed", [](const GeneratorHandle& self) {
            return self.generator->initial_seed();
        }, docs::generator_initial_seed)
        .def("get_state", [](const GeneratorHandle& self) {
            return state_tensor(*self.generator);
        }, docs::generator_get_state)
        .def("set_state", [](py::object self, py::handle new_state) {
            self.cast<GeneratorHandle&>().generator->set_state(
                state_argument(new_state, "Generator.set_state"));
            return self;
        }, py::arg("new_state"), docs::generator_set_state)
        .def_property_readonly("device", [](const GeneratorHandle& self) { return self.device; },
                               "The device given when it was made (values are drawn on the host)");
    module.attr("default_generator") = py::cast(&default_handle(), py::return_value_policy::reference);

    module.def("manual_seed", [](py::handle seed) {
        default_generator().manual_seed(seed_argument(seed, "manual_seed"));
        return py::cast(&default_handle(), py::return_value_policy::reference);
    }, py::arg("seed"), docs::manual_seed);
    module.def("seed", [] { return default_generator().seed(); }, docs::seed);
    module.def("initial_seed", [] { return default_generator().initial_seed(); },
               docs::initial_seed);
    module.def("get_rng_state", [] { return state_tensor(default_generator()); },
               docs::get_rng_state);
    module.def("set_rng_state", [](py::handle new_state) {
        default_generator().set_state(state_argument(new_state, "set_rng_state"), "set_rng_state");
    }, py::arg("new_state"), docs::set_rng_state);
}

void bind_factories_with_generator(py::module_& module) {
    const auto sized = [&module](const char* name, auto make, const char* doc) {
        module.def(name, [make, name](const py::args& sizes, py::handle generator,
                                      py::handle dtype, py::handle device, bool requires_grad) {
            const DType target = to_optional_dtype(dtype, name).value_or(DType::F32);
            return finish(make(to_shape(sizes, name), target, to_device(device, name),
                               generator_argument(generator, name)),
                          requires_grad);
        }, py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
           py::arg("device") = py::none(), py::arg("requires_grad") = false, doc);
    };
    sized("rand", [](const Shape& s, DType t, Device d, Generator& g) { return rand(s, t, d, g); },
          docs::rand);
    sized("randn", [](const Shape& s, DType t, Device d, Generator& g) {
        return randn(s, t, d, g);
    }, docs::randn);
    module.def("randint", [](py::handle low, py::handle high, py::handle size,
                             py::handle generator, py::handle dtype, py::handle device,
                             bool requires_grad) {
        if (size.is_none()) {  // randint(high, size), as PyTorch
            if (high.is_none()) {
                throw TypeError("randint: expected (low, high, size) or (high, size)");
            }
            size = high;
            high = low;
            low = py::int_(0);
        }
        Tensor out = randint(to_int64(low, "randint", "low"), to_int64(high, "randint", "high"),
                             size_argument(size, "randint"), to_device(device, "randint"),
                             generator_argument(generator, "randint"));
        if (const auto target = to_optional_dtype(dtype, "randint")) {
            out = out.to(*target);
        }
        return finish(out, requires_grad);
    }, py::arg("low"), py::arg("high") = py::none(), py::arg("size") = py::none(), py::kw_only(),
       py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
       py::arg("device") = py::none(), py::arg("requires_grad") = false, docs::randint);
    module.def("randperm", [](py::handle n, py::handle generator, py::handle dtype,
                              py::handle device, bool requires_grad) {
        const DType target = to_optional_dtype(dtype, "randperm").value_or(DType::I64);
        return finish(randperm(to_int64(n, "randperm", "n"), target, to_device(device, "randperm"),
                               generator_argument(generator, "randperm")),
                      requires_grad);
    }, py::arg("n"), py::kw_only(), py::arg("generator") = py::none(),
       py::arg("dtype") = py::none(), py::arg("device") = py::none(),
       py::arg("requires_grad") = false, docs::randperm);
}

void bind_sampling(py::module_& module, py::class_<Tensor>& cls) {
    const auto draw = [](const Tensor& input, py::handle num_samples, bool replacement,
                         py::handle generator) {
        return multinomial(input, to_int64(num_samples, "multinomial", "num_samples"), replacement,
                           generator_argument(generator, "multinomial"));
    };
    module.def("multinomial", draw, py::arg("input"), py::arg("num_samples"),
               py::arg("replacement") = false, py::kw_only(), py::arg("generator") = py::none(),
               docs::multinomial);
    cls.def("multinomial", draw, py::arg("num_samples"), py::arg("replacement") = false,
            py::kw_only(), py::arg("generator") = py::none(), docs::method_multinomial);
    const auto flip = [](const Tensor& input, py::handle generator) {
        return bernoulli(input, generator_argument(generator, "bernoulli"));
    };
    module.def("bernoulli", flip, py::arg("input"), py::kw_only(),
               py::arg("generator") = py::none(), docs::bernoulli);
    cls.def("bernoulli", flip, py::kw_only(), py::arg("generator") = py::none(),
            docs::method_bernoulli);
}

// In-place fills return self itself, as PyTorch's do (t.normal_() is t).
void bind_fills(py::class_<Tensor>& cls) {
    cls.def("uniform_", [](py::object self, py::handle a, py::handle b, py::handle generator) {
        Tensor target = tensor_of(self);
        uniform_(target, to_double(a, "uniform_", "a"), to_double(b, "uniform_", "b"),
                 generator_argument(generator, "uniform_"));
        return self;
    }, py::arg("a") = 0.0, py::arg("b") = 1.0, py::kw_only(), py::arg("generator") = py::none(),
       docs::uniform_);
    cls.def("normal_", [](py::object self, py::handle mean, py::handle std, py::handle generator) {
        Tensor target = tensor_of(self);
        normal_(target, to_double(mean, "normal_", "mean"), to_double(std, "normal_", "std"),
                generator_argument(generator, "normal_"));
        return self;
    }, py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(),
       py::arg("generator") = py::none(), docs::normal_);
    cls.def("bernoulli_", [](py::object self, py::handle p, py::handle generator) {
        Tensor target = tensor_of(self);
        Generator& source = generator_argument(generator, "bernoulli_");
        if (is_tensor(p)) {
            bernoulli_(target, tensor_of(p), source);
        } else {
            bernoulli_(target, to_double(p, "bernoulli_", "p"), source);
        }
        return self;
    }, py::arg("p") = 0.5, py::kw_only(), py::arg("generator") = py::none(), docs::bernoulli_);
    cls.def("exponential_", [](py::object self, py::handle lambd, py::handle generator) {
        Tensor target = tensor_of(self);
        exponential_(target, to_double(lambd, "exponential_", "lambd"),
                     generator_argument(generator, "exponential_"));
        return self;
    }, py::arg("lambd") = 1.0, py::kw_only(), py::arg("generator") = py::none(),
       docs::exponential_);
}

}  // namespace

void bind_random(py::module_& module) {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(module.attr("Tensor"));
    bind_generator(module);
    bind_factories_with_generator(module);
    bind_sampling(module, cls);
    bind_fills(cls);
}

}  // namespace kael::python
