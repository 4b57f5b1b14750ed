// GPT-2 from a Hugging Face checkpoint folder: tokenizes a prompt, generates text printed as it
// comes, and reports tokens per second.
//   gpt2_generate --checkpoint gpt2 --prompt "Hello, I'm a language model," --tokens 64
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "kael/gpt.h"
#include "kael/random.h"
#include "kael/registry.h"
#include "kael/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr const char* kWhereToGetOne =
    R"help(gpt2_generate needs a GPT-2 checkpoint folder (config.json and model.safetensors,
as transformers' save_pretrained writes them). To get GPT-2 small (124M parameters):
  git lfs install && git clone https://huggingface.co/openai-community/gpt2
or, where transformers is installed:
  python3 -c "import transformers as t; t.GPT2LMHeadModel.from_pretrained('gpt2').save_pretrained('gpt2')"
For a speed test without a download, a random-init checkpoint of GPT-2 small's shape:
  /usr/bin/python3 python/tests/gpt2_reference.py gpt2-random --gpt2-small
then: gpt2_generate --checkpoint gpt2-random --prompt "Hello" --tokens 128 --device cuda
)help";

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Generates text with GPT-2 from a Hugging Face checkpoint folder"};
    std::string checkpoint;
    std::string prompt = "Hello, I'm a language model,";
    std::int64_t tokens = 64;
    std::string device_name = "cpu";
    double temperature = 0;
    std::int64_t top_k = 0;
    double top_p = 1.0;
    std::uint64_t seed = 0;
    bool quiet = false;
    std::string dtype_name = "float32";
    app.add_option("--checkpoint", checkpoint, "folder with config.json and model.safetensors");
    app.add_option("--prompt", prompt, "the text to continue");
    app.add_option("--tokens", tokens, "new tokens to generate")->check(CLI::NonNegativeNumber);
    app.add_option("--device", device_name, "cpu, cuda or cuda:N (any device kael-info lists)");
    app.add_option("--temperature", temperature, "0: greedy; otherwise sampled");
    app.add_option("--top-k", top_k, "sample among the k most likely tokens (0: all)");
    app.add_option("--top-p", top_p, "sample among the fewest tokens reaching this probability");
    const CLI::Option* seed_option =
        app.add_option("--seed", seed, "seed of the sampling (the same text on every device)");
    app.add_option("--dtype", dtype_name, "the weights' and the KV cache's dtype")
        ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
    app.add_flag("--quiet", quiet, "print only the figures, not the text");
    CLI11_PARSE(app, argc, argv);
    if (checkpoint.empty()) {
        std::cerr << kWhereToGetOne;
        return 2;
    }
    try {
        const kael::Device device(device_name);
        kael::require_device(device);
        const Clock::time_point load_start = Clock::now();
        const auto model = kael::nn::GPT::from_pretrained(checkpoint, device);
        model->to(kael::parse_dtype(dtype_name));
        const kael::GPT2Tokenizer tokenizer = kael::GPT2Tokenizer::from_folder(checkpoint);
        const kael::nn::GPTConfig& config = model->config();
        std::fprintf(stderr,
                     "GPT-2: %lld layers, %lld wide, %lld parameters on %s, loaded in %.2f s\n",
                     static_cast<long long>(config.layers), static_cast<long long>(config.embed),
                     static_cast<long long>(model->parameter_count()), device.str().c_str(),
                     seconds_since(load_start));
        const std::vector<std::int64_t> ids = tokenizer.encode(prompt);
        if (ids.empty()) {
            throw kael::ValueError("the prompt is empty");
        }
        // One short generation first, so the timed one measures decoding, not the device's
        // start-up (its libraries load and its kernels compile on first use).
        kael::nn::GenerationConfig warm;
        warm.max_new_tokens = 2;
        (void)model->generate({ids}, warm);

        kael::nn::GenerationConfig options;
        options.max_new_tokens = tokens;
        options.temperature = temperature;
        options.top_k = top_k;
        options.top_p = top_p;
        if (seed_option->count() > 0) {
            options.seed = seed;
        }
        options.eos_token_id = tokenizer.eos_token_id();
        kael::TokenTextStream stream(tokenizer);
        std::optional<Clock::time_point> first_token;
        std::fputs(quiet ? "" : prompt.c_str(), stdout);
        options.on_token = [&](std::size_t, std::int64_t token) {
            if (!first_token) {
                first_token = Clock::now();
            }
            if (!quiet) {
                std::fputs(stream.push(token).c_str(), stdout);
                std::fflush(stdout);
            }
            return true;
        };
        const Clock::time_point start = Clock::now();
        const std::vector<std::int64_t> produced = model->generate({ids}, options)[0];
        const double total = seconds_since(start);
        if (!quiet) {
            std::fputs((stream.finish() + "\n").c_str(), stdout);
        }
        const double to_first =
            first_token ? std::chrono::duration<double>(*first_token - start).count() : total;
        const auto count = static_cast<double>(produced.size());
        std::printf(
            "%zu new tokens in %.3f s: %.1f tokens/s (prompt of %zu tokens; first token "
            "after %.1f ms, then %.1f tokens/s)\n",
            produced.size(), total, count / total, ids.size(), to_first * 1e3,
            count > 1 && total > to_first ? (count - 1) / (total - to_first) : 0.0);
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "gpt2_generate: " << error.what() << "\n";
        return 1;
    }
}
