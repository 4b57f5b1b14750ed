// kael.nn.GPT and GPTConfig: the model, GPT-2 checkpoints (from_pretrained, save_pretrained)
// and generation with its options.
#include "bind_nn.h"
#include "kael/gpt.h"

namespace kael::python {

namespace {

using nn::GPTConfig;

std::string config_repr(const GPTConfig& c) {
    return "GPTConfig(vocab_size=" + std::to_string(c.vocab_size) +
           ", block_size=" + std::to_string(c.block_size) + ", layers=" + std::to_string(c.layers) +
           ", heads=" + std::to_string(c.heads) + ", embed=" + std::to_string(c.embed) +
           ", dropout=" + std::string(py::repr(py::float_(c.dropout))) +
           ", layer_norm_eps=" + std::string(py::repr(py::float_(c.layer_norm_eps))) +
           ", activation='" + c.activation + "', inner=" + std::to_string(c.inner) +
           ", tie_embeddings=" + (c.tie_embeddings ? "True" : "False") + ")";
}

// A list of ints is one prompt; a list of lists a batch (each row continues as it would alone).
std::vector<std::vector<std::int64_t>> prompt_rows(py::handle prompts, bool& batched) {
    const py::list items(py::reinterpret_borrow<py::iterable>(prompts));
    batched = items.size() > 0 && !py::isinstance<py::int_>(items[0]);
    if (!batched) {
        return {items.cast<std::vector<std::int64_t>>()};
    }
    return items.cast<std::vector<std::vector<std::int64_t>>>();
}

py::object generate(nn::GPT& model, py::handle prompts, std::int64_t max_new_tokens,
                    double temperature, std::int64_t top_k, double top_p,
                    std::optional<std::uint64_t> seed, std::optional<std::int64_t> eos_token_id,
                    std::optional<py::function> on_token) {
    bool batched = false;
    std::vector<std::vector<std::int64_t>> rows = prompt_rows(prompts, batched);
    nn::GenerationConfig options;
    options.max_new_tokens = max_new_tokens;
    options.temperature = temperature;
    options.top_k = top_k;
    options.top_p = top_p;
    options.seed = seed;
    options.eos_token_id = eos_token_id;
    if (on_token) {
        // None returned (a callback that only prints) means go on; only False stops the row.
        options.on_token = [callback = *on_token](std::size_t row, std::int64_t token) {
            const py::object result = callback(row, token);
            return result.is_none() || result.cast<bool>();
        };
    }
    const auto produced = model.generate(rows, options);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        rows[r].insert(rows[r].end(), produced[r].begin(), produced[r].end());
    }
    return batched ? py::cast(rows) : py::cast(rows[0]);
}

}  // namespace

void bind_gpt(py::module_& nn_module) {
    py::class_<GPTConfig>(nn_module, "GPTConfig",
                          "GPT's shape; GPTConfig.from_json reads a GPT-2 config.json.\n\n"
                          "Example:\n    >>> config = kael.nn.GPTConfig(vocab_size=64, layers=1)\n"
                          "    >>> config.embed\n    64")
        .def(py::init([](std::int64_t vocab_size, std::int64_t block_size, std::int64_t layers,
                         std::int64_t heads, std::int64_t embed, double dropout,
                         double layer_norm_eps, std::string activation, std::int64_t inner,
                         bool tie_embeddings) {
                 return GPTConfig{vocab_size, block_size,     layers,
                                  heads,      embed,          dropout,
                                  layer_norm_eps, std::move(activation), inner, tie_embeddings};
             }),
             py::kw_only(), py::arg("vocab_size") = 256, py::arg("block_size") = 64,
             py::arg("layers") = 2, py::arg("heads") = 2, py::arg("embed") = 64,
             py::arg("dropout") = 0.0, py::arg("layer_norm_eps") = 1e-5,
             py::arg("activation") = "gelu_new", py::arg("inner") = 0,
             py::arg("tie_embeddings") = false,
             "__init__(self, *, vocab_size=256, block_size=64, layers=2, heads=2, embed=64, "
             "dropout=0.0, layer_norm_eps=1e-05, activation='gelu_new', inner=0, "
             "tie_embeddings=False)\n--\n\nA GPT shape: vocabulary, context length, blocks, heads, "
             "width, dropout, layer-norm eps, MLP activation ('gelu_new', 'gelu', 'relu'), MLP "
             "width (0: 4 * embed) and whether the head shares the token embedding.")
        .def_static("from_json", &nn::gpt2_config_from_json, py::arg("path"),
                    "from_json(path)\n--\n\nThe GPTConfig of a GPT-2 config.json (transformers' defaults for absent "
                    "fields)")
        .def_readwrite("vocab_size", &GPTConfig::vocab_size, "The number of token ids.")
        .def_readwrite("block_size", &GPTConfig::block_size, "The longest context in tokens.")
        .def_readwrite("layers", &GPTConfig::layers, "The number of transformer blocks.")
        .def_readwrite("heads", &GPTConfig::heads, "The number of attention heads.")
        .def_readwrite("embed", &GPTConfig::embed, "The model width.")
        .def_readwrite("dropout", &GPTConfig::dropout, "The dropout probability in training.")
        .def_readwrite("layer_norm_eps", &GPTConfig::layer_norm_eps, "The layer norms' eps.")
        .def_readwrite("activation", &GPTConfig::activation, "The MLP activation's name.")
        .def_readwrite("inner", &GPTConfig::inner, "The MLP width (0: 4 * embed).")
        .def_readwrite("tie_embeddings", &GPTConfig::tie_embeddings, "Whether the head shares the token embedding.")
        .def("__repr__", &config_repr);
    py::class_<nn::GPT, nn::Module, std::shared_ptr<nn::GPT>>(
        nn_module, "GPT",
        "A GPT-2 style decoder (token and position embeddings, pre-norm blocks, tied or separate "
        "head) that trains, loads transformers' GPT-2 checkpoints and generates.\n\n"
        "Example:\n    >>> model = kael.nn.GPT(kael.nn.GPTConfig(vocab_size=32, layers=1, embed=16))\n"
        "    >>> model(kael.tensor([[1, 2, 3]])).shape\n    (1, 3, 32)")
        .def(py::init([](const GPTConfig& config, py::handle device) {
                 return std::make_shared<nn::GPT>(config, to_device(device));
             }),
             py::arg("config"), py::kw_only(), py::arg("device") = py::none(),
             "__init__(self, config, *, device=None)\n--\n\nA randomly initialized GPT of "
             "config's shape on device.")
        .def_static(
            "from_pretrained",
            [](py::handle folder, py::handle device) {
                return nn::GPT::from_pretrained(path_argument(folder), to_device(device));
            },
            py::arg("folder"), py::kw_only(), py::arg("device") = py::none(),
            "from_pretrained(folder, *, device=None)\n--\n\nGPT-2 from a folder as transformers' save_pretrained writes it (config.json and "
            "model.safetensors, F32/F16/BF16), in eval mode.\n\n"
            "    model = kael.nn.GPT.from_pretrained('gpt2-folder', device='cuda')")
        .def("save_pretrained",
             [](const nn::GPT& m, py::handle folder) { m.save_pretrained(path_argument(folder)); },
             py::arg("folder"), "save_pretrained(self, folder)\n--\n\nWrites config.json and model.safetensors that "
             "transformers reads")
        .def("forward", [](nn::GPT& m, const Tensor& tokens) { return m.forward(tokens); },
             py::arg("tokens"), "forward(self, tokens)\n--\n\nint64 tokens [B, T] to logits [B, T, vocab].")
        .def("loss", &nn::GPT::loss, py::arg("tokens"), py::arg("targets"),
             "loss(self, tokens, targets)\n--\n\nThe mean cross entropy of the logits of tokens "
             "[B, T] against targets [B, T].")
        .def("generate", &generate, py::arg("prompt"), py::arg("max_new_tokens") = 32,
             py::arg("temperature") = 0.0, py::kw_only(), py::arg("top_k") = 0,
             py::arg("top_p") = 1.0, py::arg("seed") = py::none(),
             py::arg("eos_token_id") = py::none(), py::arg("on_token") = py::none(),
             "generate(self, prompt, max_new_tokens=32, temperature=0.0, *, top_k=0, top_p=1.0, "
             "seed=None, eos_token_id=None, on_token=None)\n--\n\n"
             "The prompt (a list of token ids, or a list of such lists: a batch) followed by "
             "up to max_new_tokens new tokens each. temperature 0 is greedy; otherwise tokens "
             "are sampled among the top_k most likely (0: all), then the fewest reaching "
             "probability top_p, from a generator seeded with seed (same text on every "
             "device). A row stops after eos_token_id. on_token(row, token) is called for each "
             "new token as it is made; returning False stops that row.")
        .def_property_readonly("config", &nn::GPT::config, "The model's GPTConfig.")
        .def_property_readonly("device", &nn::GPT::device, "The device of the parameters.");
}

}  // namespace kael::python
