// kael.GPT2Tokenizer and kael.TokenTextStream: GPT-2's byte-level BPE (kael/tokenizer.h).
#include "bind_common.h"
#include "docs_functions.h"
#include "kael/tokenizer.h"

namespace kael::python {

namespace {

// A str, bytes or os.PathLike as a file system path.
std::string path_argument(py::handle path, const char* op) {
    py::object text = py::module_::import("os").attr("fspath")(path);
    if (py::isinstance<py::bytes>(text)) return text.cast<std::string>();
    if (!py::isinstance<py::str>(text)) {
        throw TypeError(std::string(op) + ": a path must be str, bytes or os.PathLike, not " +
                        type_name(path));
    }
    return text.cast<std::string>();
}

// str as UTF-8; a lone surrogate (which UTF-8 cannot hold) becomes U+FFFD, as JS TextEncoder
// does. bytes are passed through: the tokenizer replaces what is not UTF-8.
std::string text_argument(py::handle text) {
    if (py::isinstance<py::bytes>(text)) return text.cast<std::string>();
    if (!py::isinstance<py::str>(text)) {
        throw TypeError("GPT2Tokenizer.encode: text must be str or bytes, not " + type_name(text));
    }
    Py_ssize_t size = 0;
    if (const char* utf8 = PyUnicode_AsUTF8AndSize(text.ptr(), &size); utf8 != nullptr) {
        return std::string(utf8, static_cast<std::size_t>(size));
    }
    PyErr_Clear();
    py::object replaced = text.attr("encode")("utf-16", "surrogatepass")
                              .attr("decode")("utf-16", "replace");
    return replaced.cast<std::string>();
}

std::vector<std::int64_t> ids_argument(py::handle ids, const char* op) {
    std::vector<std::int64_t> values;
    if (py::isinstance<py::str>(ids) || py::isinstance<py::bytes>(ids) ||
        !py::hasattr(ids, "__iter__")) {
        throw TypeError(std::string(op) + ": ids must be a sequence of ints, not " + type_name(ids));
    }
    for (py::handle id : py::iter(ids)) values.push_back(to_int64(id, op, "a token id"));
    return values;
}

}  // namespace

void bind_tokenizer(py::module_& module) {
    py::class_<GPT2Tokenizer>(module, "GPT2Tokenizer", docs::by_name("GPT2Tokenizer"))
        .def_static(
            "from_files",
            [](py::handle vocab, py::handle merges) {
                return GPT2Tokenizer::from_files(path_argument(vocab, "GPT2Tokenizer.from_files"),
                                                 path_argument(merges, "GPT2Tokenizer.from_files"));
            },
            py::arg("vocab"), py::arg("merges"), docs::by_name("GPT2Tokenizer.from_files"))
        .def_static(
            "from_pretrained",
            [](py::handle folder) {
                if (folder.is_none()) return GPT2Tokenizer::installed();
                return GPT2Tokenizer::from_folder(
                    path_argument(folder, "GPT2Tokenizer.from_pretrained"));
            },
            py::arg("folder") = py::none(), docs::by_name("GPT2Tokenizer.from_pretrained"))
        .def(
            "encode",
            [](const GPT2Tokenizer& tokenizer, py::handle text, bool allow_special) {
                const std::string utf8 = text_argument(text);
                const py::gil_scoped_release released;
                return tokenizer.encode(utf8, allow_special);
            },
            py::arg("text"), py::arg("allow_special") = true,
            docs::by_name("GPT2Tokenizer.encode"))
        .def(
            "decode",
            [](const GPT2Tokenizer& tokenizer, py::handle ids) {
                const std::vector<std::int64_t> values = ids_argument(ids, "GPT2Tokenizer.decode");
                std::string text;
                {
                    const py::gil_scoped_release released;
                    text = tokenizer.decode(values);
                }
                return py::str(text);
            },
            py::arg("ids"), docs::by_name("GPT2Tokenizer.decode"))
        .def(
            "token_bytes",
            [](const GPT2Tokenizer& tokenizer, py::handle id) {
                return py::bytes(
                    tokenizer.token_bytes(to_int64(id, "GPT2Tokenizer.token_bytes", "id")));
            },
            py::arg("id"), docs::by_name("GPT2Tokenizer.token_bytes"))
        .def_property_readonly("vocab_size", &GPT2Tokenizer::vocab_size,
                               "Number of ids (50257 for GPT-2)")
        .def_property_readonly("eos_token_id", &GPT2Tokenizer::eos_token_id,
                               "The id of '<|endoftext|>' (50256 for GPT-2)")
        .def_property_readonly("source", &GPT2Tokenizer::source, "The files it was read from")
        .def("__len__", &GPT2Tokenizer::vocab_size, "vocab_size")
        .def("__repr__", [](const GPT2Tokenizer& tokenizer) {
            return "GPT2Tokenizer(vocab_size=" + std::to_string(tokenizer.vocab_size()) +
                   ", source=" + py::repr(py::str(tokenizer.source())).cast<std::string>() + ")";
        });

    py::class_<TokenTextStream>(module, "TokenTextStream", docs::by_name("TokenTextStream"))
        .def(py::init<const GPT2Tokenizer&>(), py::arg("tokenizer"),
             docs::by_name("TokenTextStream.__init__"))
        .def(
            "push",
            [](TokenTextStream& stream, py::handle id) {
                return stream.push(to_int64(id, "TokenTextStream.push", "id"));
            },
            py::arg("id"), docs::by_name("TokenTextStream.push"))
        .def("finish", &TokenTextStream::finish, docs::by_name("TokenTextStream.finish"));
}

}  // namespace kael::python
