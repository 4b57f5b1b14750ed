// A character-level GPT trained on an English text Debian ships (the GPL-3 licence from
// base-files): validation loss is printed as it falls, then the model generates text.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "kael/autograd.h"
#include "kael/gpt.h"
#include "kael/optim.h"
#include "kael/registry.h"
#include "progress.h"

namespace {

struct Corpus {
    std::vector<char> alphabet;
    std::vector<std::int64_t> ids;  // one per character of the text
};

Corpus read_corpus(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw kael::ValueError("cannot read " + path);
    }
    std::stringstream text;
    text << file.rdbuf();
    const std::string content = text.str();
    if (content.size() < 1000) {
        throw kael::ValueError(path + " is too short to train on");
    }
    std::vector<int> index(256, -1);
    Corpus corpus;
    for (const char c : content) {
        auto& slot = index[static_cast<unsigned char>(c)];
        if (slot < 0) {
            slot = static_cast<int>(corpus.alphabet.size());
            corpus.alphabet.push_back(c);
        }
        corpus.ids.push_back(slot);
    }
    return corpus;
}

// Random windows of length block + 1 from ids[begin, end): inputs and next-token targets.
std::pair<kael::Tensor, kael::Tensor> batch_of(const std::vector<std::int64_t>& ids,
                                               std::size_t begin, std::size_t end,
                                               std::int64_t batch, std::int64_t block,
                                               std::mt19937_64& random,
                                               const kael::Device& device) {
    std::uniform_int_distribution<std::size_t> pick(begin,
                                                    end - static_cast<std::size_t>(block) - 1);
    std::vector<std::int64_t> inputs;
    std::vector<std::int64_t> targets;
    for (std::int64_t b = 0; b < batch; ++b) {
        const std::size_t start = pick(random);
        inputs.insert(inputs.end(), ids.begin() + static_cast<std::ptrdiff_t>(start),
                      ids.begin() + static_cast<std::ptrdiff_t>(start) + block);
        targets.insert(targets.end(), ids.begin() + static_cast<std::ptrdiff_t>(start) + 1,
                       ids.begin() + static_cast<std::ptrdiff_t>(start) + block + 1);
    }
    return {kael::tensor(inputs, {batch, block}, device),
            kael::tensor(targets, {batch, block}, device)};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Trains a character-level GPT and generates text"};
    std::string device_name = "cpu";
    std::string text_path = "/usr/share/common-licenses/GPL-3";
    std::int64_t steps = 600;
    std::int64_t batch = 16;
    std::int64_t block = 32;
    std::int64_t embed = 64;
    std::int64_t layers = 2;
    std::int64_t heads = 4;
    double lr = 3e-3;
    std::int64_t evaluate_every = 100;
    std::int64_t generate_count = 200;
    std::uint64_t seed = 1337;
    app.add_option("--device", device_name, "cpu, cuda or cuda:N");
    app.add_option("--text", text_path, "an English text file");
    app.add_option("--steps", steps);
    app.add_option("--batch", batch);
    app.add_option("--block", block);
    app.add_option("--embed", embed);
    app.add_option("--layers", layers);
    app.add_option("--heads", heads);
    app.add_option("--lr", lr);
    app.add_option("--eval-every", evaluate_every);
    app.add_option("--generate", generate_count, "characters to generate after training");
    app.add_option("--seed", seed);
    CLI11_PARSE(app, argc, argv);
    try {
        const kael::Device device(device_name);
        kael::require_device(device);
        kael::manual_seed(seed);
        const Corpus corpus = read_corpus(text_path);
        const std::size_t split = corpus.ids.size() * 9 / 10;
        kael::nn::GPTConfig config;
        config.vocab_size = static_cast<std::int64_t>(corpus.alphabet.size());
        config.block_size = block;
        config.layers = layers;
        config.heads = heads;
        config.embed = embed;
        kael::nn::GPT model(config, device);
        kael::optim::AdamW optimizer(model.parameters(), lr, 0.9, 0.99, 1e-8, 0.01);
        std::mt19937_64 random(seed);
        auto validation_loss = [&] {
            const kael::NoGradGuard guard;
            std::mt19937_64 fixed(seed + 1);  // the same validation windows every time
            double total = 0;
            for (int i = 0; i < 8; ++i) {
                const auto [x, y] =
                    batch_of(corpus.ids, split, corpus.ids.size(), batch, block, fixed, device);
                total += model.loss(x, y).item<double>();
            }
            return total / 8;
        };
        std::printf("char-GPT on %s: %zu characters, vocabulary %lld, %lld parameters, %s\n",
                    text_path.c_str(), corpus.ids.size(), static_cast<long long>(config.vocab_size),
                    static_cast<long long>(model.parameter_count()), device.str().c_str());
        const double first = validation_loss();
        std::printf("step 0: validation loss %.4f\n", first);
        double last = first;
        kael::examples::Progress progress("training", steps);
        for (std::int64_t step = 1; step <= steps; ++step) {
            const auto [x, y] = batch_of(corpus.ids, 0, split, batch, block, random, device);
            const kael::Tensor loss = model.loss(x, y);
            optimizer.zero_grad();
            loss.backward();
            optimizer.step();
            progress.update(step, "loss " + std::to_string(loss.item<float>()));
            if (step % evaluate_every == 0 || step == steps) {
                last = validation_loss();
                std::fprintf(stderr, "\n");
                std::printf("step %lld: validation loss %.4f (%.1f s)\n",
                            static_cast<long long>(step), last, progress.seconds());
            }
        }
        std::printf("validation loss fell from %.4f to %.4f (%.0f%% lower)\n", first, last,
                    100 * (1 - last / first));
        const std::vector<std::int64_t> prompt(corpus.ids.begin(), corpus.ids.begin() + 8);
        const auto generated = model.generate(prompt, generate_count, 0.8);
        std::string text;
        for (const std::int64_t id : generated) {
            text += corpus.alphabet[static_cast<std::size_t>(id)];
        }
        std::printf("--- generated ---\n%s\n-----------------\n", text.c_str());
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "char_gpt: " << error.what() << "\n";
        return 1;
    }
}
