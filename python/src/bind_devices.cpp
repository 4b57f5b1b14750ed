// dtypes, devices, plugin records, factories, the random generator, allocator and fallback
// statistics.
#include <pybind11/stl.h>

#include "bind_common.h"
#include "docs_functions.h"
#include "kael/allocator.h"
#include "kael/device_graph.h"
#include "kael/ops.h"
#include "kael/registry.h"

namespace kael::python {

namespace {

std::string dtype_repr(DType dtype) {
    switch (dtype) {
        case DType::F32: return "kael.float32";
        case DType::F64: return "kael.float64";
        case DType::I64: return "kael.int64";
        case DType::BF16: return "kael.bfloat16";
        case DType::F16: return "kael.float16";
        case DType::I32: return "kael.int32";
        case DType::I16: return "kael.int16";
        case DType::I8: return "kael.int8";
        case DType::U8: return "kael.uint8";
        default: return "kael.bool_";
    }
}

py::dict device_info_dict(const DeviceInfo& info) {
    py::dict fields;
    fields["device"] = info.device.str();
    fields["name"] = info.name;
    fields["memory_total"] = info.memory_total;
    fields["memory_free"] = info.memory_free;
    fields["capability"] =
        std::to_string(info.capability_major) + "." + std::to_string(info.capability_minor);
    fields["plugin"] = info.plugin;
    fields["emulated"] = info.emulated;
    return fields;
}

py::dict plugin_record_dict(const PluginRecord& record) {
    py::dict fields;
    fields["path"] = record.path;
    fields["origin"] = record.origin;
    fields["name"] = record.name;
    fields["version"] = record.version;
    fields["kind"] = record.kind;
    fields["device_type"] = record.device_type;
    fields["priority"] = record.priority;
    fields["abi"] = record.abi_major == 0 ? std::string()
                                          : std::to_string(record.abi_major) + "." +
                                                std::to_string(record.abi_minor);
    fields["status"] = to_string(record.status);
    fields["reason"] = record.reason;
    fields["device_count"] = record.device_count;
    fields["selected"] = record.selected;
    fields["build_info"] = record.build_info;
    fields["host_addressable"] = record.host_addressable;
    fields["dlpack_device_type"] = record.dlpack_device_type;
    return fields;
}

// A plugin or device record: the fields of kael-info --json, read as attributes or keys.
struct Record {
    py::dict fields;
};

py::list as_records(const std::vector<py::dict>& dicts) {
    py::list records;
    for (const py::dict& fields : dicts) records.append(Record{fields});
    return records;
}

py::object record_field(const Record& record, const std::string& name) {
    if (!record.fields.contains(name)) {
        throw py::attribute_error("record has no field '" + name + "'");
    }
    return record.fields[py::str(name)];
}

Tensor finish_factory(Tensor tensor, bool requires_grad) {
    return requires_grad ? tensor.set_requires_grad(true) : tensor;
}

void bind_dtype_and_device(py::module_& module) {
    py::enum_<DType> dtype_class(module, "dtype", docs::by_name("dtype"));
    dtype_class.value("float32", DType::F32)
        .value("float64", DType::F64)
        .value("int64", DType::I64)
        .value("bool_", DType::Bool)
        .value("bfloat16", DType::BF16)
        .value("float16", DType::F16)
        .value("int32", DType::I32)
        .value("int16", DType::I16)
        .value("int8", DType::I8)
        .value("uint8", DType::U8);
    // A dtype is not a number: py::enum_'s __int__ and __index__ let kael.ones(2, 3, kael.float64)
    // read the dtype as a size and t.sum(kael.float64) as a dim (PyTorch raises TypeError). They
    // go, and the methods py::enum_ built on them are replaced.
    py::delattr(dtype_class, "__int__");
    py::delattr(dtype_class, "__index__");
    const auto code = [](DType dtype) { return py::int_(static_cast<int>(dtype)); };
    dtype_class.attr("__eq__") = py::cpp_function(
        [](DType dtype, const py::object& other) {
            return py::isinstance<DType>(other) && other.cast<DType>() == dtype;
        },
        py::is_method(dtype_class));
    dtype_class.attr("__ne__") = py::cpp_function(
        [](DType dtype, const py::object& other) {
            return !py::isinstance<DType>(other) || other.cast<DType>() != dtype;
        },
        py::is_method(dtype_class));
    dtype_class.attr("__hash__") = py::cpp_function(
        [code](DType dtype) { return py::hash(code(dtype)); }, py::is_method(dtype_class));
    dtype_class.attr("__getstate__") = py::cpp_function(code, py::is_method(dtype_class));
    // Replaced, not overloaded: py::enum_ defines its own __repr__ and __str__.
    dtype_class.attr("__repr__") = py::cpp_function(&dtype_repr, py::is_method(dtype_class));
    dtype_class.attr("__str__") = py::cpp_function(&dtype_repr, py::is_method(dtype_class));
    dtype_class
        .def_property_readonly("itemsize", [](DType dtype) { return itemsize(dtype); },
                               docs::by_name("dtype.itemsize"))
        .def_property_readonly("is_floating_point", [](DType dtype) { return is_floating(dtype); },
                               docs::by_name("dtype.is_floating_point"))
        .def_property_readonly(
            "is_signed", [](DType dtype) { return dtype != DType::U8 && dtype != DType::Bool; },
            docs::by_name("dtype.is_signed"))
        .def_property_readonly("name", [](DType dtype) { return to_string(dtype); },
                               docs::by_name("dtype.name"));
    set_generated_doc(dtype_class.attr("__init__"), docs::by_name("dtype.__init__"));
    set_generated_doc(dtype_class.attr("value"), docs::by_name("dtype.value"));
    module.attr("float32") = DType::F32;
    module.attr("float64") = DType::F64;
    module.attr("int64") = DType::I64;
    module.attr("bool_") = DType::Bool;
    module.attr("float") = DType::F32;
    module.attr("double") = DType::F64;
    module.attr("long") = DType::I64;
    module.attr("bfloat16") = DType::BF16;
    module.attr("float16") = DType::F16;
    module.attr("half") = DType::F16;
    module.attr("int32") = DType::I32;  // kael.int (torch.int) is set in Python: a builtin's name
    module.attr("int16") = DType::I16;
    module.attr("short") = DType::I16;
    module.attr("int8") = DType::I8;
    module.attr("uint8") = DType::U8;
    module.def(
        "promote_types",
        [](py::handle a, py::handle b) { return promote(to_dtype(a), to_dtype(b)); },
        py::arg("type1"), py::arg("type2"), docs::by_name("promote_types"));
    module.def(
        "result_type",
        [](py::handle a, py::handle b) {
            const auto [x, y] = operands(a, b, "result_type");
            return result_type(x, y);
        },
        py::arg("tensor1"), py::arg("tensor2"), docs::by_name("result_type"));

    py::class_<Device>(module, "device", docs::by_name("device"))
        .def(py::init([](py::handle type, py::handle index) {
                 if (index.is_none()) return to_device(type);
                 return Device(cast_argument<std::string>(type, "device", "type", "a str") + ":" +
                               std::to_string(cast_argument<int>(index, "device", "index",
                                                                 "an int")));
             }),
             py::arg("type"), py::arg("index") = py::none(), docs::by_name("device.__init__"))
        .def_property_readonly("type", [](const Device& d) { return d.type(); },
                               docs::by_name("device.type"))
        .def_property_readonly("index", [](const Device& d) { return d.index; },
                               docs::by_name("device.index"))
        .def("__str__", &Device::str)
        .def("__repr__",
             [](const Device& d) {
                 return "device(type='" + d.type() + "', index=" +
                        std::to_string(d.index) + ")";
             })
        .def("__eq__",
             [](const Device& d, py::handle other) {
                 if (!is_device_like(other)) return false;
                 return d == to_device(other);
             })
        .def("__hash__", [](const Device& d) { return py::hash(py::str(d.str())); })
        .def(py::pickle([](const Device& d) { return d.str(); },
                        [](const std::string& text) { return Device(text); }));
    py::implicitly_convertible<py::str, Device>();
}

void bind_registry(py::module_& module) {
    py::class_<Record>(module, "Record", docs::by_name("Record"))
        .def("__getattr__", &record_field)
        .def("__getitem__", &record_field)
        .def("keys", [](const Record& r) { return r.fields.attr("keys")(); },
             docs::by_name("Record.keys"))
        .def("to_dict", [](const Record& r) { return py::dict(r.fields); },
             docs::by_name("Record.to_dict"))
        .def("__eq__", [](const Record& r, const Record& other) {
            return r.fields.equal(other.fields);
        })
        .def("__repr__", [](const Record& r) {
            return "kael.Record(" + std::string(py::repr(r.fields)) + ")";
        });
    module.def("devices", []() {
        std::vector<py::dict> dicts;
        for (const DeviceInfo& info : devices()) dicts.push_back(device_info_dict(info));
        return as_records(dicts);
    }, docs::by_name("devices"));
    module.def("plugins", []() {
        std::vector<py::dict> dicts;
        for (const PluginRecord& record : plugins()) dicts.push_back(plugin_record_dict(record));
        return as_records(dicts);
    }, docs::by_name("plugins"));
    module.def("load_plugin_folder", [](const std::string& folder, const std::string& origin) {
        std::vector<py::dict> dicts;
        for (const PluginRecord& record : load_plugin_folder(folder, origin)) {
            dicts.push_back(plugin_record_dict(record));
        }
        return as_records(dicts);
    }, py::arg("folder"), py::arg("origin") = "api",
       docs::by_name("load_plugin_folder"));
    module.def("add_plugin_folder",
               py::overload_cast<const std::string&, const std::string&>(&add_plugin_folder),
               py::arg("folder"), py::arg("origin") = "api",
               docs::by_name("add_plugin_folder"));
    module.def("discovery_steps", []() {
        py::list steps;
        for (const DiscoveryStep& step : discovery_steps()) {
            py::dict fields;
            fields["folder"] = step.folder;
            fields["origin"] = step.origin;
            fields["exists"] = step.exists;
            fields["reason"] = step.reason;
            fields["candidates"] = step.candidates;
            steps.append(fields);
        }
        return steps;
    }, docs::by_name("discovery_steps"));
    module.def("is_available", [](py::handle d) { return is_available(to_device(d)); },
               py::arg("device"), docs::by_name("is_available"));
    module.def("require_device", [](py::handle d) { require_device(to_device(d)); },
               py::arg("device"), docs::by_name("require_device"));
    module.def("cuda_is_available", []() { return is_available(Device("cuda", 0)); },
               docs::by_name("cuda_is_available"));
    module.def("registered_device_types", &registered_device_types,
               docs::by_name("registered_device_types"));
    module.def("device_type_servers", []() {
        std::vector<py::dict> dicts;
        for (const DeviceTypeServer& server : device_type_servers()) {
            py::dict fields;
            fields["device_type"] = server.device_type;
            fields["plugin"] = server.plugin;
            fields["reason"] = server.reason;
            dicts.push_back(fields);
        }
        return as_records(dicts);
    }, docs::by_name("device_type_servers"));
    module.def("plugin_warnings", &plugin_warnings, docs::by_name("plugin_warnings"));
    module.def("set_device_plugin", &set_device_plugin, py::arg("device_type"), py::arg("plugin"),
               docs::by_name("set_device_plugin"));
    module.def("core_version", &core_version, docs::by_name("core_version"));
    module.def("core_abi_version", &core_abi_version, docs::by_name("core_abi_version"));
    module.def("fallback_counts", &fallback_counts, docs::by_name("fallback_counts"));
    module.def("reset_fallback_counts", &reset_fallback_counts,
               docs::by_name("reset_fallback_counts"));
    module.def("set_num_threads", &set_num_threads, py::arg("count"),
               docs::by_name("set_num_threads"));
    module.def("get_num_threads", &num_threads, docs::by_name("get_num_threads"));
    module.def(
        "set_float32_matmul_precision",
        [](const std::string& precision) {
            if (precision == "highest") {
                set_float32_matmul_precision(MatmulPrecision::Highest);
            } else if (precision == "high") {
                set_float32_matmul_precision(MatmulPrecision::High);
            } else if (precision == "medium") {
                set_float32_matmul_precision(MatmulPrecision::Medium);
            } else {
                throw py::value_error("set_float32_matmul_precision: expected 'highest', 'high' "
                                      "or 'medium', got '" + precision + "'");
            }
        },
        py::arg("precision"), docs::by_name("set_float32_matmul_precision"));
    module.def(
        "get_float32_matmul_precision",
        [] {
            switch (float32_matmul_precision()) {
                case MatmulPrecision::High: return "high";
                case MatmulPrecision::Medium: return "medium";
                default: return "highest";
            }
        },
        docs::by_name("get_float32_matmul_precision"));
    py::class_<DeviceGraph>(module, "DeviceGraph", docs::by_name("DeviceGraph"))
        .def_static(
            "supported", [](py::handle d) { return DeviceGraph::supported(to_device(d)); },
            py::arg("device"), docs::by_name("DeviceGraph.supported"))
        .def_static(
            "record",
            [](py::handle d, const py::function& work) {
                return DeviceGraph::record(to_device(d), [&work] { work(); });
            },
            py::arg("device"), py::arg("work"), docs::by_name("DeviceGraph.record"))
        .def_static("recording", [] { return recording_device_graph(); },
                    docs::by_name("DeviceGraph.recording"))
        .def("replay", &DeviceGraph::replay, docs::by_name("DeviceGraph.replay"))
        .def_property_readonly("device",
                               [](const DeviceGraph& graph) { return graph.device().str(); },
                               docs::by_name("DeviceGraph.device"));
    module.def("synchronize", [](py::handle d) {
        if (!d.is_none()) {
            synchronize(to_device(d));
            return;
        }
        for (const DeviceInfo& info : devices()) synchronize(info.device);
    }, py::arg("device") = py::none(), docs::by_name("synchronize"));
    module.def("allocator_stats", [](py::handle d) {
        const AllocatorStats stats = allocator_stats(to_device(d));
        py::dict fields;
        fields["in_use_bytes"] = stats.in_use_bytes;
        fields["cached_bytes"] = stats.cached_bytes;
        fields["peak_in_use_bytes"] = stats.peak_in_use_bytes;
        fields["hits"] = stats.hits;
        fields["misses"] = stats.misses;
        fields["system_releases"] = stats.system_releases;
        return fields;
    }, py::arg("device") = "cpu", docs::by_name("allocator_stats"));
    module.def("reset_peak_memory_stats",
               [](py::handle d) { reset_peak_memory_stats(to_device(d)); },
               py::arg("device") = "cpu", docs::by_name("reset_peak_memory_stats"));
    module.def("empty_cache", [](py::handle d) { empty_cache(to_device(d)); },
               py::arg("device") = "cpu", docs::by_name("empty_cache"));
    module.def("caching_allocator_enabled", &caching_allocator_enabled,
               docs::by_name("caching_allocator_enabled"));
}

}  // namespace

void bind_factories(py::module_& module) {
    // Sized factories take sizes as f(2, 3) or f((2, 3)).
    const auto sized = [&module](const char* name, auto make) {
        module.def(name, [make, name](const py::args& sizes, py::handle dtype, py::handle device,
                                bool requires_grad) {
            const DType target = to_optional_dtype(dtype, name).value_or(DType::F32);
            return finish_factory(make(to_shape(sizes, name), target, to_device(device, name)),
                                  requires_grad);
        }, py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
           py::arg("requires_grad") = false, docs::by_name(name));
    };
    sized("zeros", [](const Shape& s, DType t, Device d) { return zeros(s, t, d); });
    sized("ones", [](const Shape& s, DType t, Device d) { return ones(s, t, d); });
    sized("empty", [](const Shape& s, DType t, Device d) { return empty(s, t, d); });
    module.def("full", [](py::handle size, py::handle value, py::handle dtype, py::handle device,
                          bool requires_grad) {
        // The dtype follows the value (bool, int64, float32) unless given, as in PyTorch.
        const DType target =
            to_optional_dtype(dtype, "full").value_or(scalar_for(value, Tensor(), "full").dtype());
        const Shape shape = size_argument(size, "full");
        const bool exact_integer = target == DType::I64 && is_integral_number(value);
        Tensor out =
            exact_integer
                ? full_int(shape, to_int64(value, "full", "fill_value"), target,
                           to_device(device, "full"))
                : full(shape, to_double(value, "full", "fill_value"), target,
                       to_device(device, "full"));
        return finish_factory(out, requires_grad);
    }, py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
       py::arg("device") = py::none(), py::arg("requires_grad") = false,
       docs::by_name("full"));
    module.def("arange", [](py::handle start, py::handle end, py::handle step, py::handle dtype,
                            py::handle device, bool requires_grad) {
        py::handle stop = end;
        py::handle first = start;
        if (end.is_none()) {  // arange(n) counts from 0
            stop = start;
            first = py::int_(0);
        }
        // Integers only give int64, as in PyTorch, computed in integers (exact beyond 2**53);
        // any float gives float32.
        const bool all_integers = is_integral_number(first) && is_integral_number(stop) &&
                                  is_integral_number(step);
        const DType target =
            to_optional_dtype(dtype, "arange").value_or(all_integers ? DType::I64 : DType::F32);
        const Device target_device = to_device(device, "arange");
        const Tensor out =
            all_integers
                ? arange_int(to_int64(first, "arange", "start"), to_int64(stop, "arange", "end"),
                             to_int64(step, "arange", "step"), target, target_device)
                : arange(to_double(first, "arange", "start"), to_double(stop, "arange", "end"),
                         to_double(step, "arange", "step"), target, target_device);
        return finish_factory(out, requires_grad);
    }, py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
       py::arg("dtype") = py::none(), py::arg("device") = py::none(),
       py::arg("requires_grad") = false, docs::by_name("arange"));
    module.def("tensor", [](py::handle data, py::handle dtype, py::handle device,
                            bool requires_grad) {
        return finish_factory(
            tensor_from_data(data, to_optional_dtype(dtype, "tensor"), to_device(device, "tensor")),
            requires_grad);
    }, py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(),
       py::arg("device") = py::none(), py::arg("requires_grad") = false,
       docs::by_name("tensor"));
}

void bind_devices(py::module_& module) {
    bind_dtype_and_device(module);
    bind_registry(module);
}

}  // namespace kael::python
