// kael._kael._safetensors: the C++ half of kael.safetensors (python/kael/safetensors.py).
#include <optional>

#include "bind_common.h"
#include "docs_functions.h"
#include "kael/safetensors.h"

namespace kael::python {

namespace {

// safe_open's object: the mapped file until close() or the end of a with block.
class OpenFile {
public:
    OpenFile(const std::string& path, Device device) : file_(SafetensorsFile(path)), device_(device) {}

    [[nodiscard]] const SafetensorsFile& file() const {
        if (!file_) {
            throw ValueError("safe_open: the file is closed");
        }
        return *file_;
    }
    [[nodiscard]] std::vector<std::string> keys() const {
        std::vector<std::string> names;
        for (const SafetensorsEntry& entry : file().entries()) {
            names.push_back(entry.name);
        }
        return names;
    }
    [[nodiscard]] Tensor get_tensor(const std::string& name) const {
        return file().read(name).to(device_);
    }
    void close() { file_.reset(); }

private:
    std::optional<SafetensorsFile> file_;
    Device device_;
};

// dict[str, Tensor] in its own order; TypeError naming the first entry that is not.
std::vector<std::pair<std::string, Tensor>> tensors_argument(py::handle tensors) {
    if (!py::isinstance<py::dict>(tensors)) {
        throw py::type_error("save_file: tensors must be a dict of str -> Tensor, got " +
                             type_name(tensors));
    }
    std::vector<std::pair<std::string, Tensor>> entries;
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(tensors)) {
        if (!py::isinstance<py::str>(key)) {
            throw py::type_error("save_file: names must be str, got " + std::string(py::repr(key)));
        }
        const auto name = key.cast<std::string>();
        if (!is_tensor(value)) {
            throw py::type_error("save_file: '" + name + "' is a " + type_name(value) +
                                 ", not a kael Tensor");
        }
        entries.emplace_back(name, tensor_of(value));
    }
    return entries;
}

std::map<std::string, std::string> metadata_argument(py::handle metadata) {
    std::map<std::string, std::string> result;
    if (metadata.is_none()) {
        return result;
    }
    if (!py::isinstance<py::dict>(metadata)) {
        throw py::type_error("save_file: metadata must be a dict of str -> str or None, got " +
                             type_name(metadata));
    }
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(metadata)) {
        if (!py::isinstance<py::str>(key) || !py::isinstance<py::str>(value)) {
            throw py::type_error("save_file: metadata must map str to str, got " +
                                 std::string(py::repr(key)) + ": " + std::string(py::repr(value)));
        }
        result.emplace(key.cast<std::string>(), value.cast<std::string>());
    }
    return result;
}

}  // namespace

void bind_safetensors(py::module_& module) {
    py::module_ st = module.def_submodule("_safetensors", "kael.safetensors internals");
    st.def("save_file", [](py::handle tensors, py::handle filename, py::handle metadata) {
        save_safetensors(path_argument(filename), tensors_argument(tensors),
                         metadata_argument(metadata));
    }, py::arg("tensors"), py::arg("filename"), py::arg("metadata") = py::none(),
           "Writes tensors (dict of name -> Tensor) to a safetensors file, atomically");
    py::class_<OpenFile>(st, "safe_open", docs::by_name("safe_open"))
        .def(py::init([](py::handle filename, py::handle device) {
            return OpenFile(path_argument(filename), to_device(device, "safe_open"));
        }), py::arg("filename"), py::arg("device") = "cpu", docs::by_name("safe_open.__init__"))
        .def("keys", &OpenFile::keys, docs::by_name("safe_open.keys"))
        .def("get_tensor", &OpenFile::get_tensor, py::arg("name"),
             docs::by_name("safe_open.get_tensor"))
        .def("metadata", [](const OpenFile& self) { return self.file().metadata(); },
             docs::by_name("safe_open.metadata"))
        .def("close", &OpenFile::close, docs::by_name("safe_open.close"))
        .def("__enter__", [](py::object self) { return self; }, "Returns the open file")
        .def("__exit__", [](OpenFile& self, const py::args&) { self.close(); }, "Closes the file");
}

}  // namespace kael::python
