#define BOOST_TEST_MODULE gpt2_checkpoint
// GPT::from_pretrained on the checkpoint python/tests/gpt2_reference.py writes (a CTest fixture:
// KAEL_GPT2_CHECKPOINT names its folder), against the numpy forward pass's logits stored beside
// it; weight tying in C++; batched generation; save_pretrained.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "kael/autograd.h"
#include "kael/gpt.h"
#include "kael/registry.h"
#include "kael/safetensors.h"

using kael::Device;
using kael::Tensor;
namespace nn = kael::nn;
namespace tt = boost::test_tools;

namespace {

std::string checkpoint_folder() {
    const char* folder = std::getenv("KAEL_GPT2_CHECKPOINT");
    BOOST_REQUIRE_MESSAGE(folder != nullptr, "KAEL_GPT2_CHECKPOINT is not set (CTest sets it)");
    return folder;
}

std::vector<Device> test_devices() {
    std::vector<Device> result;
    for (const auto& info : kael::devices()) {
        result.push_back(info.device);
    }
    return result;
}

double largest_difference(const Tensor& a, const Tensor& b) {
    const kael::NoGradGuard guard;
    return kael::max(kael::abs(a.cpu().to(kael::DType::F64) - b.cpu().to(kael::DType::F64)))
        .item<double>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpt2_checkpoint)

BOOST_AUTO_TEST_CASE(logits_match_the_numpy_reference_on_every_device) {
    const std::string folder = checkpoint_folder();
    const auto reference = kael::load_safetensors(folder + "/reference.safetensors");
    BOOST_REQUIRE_EQUAL(reference.size(), 2U);
    const Tensor& tokens = reference[0].first == "tokens" ? reference[0].second : reference[1].second;
    const Tensor& logits = reference[0].first == "logits" ? reference[0].second : reference[1].second;
    for (const Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            const auto model = nn::GPT::from_pretrained(folder, device);
            BOOST_TEST(!model->is_training());
            BOOST_TEST(model->config().tie_embeddings);
            const kael::NoGradGuard guard;
            const Tensor ours = model->forward(tokens.to(device));
            BOOST_TEST(largest_difference(ours, logits) < 1e-4);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_tied_head_is_the_token_embedding) {
    const auto model = nn::GPT::from_pretrained(checkpoint_folder());
    const Tensor head = model->get_parameter("head.weight");
    const Tensor embedding = model->get_parameter("token_embedding.weight");
    BOOST_TEST(&head.impl() == &embedding.impl());
    for (const auto& [name, parameter] : model->named_parameters()) {
        BOOST_TEST(name != "head.weight");
    }
    BOOST_TEST(model->named_parameters(false).size() == model->named_parameters().size() + 1);
}

BOOST_AUTO_TEST_CASE(assigning_a_member_ties_weights) {
    struct Tied : nn::Module {
        Tied() {
            embedding = register_module("embedding", std::make_shared<nn::Embedding>(7, 3));
            head = register_module("head", std::make_shared<nn::Linear>(3, 7, false));
            head->weight = embedding->weight;  // as in PyTorch: one tensor from now on
        }
        std::shared_ptr<nn::Embedding> embedding;
        std::shared_ptr<nn::Linear> head;
    } model;
    BOOST_TEST(model.named_parameters().size() == 1U);
    BOOST_TEST(model.parameter_count() == 21);
    // Either name fills the pair; a state naming neither is missing the first.
    model.load_state_dict({{"head.weight", kael::zeros({7, 3})}});
    BOOST_TEST(kael::sum(kael::abs(model.embedding->weight)).item<double>() == 0.0);
    const nn::IncompatibleKeys keys = model.load_state_dict({}, false);
    BOOST_TEST(keys.missing_keys == std::vector<std::string>{"embedding.weight"},
               tt::per_element());
    BOOST_CHECK_THROW(model.set_parameter("head.bias", kael::zeros({7})), kael::ValueError);
    BOOST_CHECK_THROW(model.set_parameter("tail.weight", kael::zeros({7})), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(a_batch_generates_what_each_prompt_does_alone) {
    const auto model = nn::GPT::from_pretrained(checkpoint_folder());
    const std::vector<std::vector<std::int64_t>> prompts{{4, 8, 15}, {16}, {23, 42, 4, 8, 15, 16}};
    nn::GenerationConfig options;
    options.max_new_tokens = 7;
    const auto batch = model->generate(prompts, options);
    for (std::size_t r = 0; r < prompts.size(); ++r) {
        BOOST_TEST(batch[r] == model->generate({prompts[r]}, options)[0], tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(save_pretrained_round_trips) {
    const auto model = nn::GPT::from_pretrained(checkpoint_folder());
    const std::filesystem::path folder =
        std::filesystem::temp_directory_path() / ("kael_gpt2_" + std::to_string(::getpid()));
    model->save_pretrained(folder.string());
    const auto again = nn::GPT::from_pretrained(folder.string());
    const Tensor tokens = kael::tensor(std::vector<std::int64_t>{1, 2, 3, 4}, {1, 4});
    const kael::NoGradGuard guard;
    BOOST_TEST(largest_difference(model->forward(tokens), again->forward(tokens)) == 0.0);
    const kael::SafetensorsFile file((folder / "model.safetensors").string());
    BOOST_REQUIRE(file.find("transformer.h.0.attn.c_attn.weight") != nullptr);
    BOOST_TEST(file.find("transformer.h.0.attn.c_attn.weight")->shape ==
               (kael::Shape{model->config().embed, 3 * model->config().embed}));
    BOOST_TEST(file.find("lm_head.weight") == nullptr);
    std::filesystem::remove_all(folder);
}

BOOST_AUTO_TEST_CASE(a_broken_checkpoint_names_the_problem) {
    const std::filesystem::path folder =
        std::filesystem::temp_directory_path() / ("kael_gpt2_bad_" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder);
    std::filesystem::copy_file(checkpoint_folder() + "/config.json", folder / "config.json");
    const auto model = nn::GPT::from_pretrained(checkpoint_folder());
    auto named = model->named_parameters();
    // A file missing the final norm's bias.
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const auto& [name, parameter] : named) {
        if (name == "token_embedding.weight") {
            tensors.emplace_back("wte.weight", parameter);
        } else if (name == "position_embedding.weight") {
            tensors.emplace_back("wpe.weight", parameter);
        }
    }
    kael::save_safetensors((folder / "model.safetensors").string(), tensors);
    BOOST_CHECK_EXCEPTION(nn::GPT::from_pretrained(folder.string()), kael::ValueError,
                          [](const kael::ValueError& error) {
                              const std::string message = error.what();
                              return message.find("missing tensors: 'h.0.ln_1.weight'") !=
                                         std::string::npos &&
                                     message.find("'ln_f.bias'") != std::string::npos;
                          });
    std::filesystem::remove_all(folder);
}

BOOST_AUTO_TEST_SUITE_END()
