// save_safetensors: a JSON header in a fixed order, then each tensor's bytes, written beside the
// target and renamed over it (file_access.h), one host copy at a time.
#include <nlohmann/json.hpp>
#include <set>

#include "file_access.h"
#include "kael/error.h"
#include "kael/safetensors.h"
#include "nn_internal.h"

namespace kael {

namespace {

using nn::detail::printable_name;

const char* safetensors_dtype(DType dtype) {
    switch (dtype) {
        case DType::F32: return "F32";
        case DType::F64: return "F64";
        case DType::I64: return "I64";
        case DType::Bool: return "BOOL";
        case DType::BF16: return "BF16";
        case DType::F16: return "F16";
        case DType::I32: return "I32";
        case DType::I16: return "I16";
        case DType::I8: return "I8";
        case DType::U8: return "U8";
    }
    throw_unknown_dtype(dtype);
}

void check_names(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
    const std::string op = "save_safetensors: '" + path + "': ";
    std::set<std::string> names;
    for (const auto& [name, tensor] : tensors) {
        if (name.empty()) {
            throw ValueError(op + "tensor names must not be empty");
        }
        if (name == "__metadata__") {
            throw ValueError(op + "the name '__metadata__' is the format's own; rename the tensor");
        }
        if (!names.insert(name).second) {
            throw ValueError(op + "the tensor name " + printable_name(name) + " appears twice");
        }
        if (!tensor.defined()) {
            throw ValueError(op + "tensor " + printable_name(name) + " is undefined");
        }
    }
}

// The header, padded with spaces to a multiple of 8 bytes, as the reference writer does, so
// the data that follow start aligned.
std::string header_text(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& tensors,
                        const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) {
        header["__metadata__"] = metadata;
    }
    std::uint64_t offset = 0;
    for (const auto& [name, tensor] : tensors) {
        const auto nbytes = static_cast<std::uint64_t>(tensor.nbytes());
        header[name] = {{"dtype", safetensors_dtype(tensor.dtype())},
                        {"shape", tensor.shape()},
                        {"data_offsets", {offset, offset + nbytes}}};
        offset += nbytes;
    }
    std::string text;
    try {
        text = header.dump();
    } catch (const nlohmann::ordered_json::type_error&) {  // JSON text must be UTF-8
        throw ValueError("save_safetensors: '" + path +
                         "': tensor names and metadata must be valid UTF-8");
    }
    text.append((8 - text.size() % 8) % 8, ' ');
    return text;
}

}  // namespace

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
    check_names(path, tensors);
    const std::string header = header_text(path, tensors, metadata);
    nn::detail::AtomicWriter out(path, "save_safetensors", false);
    out.write_value<std::uint64_t>(header.size());
    out.write(header.data(), header.size());
    for (const auto& [name, tensor] : tensors) {
        const Tensor host = tensor.detach().cpu().contiguous();
        if (host.nbytes() > 0) {
            out.write(host.device_data(), static_cast<std::size_t>(host.nbytes()));
        }
    }
    out.commit();
}

}  // namespace kael
