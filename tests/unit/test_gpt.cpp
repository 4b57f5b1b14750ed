#include <boost/test/unit_test.hpp>
#include <optional>
#include <cmath>

#include "kael/autograd.h"
#include "kael/gpt.h"
#include "nn_test_support.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
namespace nn = kael::nn;
namespace tt = boost::test_tools;

namespace {

nn::GPTConfig tiny_config(std::int64_t block_size = 8) {
    nn::GPTConfig config;
    config.vocab_size = 11;
    config.block_size = block_size;
    config.layers = 2;
    config.heads = 2;
    config.embed = 8;
    return config;
}

Tensor tokens(const std::vector<std::int64_t>& values, std::int64_t batch = 1) {
    return kael::tensor(values, {batch, static_cast<std::int64_t>(values.size()) / batch});
}

std::int64_t argmax_of(const std::vector<float>& values) {
    return std::max_element(values.begin(), values.end()) - values.begin();
}

// Greedy next token from a plain forward (no cache) over context.
std::int64_t next_token(nn::GPT& model, const std::vector<std::int64_t>& context) {
    const kael::NoGradGuard guard;
    const Tensor logits = model.forward(tokens(context)).select(1, -1).select(0, 0);
    return argmax_of(logits.to_vector<float>());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpt)

BOOST_AUTO_TEST_CASE(forward_shapes_and_parameters) {
    kael::manual_seed(20);
    const nn::GPTConfig config = tiny_config();
    nn::GPT model(config);
    const Tensor logits = model.forward(kael::randint(0, config.vocab_size, {3, 5}));
    BOOST_TEST(logits.shape() == (Shape{3, 5, config.vocab_size}));
    BOOST_TEST((logits.dtype() == DType::F32));

    const std::int64_t c = config.embed;
    const std::int64_t per_block =
        2 * (2 * c) + (3 * c * c + 3 * c) + (c * c + c) + (4 * c * c + 4 * c) + (4 * c * c + c);
    BOOST_TEST(model.parameter_count() == config.vocab_size * c + config.block_size * c +
                                              config.layers * per_block + 2 * c +
                                              config.vocab_size * c);
    const auto named = model.named_parameters();
    BOOST_TEST(named.front().first == "token_embedding.weight");
    BOOST_TEST(named[2].first == "blocks.0.norm1.weight");
    BOOST_TEST(named[4].first == "blocks.0.attention.query_key_value.weight");
    BOOST_TEST(named.back().first == "head.weight");
}

BOOST_AUTO_TEST_CASE(loss_at_init_is_near_log_vocab) {
    kael::manual_seed(21);
    nn::GPTConfig config = tiny_config(16);
    config.vocab_size = 64;
    config.embed = 32;
    nn::GPT model(config);
    const Tensor input = kael::randint(0, config.vocab_size, {4, 16});
    const Tensor target = kael::randint(0, config.vocab_size, {4, 16});
    const double loss = model.loss(input, target).item<double>();
    BOOST_TEST(std::abs(loss - std::log(64.0)) < 0.5);
}

BOOST_AUTO_TEST_CASE(later_tokens_do_not_change_earlier_logits) {
    kael::manual_seed(22);
    nn::GPT model(tiny_config());
    const std::vector<float> a = model.forward(tokens({1, 2, 3, 4, 5})).to_vector<float>();
    const std::vector<float> b = model.forward(tokens({1, 2, 3, 9, 0})).to_vector<float>();
    const std::size_t vocab = 11;
    const std::vector<float> a_head(a.begin(), a.begin() + 3 * vocab);
    const std::vector<float> b_head(b.begin(), b.begin() + 3 * vocab);
    check_close(a_head, b_head, 1e-6);
    BOOST_TEST((a != b));
}

BOOST_AUTO_TEST_CASE(kv_cache_matches_full_forward) {
    kael::manual_seed(23);
    nn::GPT model(tiny_config());
    const std::vector<std::int64_t> sequence{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};  // batch 2
    const Tensor all = tokens(sequence, 2);
    const std::vector<float> full = model.forward(all).to_vector<float>();

    // One token at a time, then a chunk of 2 followed by a chunk of 4.
    for (const std::vector<std::int64_t>& chunks :
         {std::vector<std::int64_t>{1, 1, 1, 1, 1, 1}, std::vector<std::int64_t>{2, 4}}) {
        nn::KVCache cache;
        std::vector<Tensor> pieces;
        std::int64_t start = 0;
        for (const std::int64_t length : chunks) {
            pieces.push_back(model.forward(all.slice(1, start, start + length), &cache));
            start += length;
            BOOST_TEST(cache.length() == start);
        }
        const Tensor stepped = kael::cat(pieces, 1);
        BOOST_TEST(stepped.shape() == (Shape{2, 6, 11}));
        check_close(stepped.to_vector<float>(), full, 1e-5);
        // The cache holds every layer, [B, H, T, head_dim].
        BOOST_TEST(cache.keys.size() == 2U);
        BOOST_TEST(cache.values[1].shape() == (Shape{2, 2, 6, 4}));
        // Two more positions fit, three do not.
        BOOST_CHECK_THROW(model.forward(tokens({1, 2, 3, 4, 5, 6}, 2), &cache), kael::ValueError);
    }

    // Without grad the cache is a view of a buffer that later steps write past its end: the
    // results stay the same, an earlier cache tensor keeps its values, and a cache begun with
    // grad on continues.
    for (const bool first_with_grad : {false, true}) {
        BOOST_TEST_CONTEXT("first chunk with grad " << first_with_grad) {
            nn::KVCache cache;
            std::vector<Tensor> pieces;
            {
                std::optional<kael::NoGradGuard> no_grad;
                if (!first_with_grad) {
                    no_grad.emplace();
                }
                pieces.push_back(model.forward(all.slice(1, 0, 2), &cache).detach());
            }
            const kael::NoGradGuard no_grad;
            const Tensor early_keys = cache.keys[0];
            const std::vector<float> early_values = early_keys.to_vector<float>();
            for (std::int64_t start = 2; start < 6; ++start) {
                pieces.push_back(model.forward(all.slice(1, start, start + 1), &cache));
            }
            check_close(kael::cat(pieces, 1).to_vector<float>(), full, 1e-5);
            BOOST_TEST(early_keys.shape() == (Shape{2, 2, 2, 4}));
            BOOST_TEST(early_keys.to_vector<float>() == early_values, tt::per_element());
            BOOST_TEST(cache.values[1].shape() == (Shape{2, 2, 6, 4}));
            // Keys and values share one buffer, which the decoding steps kept (batch 2 here).
            BOOST_TEST(cache.keys[1].impl().storage == cache.values[1].impl().storage);
            BOOST_TEST((cache.keys[0].impl().storage == early_keys.impl().storage) ==
                       !first_with_grad);
        }
    }
    // A batch of one keeps its buffer too: every decoding step appends in place.
    const kael::NoGradGuard no_grad;
    nn::KVCache single;
    (void)model.forward(all.slice(0, 0, 1).slice(1, 0, 2), &single);
    const auto buffer = single.keys[0].impl().storage;
    for (std::int64_t start = 2; start < 6; ++start) {
        (void)model.forward(all.slice(0, 0, 1).slice(1, start, start + 1), &single);
    }
    BOOST_TEST(single.keys[0].impl().storage == buffer);
    BOOST_TEST(single.values[1].shape() == (Shape{1, 2, 6, 4}));
}

// The fixed cache a recorded decoding step uses (GPT::generate on a device that records) gives
// the eager cache's logits step for step, with its position kept on the device.
BOOST_AUTO_TEST_CASE(fixed_capacity_cache_matches_the_growing_one) {
    kael::manual_seed(5);
    nn::GPT model(tiny_config(8));
    model.eval();
    const std::vector<std::int64_t> sequence{3, 1, 4, 1, 5, 9, 2};
    const Tensor all = tokens(sequence);
    nn::KVCache with_grad;  // its keys are views of the projection, not of a cache buffer
    (void)model.forward(all.slice(1, 0, 2), &with_grad);
    BOOST_TEST(!nn::fixed_capacity(with_grad).has_value());
    const kael::NoGradGuard no_grad;
    const std::vector<float> full = model.forward(all).to_vector<float>();
    nn::KVCache cache;
    std::vector<Tensor> pieces{model.forward(all.slice(1, 0, 3), &cache)};
    std::optional<nn::KVCache> fixed = nn::fixed_capacity(cache);
    BOOST_REQUIRE(fixed.has_value());
    BOOST_TEST(fixed->keys[1].shape() == (Shape{1, 2, 8, 4}));  // the whole capacity
    BOOST_TEST(fixed->position.to_vector<std::int64_t>() == std::vector<std::int64_t>{3},
               tt::per_element());
    const Tensor one = kael::full({1}, 1, DType::I64);
    for (std::int64_t start = 3; start < 7; ++start) {
        pieces.push_back(model.forward(all.slice(1, start, start + 1), &*fixed));
        kael::add_(fixed->position, one);
    }
    check_close(kael::cat(pieces, 1).to_vector<float>(), full, 1e-5);
    // The eager cache's buffers were written: its views over 7 tokens continue the sequence.
    BOOST_TEST(fixed->keys[0].impl().storage == cache.keys[0].impl().storage);
    BOOST_CHECK_THROW(model.forward(all.slice(1, 0, 2), &*fixed), kael::ValueError);  // 2 tokens
    // Other layouts are refused: no cache, a batch of two, a cache made with grad on.
    BOOST_TEST(!nn::fixed_capacity(nn::KVCache()).has_value());
    nn::KVCache batch;
    (void)model.forward(tokens({1, 2, 3, 4}, 2), &batch);
    BOOST_TEST(!nn::fixed_capacity(batch).has_value());
}

BOOST_AUTO_TEST_CASE(greedy_generation_is_deterministic) {
    kael::manual_seed(24);
    nn::GPT model(tiny_config(16));
    const std::vector<std::int64_t> prompt{4, 7, 1};
    const std::vector<std::int64_t> first = model.generate(prompt, 6);
    BOOST_REQUIRE_EQUAL(first.size(), 9U);
    BOOST_TEST(std::vector<std::int64_t>(first.begin(), first.begin() + 3) == prompt,
               tt::per_element());
    BOOST_TEST(model.generate(prompt, 6) == first, tt::per_element());
    for (std::size_t k = prompt.size(); k < first.size(); ++k) {
        const std::vector<std::int64_t> context(first.begin(), first.begin() + k);
        BOOST_TEST(first[k] == next_token(model, context), "token " << k);
    }
    BOOST_TEST(model.generate(prompt, 0) == prompt, tt::per_element());
    BOOST_CHECK_THROW(model.generate({}, 3), kael::ValueError);

    // Sampling: same seed, same tokens; every token in the vocabulary.
    kael::manual_seed(5);
    const std::vector<std::int64_t> sampled = model.generate(prompt, 10, 1.0);
    kael::manual_seed(5);
    BOOST_TEST(model.generate(prompt, 10, 1.0) == sampled, tt::per_element());
    for (const std::int64_t token : sampled) {
        BOOST_TEST((token >= 0 && token < 11));
    }
}

BOOST_AUTO_TEST_CASE(generation_rejects_non_finite_logits) {
    kael::manual_seed(28);
    nn::GPT model(tiny_config(16));
    BOOST_REQUIRE_NO_THROW(model.generate({1, 2}, 3));
    const auto parameters = model.parameters();
    kael::Tensor head = parameters.back().detach();  // the head's weight
    head.fill_(std::nan(""));
    for (const double temperature : {0.0, 1.0}) {
        BOOST_TEST_CONTEXT("temperature " << temperature) {
            BOOST_CHECK_EXCEPTION(model.generate({1, 2}, 3, temperature), kael::ValueError,
                                  [](const kael::ValueError& error) {
                                      return std::string(error.what()).find("non-finite") !=
                                             std::string::npos;
                                  });
        }
    }
}

BOOST_AUTO_TEST_CASE(generation_continues_past_block_size) {
    kael::manual_seed(25);
    const std::int64_t block = 5;
    nn::GPT model(tiny_config(block));
    const std::vector<std::int64_t> prompt{2, 9};
    const std::vector<std::int64_t> out = model.generate(prompt, 14);
    BOOST_REQUIRE_EQUAL(out.size(), 16U);
    BOOST_TEST(model.generate(prompt, 14) == out, tt::per_element());
    // Each token continues the tokens the cache holds: one more per step, and when it is full,
    // the latest 3/4 of block (here 4) again.
    const std::size_t keep = 4;
    std::size_t window = prompt.size();
    for (std::size_t k = prompt.size(); k < out.size(); ++k) {
        BOOST_TEST(out[k] == next_token(model, std::vector<std::int64_t>(out.begin() + k - window,
                                                                         out.begin() + k)),
                   "token " << k);
        window = window == std::size_t(block) ? keep : window + 1;
    }
    // A prompt longer than the context is cut to its latest block tokens.
    const std::vector<std::int64_t> long_prompt{1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<std::int64_t> continued = model.generate(long_prompt, 1);
    BOOST_REQUIRE_EQUAL(continued.size(), 9U);
    BOOST_TEST(continued[8] == next_token(model, {4, 5, 6, 7, 8}));
    // The smallest context still generates.
    nn::GPT one(tiny_config(1));
    const std::vector<std::int64_t> single = one.generate({3}, 4);
    BOOST_REQUIRE_EQUAL(single.size(), 5U);
    for (std::size_t k = 1; k < single.size(); ++k) {
        BOOST_TEST(single[k] == next_token(one, {single[k - 1]}));
    }
}

BOOST_AUTO_TEST_CASE(invalid_tokens_and_config_throw) {
    kael::manual_seed(26);
    nn::GPT model(tiny_config());
    BOOST_CHECK_THROW(model.forward(kael::zeros({1, 4})), kael::ValueError);
    BOOST_CHECK_THROW(model.forward(kael::zeros({1, 4}, DType::F64)), kael::ValueError);
    BOOST_CHECK_THROW(model.forward(kael::tensor(std::vector<std::int64_t>{1, 2})),
                      kael::ValueError);
    BOOST_CHECK_THROW(model.forward(kael::zeros({1, 1, 2}, DType::I64)), kael::ValueError);
    BOOST_CHECK_THROW(model.forward(kael::zeros({1, 9}, DType::I64)), kael::ValueError);
    BOOST_CHECK_THROW(model.forward(tokens({1, 11})), kael::IndexError);
    nn::GPTConfig bad = tiny_config();
    bad.heads = 3;
    BOOST_CHECK_THROW(nn::GPT{bad}, kael::ValueError);
}

BOOST_AUTO_TEST_CASE(dropout_follows_train_and_eval) {
    kael::manual_seed(27);
    nn::GPTConfig config = tiny_config();
    config.dropout = 0.3;
    nn::GPT model(config);
    const Tensor input = tokens({1, 2, 3, 4});
    BOOST_TEST(
        (model.forward(input).to_vector<float>() != model.forward(input).to_vector<float>()));
    model.eval();
    BOOST_TEST(model.forward(input).to_vector<float>() == model.forward(input).to_vector<float>(),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(backward_reaches_every_parameter) {
    kael::manual_seed(28);
    nn::GPT model(tiny_config());
    const Tensor input = kael::randint(0, 11, {2, 6});
    const Tensor target = kael::randint(0, 11, {2, 6});
    model.loss(input, target).backward();
    for (const auto& [name, parameter] : model.named_parameters()) {
        BOOST_TEST_CONTEXT(name) {
            const Tensor grad = parameter.grad();
            BOOST_REQUIRE(grad.defined());
            BOOST_TEST(grad.shape() == parameter.shape());
            double squares = 0;
            for (const double value : grad.to_vector<double>()) {
                BOOST_TEST(std::isfinite(value));
                squares += value * value;
            }
            BOOST_TEST(squares > 0);
        }
    }
    model.zero_grad();
    for (const Tensor& parameter : model.parameters()) BOOST_TEST(!parameter.grad().defined());
}

BOOST_AUTO_TEST_CASE(gradcheck_through_causal_attention) {
    // One head of a pre-norm attention layer, written with ops as CausalSelfAttention does:
    // x + proj(softmax(mask(q k^T / sqrt(d))) v) with q, k, v = linear(layer_norm(x)).
    auto layer = [](const std::vector<Tensor>& in) {
        const std::int64_t steps = in[0].size(0);
        const std::int64_t dim = in[1].size(0);
        const Tensor normed = kael::layer_norm(in[0]);
        const Tensor q = kael::linear(normed, in[1]);
        const Tensor k = kael::linear(normed, in[2]);
        const Tensor v = kael::linear(normed, in[3]);
        const Tensor rows = kael::arange(0, double(steps), 1, DType::I64).unsqueeze(1);
        const Tensor columns = kael::arange(0, double(steps), 1, DType::I64).unsqueeze(0);
        const Tensor scores =
            kael::masked_fill(kael::matmul(q, k.T()) * (1.0 / std::sqrt(double(dim))),
                              kael::gt(columns, rows), -INFINITY);
        return in[0] + kael::linear(kael::matmul(kael::softmax(scores, -1), v), in[4]);
    };
    auto weights = [](const Shape& shape, double scale) {
        return (kael::randn(shape, DType::F64) * scale).set_requires_grad(true);
    };
    kael::manual_seed(29);
    const Tensor x = kael::randn({4, 6}, DType::F64).set_requires_grad(true);
    const std::vector<Tensor> inputs{x, weights({3, 6}, 0.5), weights({3, 6}, 0.5),
                                     weights({3, 6}, 0.5), weights({6, 3}, 0.5)};
    BOOST_TEST(kael::autograd::gradcheck(layer, inputs));

    // Causality: the first output row depends on the first input row only.
    kael::sum(layer(inputs).select(0, 0)).backward();
    const std::vector<double> grad = x.grad().to_vector<double>();
    double first_row = 0;
    for (std::size_t i = 0; i < grad.size(); ++i) {
        if (i < 6) {
            first_row += std::abs(grad[i]);
        } else {
            BOOST_TEST(grad[i] == 0.0);
        }
    }
    BOOST_TEST(first_row > 0);
}

// heads = 0 used to divide by zero (SIGFPE); every size is checked, naming the field.
BOOST_AUTO_TEST_CASE(config_sizes_must_be_positive) {
    using Field = std::int64_t nn::GPTConfig::*;
    const std::vector<std::pair<std::string, Field>> fields = {
        {"vocab_size", &nn::GPTConfig::vocab_size}, {"block_size", &nn::GPTConfig::block_size},
        {"layers", &nn::GPTConfig::layers},         {"heads", &nn::GPTConfig::heads},
        {"embed", &nn::GPTConfig::embed}};
    for (const auto& [name, field] : fields) {
        for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-2}}) {
            nn::GPTConfig config = tiny_config();
            config.*field = bad;
            const std::string expected =
                "GPT: " + name + " must be positive, got " + std::to_string(bad);
            BOOST_CHECK_EXCEPTION(nn::GPT{config}, kael::ValueError,
                                  [&](const kael::ValueError& error) {
                                      BOOST_TEST_MESSAGE("message: " << error.what());
                                      return std::string(error.what()) == expected;
                                  });
        }
    }
    nn::GPTConfig zero_heads = tiny_config();
    zero_heads.heads = 0;
    BOOST_CHECK_THROW(nn::CausalSelfAttention(zero_heads, kael::kCPU), kael::ValueError);
    BOOST_CHECK_THROW(nn::Block(zero_heads, kael::kCPU), kael::ValueError);
    nn::GPTConfig bad_dropout = tiny_config();
    bad_dropout.dropout = 1.5;
    BOOST_CHECK_THROW(nn::GPT{bad_dropout}, kael::ValueError);
    bad_dropout.dropout = std::nan("");
    BOOST_CHECK_THROW(nn::GPT{bad_dropout}, kael::ValueError);
}

BOOST_AUTO_TEST_CASE(generate_rejects_bad_temperature_and_counts) {
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            kael::manual_seed(28);
            nn::GPT model(tiny_config(), device);
            for (const double temperature : {std::nan(""), -1.0, double(INFINITY)}) {
                BOOST_CHECK_EXCEPTION(model.generate({1, 2}, 3, temperature), kael::ValueError,
                                      [](const kael::ValueError& error) {
                                          return std::string(error.what()).find(
                                                     "generate: temperature") == 0;
                                      });
            }
            BOOST_CHECK_THROW(model.generate({1, 2}, -1), kael::ValueError);
            BOOST_CHECK_THROW(model.generate({1, 11}, 1), kael::IndexError);
            // Sampling still works, and every token is in the vocabulary.
            for (const std::int64_t token : model.generate({1, 2}, 5, 0.8)) {
                BOOST_TEST((token >= 0 && token < 11));
            }
            // NaN weights would pick one token forever; they are an error.
            {
                const kael::NoGradGuard guard;
                model.parameters().back().fill_(std::nan(""));
            }
            BOOST_CHECK_THROW(model.generate({1, 2}, 3, 1.0), kael::ValueError);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
