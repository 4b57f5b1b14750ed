// GPT-2 checkpoints as Hugging Face's transformers writes them: a folder with config.json and
// model.safetensors. Their names map onto GPT's ("h.3.attn.c_attn.weight" is
// "blocks.3.attention.query_key_value.weight"), with or without the "transformer." prefix; the
// Conv1D layers store their weights as [in, out], the transpose of Linear's.
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "kael/autograd.h"
#include "kael/gpt.h"
#include "kael/safetensors.h"
#include "nn_internal.h"

namespace kael::nn {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "transformer.";

// Where a checkpoint tensor goes in GPT, and whether it is a Conv1D weight ([in, out]).
struct Destination {
    std::string name;
    bool conv1d = false;
};

// The per-block names: GPT-2's on the left, GPT's on the right.
const std::map<std::string_view, Destination>& block_names() {
    static const std::map<std::string_view, Destination> names{
        {"ln_1.weight", {"norm1.weight"}},
        {"ln_1.bias", {"norm1.bias"}},
        {"attn.c_attn.weight", {"attention.query_key_value.weight", true}},
        {"attn.c_attn.bias", {"attention.query_key_value.bias"}},
        {"attn.c_proj.weight", {"attention.projection.weight", true}},
        {"attn.c_proj.bias", {"attention.projection.bias"}},
        {"ln_2.weight", {"norm2.weight"}},
        {"ln_2.bias", {"norm2.bias"}},
        {"mlp.c_fc.weight", {"expand.weight", true}},
        {"mlp.c_fc.bias", {"expand.bias"}},
        {"mlp.c_proj.weight", {"contract.weight", true}},
        {"mlp.c_proj.bias", {"contract.bias"}},
    };
    return names;
}

const std::map<std::string_view, std::string_view>& top_names() {
    static const std::map<std::string_view, std::string_view> names{
        {"wte.weight", "token_embedding.weight"}, {"wpe.weight", "position_embedding.weight"},
        {"ln_f.weight", "final_norm.weight"},     {"ln_f.bias", "final_norm.bias"},
        {"lm_head.weight", "head.weight"},
    };
    return names;
}

// "h.<i>.<rest>" -> (i, rest) for i < layers.
std::optional<std::pair<std::int64_t, std::string_view>> block_part(std::string_view name,
                                                                    std::int64_t layers) {
    if (name.substr(0, 2) != "h.") {
        return std::nullopt;
    }
    const auto dot = name.find('.', 2);
    const std::string_view digits = name.substr(2, dot == std::string_view::npos ? 0 : dot - 2);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") !=
                                                   std::string_view::npos) {
        return std::nullopt;
    }
    const std::int64_t index = std::stoll(std::string(digits));
    if (index >= layers) {
        return std::nullopt;
    }
    return std::pair{index, name.substr(dot + 1)};
}

// The attention masks some conversions of the original release carry: buffers, not weights.
bool is_mask_buffer(std::string_view rest) {
    return rest == "attn.bias" || rest == "attn.masked_bias";
}

std::optional<Destination> destination(std::string_view name, std::int64_t layers) {
    if (const auto top = top_names().find(name); top != top_names().end()) {
        return Destination{std::string(top->second)};
    }
    if (const auto part = block_part(name, layers)) {
        if (const auto found = block_names().find(part->second); found != block_names().end()) {
            return Destination{"blocks." + std::to_string(part->first) + "." + found->second.name,
                               found->second.conv1d};
        }
    }
    return std::nullopt;
}

// The checkpoint's name for GPT's parameter, as the messages show it.
std::string checkpoint_name(const std::string& kael_name, bool prefixed) {
    for (const auto& [theirs, ours] : top_names()) {
        if (ours == kael_name) {
            return theirs == "lm_head.weight" || !prefixed ? std::string(theirs)
                                                           : std::string(kPrefix) + std::string(theirs);
        }
    }
    const auto dot = kael_name.find('.', 7);  // after "blocks."
    const std::string rest = kael_name.substr(dot + 1);
    for (const auto& [theirs, ours] : block_names()) {
        if (ours.name == rest) {
            return (prefixed ? std::string(kPrefix) : "") + "h." +
                   kael_name.substr(7, dot - 7) + "." + std::string(theirs);
        }
    }
    return kael_name;
}

Json read_json(const fs::path& path, const char* op) {
    std::ifstream in(path);
    if (!in) {
        throw ValueError(std::string(op) + ": cannot read '" + path.string() + "'");
    }
    try {
        return Json::parse(in);
    } catch (const Json::exception& error) {
        throw ValueError(std::string(op) + ": '" + path.string() + "' is not valid JSON (" +
                         error.what() + ")");
    }
}

template <typename T>
T field(const Json& config, const char* name, T fallback, const fs::path& path) {
    const auto found = config.find(name);
    if (found == config.end() || found->is_null()) {
        return fallback;
    }
    const bool fits = std::is_same_v<T, bool>          ? found->is_boolean()
                      : std::is_same_v<T, std::string> ? found->is_string()
                      : std::is_integral_v<T>          ? found->is_number_integer()
                                                       : found->is_number();
    if (!fits) {
        throw ValueError("GPT.from_pretrained: '" + path.string() + "': field '" + name +
                         "' has the wrong type (" + found->dump() + ")");
    }
    return found->get<T>();
}

}  // namespace

GPTConfig gpt2_config_from_json(const std::string& file) {
    const fs::path path(file);
    const Json config = read_json(path, "GPT.from_pretrained");
    if (!config.is_object()) {
        throw ValueError("GPT.from_pretrained: '" + file + "' is not a JSON object");
    }
    const auto model_type = field<std::string>(config, "model_type", "gpt2", path);
    if (model_type != "gpt2") {
        throw ValueError("GPT.from_pretrained: '" + file + "' describes a '" + model_type +
                         "' model; only GPT-2 checkpoints (model_type gpt2) load into GPT");
    }
    for (const char* unsupported : {"scale_attn_by_inverse_layer_idx", "add_cross_attention"}) {
        if (field<bool>(config, unsupported, false, path)) {
            throw ValueError("GPT.from_pretrained: '" + file + "' sets " + unsupported +
                             ", which GPT does not implement");
        }
    }
    if (!field<bool>(config, "scale_attn_weights", true, path)) {
        throw ValueError("GPT.from_pretrained: '" + file + "' turns scale_attn_weights off, "
                         "which GPT does not implement");
    }
    GPTConfig result;
    result.vocab_size = field<std::int64_t>(config, "vocab_size", 50257, path);
    result.block_size = field<std::int64_t>(config, "n_positions", 1024, path);
    result.layers = field<std::int64_t>(config, "n_layer", 12, path);
    result.heads = field<std::int64_t>(config, "n_head", 12, path);
    result.embed = field<std::int64_t>(config, "n_embd", 768, path);
    result.inner = field<std::int64_t>(config, "n_inner", 0, path);
    result.dropout = field<double>(config, "resid_pdrop", 0.1, path);
    result.layer_norm_eps = field<double>(config, "layer_norm_epsilon", 1e-5, path);
    result.activation = field<std::string>(config, "activation_function", "gelu_new", path);
    result.tie_embeddings = field<bool>(config, "tie_word_embeddings", true, path);
    return result;
}

std::shared_ptr<GPT> GPT::from_pretrained(const std::string& folder, Device device) {
    const fs::path root(folder);
    if (!fs::is_directory(root)) {
        throw ValueError("GPT.from_pretrained: '" + folder + "' is not a folder (expected one "
                         "holding config.json and model.safetensors)");
    }
    const fs::path weights = root / "model.safetensors";
    if (!fs::exists(weights)) {
        const bool sharded = fs::exists(root / "model.safetensors.index.json");
        const bool pickled = fs::exists(root / "pytorch_model.bin");
        throw ValueError("GPT.from_pretrained: '" + folder + "' has no model.safetensors" +
                         (sharded ? " (sharded checkpoints are not read yet)"
                          : pickled ? " (pytorch_model.bin is a pickle, which kael does not run; "
                                      "save it again with safe_serialization=True)"
                                    : ""));
    }
    const GPTConfig config = gpt2_config_from_json((root / "config.json").string());
    auto model = std::make_shared<GPT>(config, device);
    const SafetensorsFile file(weights.string());

    std::map<std::string, Tensor> expected;  // GPT's name -> its parameter, aliases included
    for (const auto& [name, parameter] : model->named_parameters(false)) {
        expected.emplace(name, parameter);
    }
    bool prefixed = false;
    std::vector<std::pair<std::string, Tensor>> state;
    std::set<std::string> filled;
    std::vector<std::string> unexpected;
    const std::string where = "GPT.from_pretrained: '" + weights.string() + "': ";
    for (const SafetensorsEntry& entry : file.entries()) {
        std::string_view name = entry.name;
        if (name.substr(0, kPrefix.size()) == kPrefix) {
            name.remove_prefix(kPrefix.size());
            prefixed = true;
        }
        const auto part = block_part(name, config.layers);
        if (part && is_mask_buffer(part->second)) {
            continue;
        }
        const std::optional<Destination> to = destination(name, config.layers);
        if (!to) {
            unexpected.push_back(entry.name);
            continue;
        }
        if (to->name == "head.weight" && config.tie_embeddings) {
            continue;  // tied: the head is wte, as transformers ties it after loading
        }
        if (!filled.insert(to->name).second) {
            throw ValueError(where + "tensor " + detail::printable_name(entry.name) +
                             " appears twice (with and without the 'transformer.' prefix)");
        }
        const Tensor& parameter = expected.at(to->name);
        Shape want = parameter.shape();
        if (to->conv1d) {
            std::swap(want[0], want[1]);
        }
        if (entry.shape != want) {
            throw ValueError(where + "tensor " + detail::printable_name(entry.name) +
                             " has shape " + to_string(entry.shape) + ", but config.json's model "
                             "needs " + to_string(want) + (to->conv1d ? " (Conv1D: [in, out])" : ""));
        }
        Tensor value = file.read(entry.name);
        if (!is_floating(value.dtype())) {
            throw ValueError(where + "tensor " + detail::printable_name(entry.name) +
                             " holds " + entry.dtype + ", not floating-point weights");
        }
        const NoGradGuard guard;
        state.emplace_back(to->name, to->conv1d ? value.transpose(0, 1).contiguous() : value);
    }
    if (!unexpected.empty()) {
        std::string names;
        for (const std::string& name : unexpected) {
            names += (names.empty() ? "" : ", ") + detail::printable_name(name);
        }
        throw ValueError(where + "tensors that are not GPT-2 weights (or belong to layers past "
                         "n_layer " + std::to_string(config.layers) + "): " + names);
    }
    std::string missing;
    for (const auto& [name, parameter] : model->named_parameters()) {
        if (filled.count(name) == 0) {
            missing += (missing.empty() ? "" : ", ") +
                       detail::printable_name(checkpoint_name(name, prefixed));
        }
    }
    if (!missing.empty()) {
        throw ValueError(where + "missing tensors: " + missing);
    }
    detail::apply_state(*model, state, true, "GPT.from_pretrained");
    model->eval();
    return model;
}

void GPT::save_pretrained(const std::string& folder) const {
    const fs::path root(folder);
    std::error_code error;
    fs::create_directories(root, error);
    if (error) {
        throw OSError(error.value(), "GPT.save_pretrained: cannot create", folder);
    }
    Json config{{"model_type", "gpt2"},
                {"architectures", {"GPT2LMHeadModel"}},
                {"vocab_size", config_.vocab_size},
                {"n_positions", config_.block_size},
                {"n_ctx", config_.block_size},
                {"n_layer", config_.layers},
                {"n_head", config_.heads},
                {"n_embd", config_.embed},
                {"n_inner", config_.inner > 0 ? Json(config_.inner) : Json(nullptr)},
                {"activation_function", config_.activation},
                {"resid_pdrop", config_.dropout},
                {"embd_pdrop", config_.dropout},
                {"attn_pdrop", config_.dropout},
                {"layer_norm_epsilon", config_.layer_norm_eps},
                {"tie_word_embeddings", config_.tie_embeddings},
                {"bos_token_id", config_.vocab_size - 1},
                {"eos_token_id", config_.vocab_size - 1}};
    std::vector<std::pair<std::string, Tensor>> tensors;
    const NoGradGuard guard;
    for (const auto& [name, parameter] : named_parameters()) {
        const std::string theirs = checkpoint_name(name, true);
        const std::optional<Destination> to =
            destination(std::string_view(theirs).substr(
                            theirs.rfind(kPrefix, 0) == 0 ? kPrefix.size() : 0),
                        config_.layers);
        tensors.emplace_back(theirs, to && to->conv1d ? parameter.transpose(0, 1) : parameter);
    }
    kael::save_safetensors((root / "model.safetensors").string(), tensors, {{"format", "pt"}});
    const std::string text = config.dump(2) + "\n";
    std::ofstream out(root / "config.json", std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw OSError(EIO, "GPT.save_pretrained: cannot write", (root / "config.json").string());
    }
}

}  // namespace kael::nn
