#define BOOST_TEST_MODULE nn
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>
#include <string>

#include "kael/autograd.h"
#include "kael/nn.h"
#include "kael/optim.h"
#include "nn_test_support.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using kael::autograd::gradcheck;
namespace nn = kael::nn;
namespace optim = kael::optim;
namespace fs = std::filesystem;
namespace tt = boost::test_tools;

namespace {

std::vector<char> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes, std::size_t count) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(count));
}

std::vector<std::vector<double>> snapshot(const nn::Module& module) {
    std::vector<std::vector<double>> values;
    for (const Tensor& parameter : module.parameters()) values.push_back(v(parameter));
    return values;
}

void perturb(const nn::Module& module) {
    const kael::NoGradGuard guard;
    for (Tensor parameter : module.parameters()) parameter.copy_(parameter.detach() + 0.25);
}

// x [rows, in] times w [out, in]^T plus b, in plain loops.
std::vector<double> linear_reference(const std::vector<double>& x, const std::vector<double>& w,
                                     const std::vector<double>& b, std::size_t in,
                                     std::size_t out) {
    const std::size_t rows = x.size() / in;
    std::vector<double> y(rows * out);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t o = 0; o < out; ++o) {
            double total = b.empty() ? 0.0 : b[o];
            for (std::size_t i = 0; i < in; ++i) total += x[r * in + i] * w[o * in + i];
            y[r * out + o] = total;
        }
    }
    return y;
}

}  // namespace

BOOST_AUTO_TEST_CASE(named_parameters_follow_registration_order) {
    kael::manual_seed(1);
    auto first = std::make_shared<nn::Linear>(3, 4);
    auto last = std::make_shared<nn::Linear>(4, 2, false);
    nn::Sequential model({first, std::make_shared<nn::ReLU>(), last});
    const auto named = model.named_parameters();
    BOOST_REQUIRE_EQUAL(named.size(), 3U);
    BOOST_TEST(named[0].first == "0.weight");
    BOOST_TEST(named[1].first == "0.bias");
    BOOST_TEST(named[2].first == "2.weight");
    BOOST_TEST(named[0].second.same_impl(first->weight));
    BOOST_TEST(named[1].second.same_impl(first->bias));
    BOOST_TEST(named[2].second.same_impl(last->weight));
    BOOST_TEST(!last->bias.defined());
    BOOST_TEST(model.parameter_count() == 3 * 4 + 4 + 4 * 2);
    for (const Tensor& parameter : model.parameters()) {
        BOOST_TEST(parameter.requires_grad());
        BOOST_TEST(parameter.is_leaf());
    }

    nn::Sequential nested(
        {std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
             std::make_shared<nn::Tanh>(), std::make_shared<nn::LayerNorm>(5)}),
         std::make_shared<nn::Linear>(5, 1)});
    std::vector<std::string> names;
    for (const auto& [name, parameter] : nested.named_parameters()) names.push_back(name);
    BOOST_TEST(names == (std::vector<std::string>{"0.1.weight", "0.1.bias", "1.weight", "1.bias"}),
               tt::per_element());
    BOOST_TEST(nested.parameter_count() == 5 + 5 + 5 + 1);
}

BOOST_AUTO_TEST_CASE(train_and_eval_reach_children) {
    kael::manual_seed(2);
    auto dropout = std::make_shared<nn::Dropout>(0.5);
    auto inner =
        std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{dropout});
    nn::Sequential model({std::make_shared<nn::Linear>(2, 2), inner});
    BOOST_TEST(dropout->is_training());
    model.eval();
    BOOST_TEST(!model.is_training());
    BOOST_TEST(!inner->is_training());
    BOOST_TEST(!dropout->is_training());
    const Tensor x = kael::ones({64});
    BOOST_TEST(v((*dropout)(x)) == v(x), tt::per_element());

    model.train();
    BOOST_TEST(dropout->is_training());
    const std::vector<double> dropped = v((*dropout)(x));
    int zeros = 0;
    for (const double value : dropped) {
        BOOST_TEST((value == 0.0 || value == 2.0));
        zeros += value == 0.0 ? 1 : 0;
    }
    BOOST_TEST(zeros > 0);
    BOOST_TEST(zeros < 64);
}

BOOST_AUTO_TEST_CASE(zero_grad_clears_gradients) {
    kael::manual_seed(3);
    nn::Linear layer(3, 2);
    kael::sum(layer(kael::ones({4, 3}))).backward();
    BOOST_TEST(layer.weight.grad().defined());
    BOOST_TEST(layer.bias.grad().defined());
    BOOST_TEST(v(layer.bias.grad()) == (std::vector<double>{4, 4}), tt::per_element());
    layer.zero_grad();
    BOOST_TEST(!layer.weight.grad().defined());
    BOOST_TEST(!layer.bias.grad().defined());
}

BOOST_AUTO_TEST_CASE(linear_computes_x_w_transposed_plus_b) {
    kael::manual_seed(4);
    nn::Linear layer(3, 5);
    BOOST_TEST(layer.weight.shape() == (Shape{5, 3}));
    BOOST_TEST(layer.bias.shape() == (Shape{5}));
    const std::vector<double> w = v(layer.weight);
    const std::vector<double> b = v(layer.bias);
    for (const Shape& shape : {Shape{4, 3}, Shape{2, 3, 3}}) {
        const Tensor x = kael::randn(shape);
        const Tensor y = layer(x);
        Shape expected_shape = shape;
        expected_shape.back() = 5;
        BOOST_TEST(y.shape() == expected_shape);
        check_close(v(y), linear_reference(v(x), w, b, 3, 5), 1e-5, 1e-5);
    }
    nn::Linear no_bias(3, 2, false);
    const Tensor x = kael::randn({2, 3});
    check_close(v(no_bias(x)), linear_reference(v(x), v(no_bias.weight), {}, 3, 2), 1e-5, 1e-5);
}

// The fused matmul_bias path: gradients of x, weight and bias (the sum of the output gradient
// over rows), for 2-d, batched and transposed operands, on every device.
// The epilogue form equals the composed ops, forward and (recorded) backward.
BOOST_AUTO_TEST_CASE(linear_with_an_epilogue_is_the_composed_ops) {
    kael::manual_seed(8);
    const Tensor x = kael::randn({2, 3, 4}, DType::F64).set_requires_grad(true);
    const Tensor w = kael::randn({5, 4}, DType::F64).set_requires_grad(true);
    const Tensor b = kael::randn({5}, DType::F64).set_requires_grad(true);
    const Tensor r = kael::randn({2, 3, 5}, DType::F64).set_requires_grad(true);
    const auto composed = [&] { return kael::gelu(kael::linear(x, w, b), true) + r; };
    {
        const kael::NoGradGuard no_grad;
        BOOST_TEST(
            kael::allclose(kael::linear(x, w, b, kael::Activation::GeluTanh, r), composed()));
        BOOST_TEST(kael::allclose(kael::linear(x, w, Tensor(), kael::Activation::None, r),
                                  kael::linear(x, w) + r));
        BOOST_TEST(kael::allclose(kael::linear(x, w, b, kael::Activation::GeluTanh),
                                  kael::gelu(kael::linear(x, w, b), true)));
        // A residual that broadcasts, as + does.
        BOOST_TEST(kael::allclose(kael::linear(x, w, b, kael::Activation::None, b),
                                  kael::linear(x, w, b) + b));
    }
    BOOST_TEST(kael::autograd::gradcheck(
        [](const std::vector<Tensor>& in) {
            return kael::linear(in[0], in[1], in[2], kael::Activation::GeluTanh, in[3]);
        },
        {x, w, b, r}));
    BOOST_CHECK_THROW(
        (void)kael::linear(x, kael::randn({5, 3}, DType::F64), b, kael::Activation::None),
        kael::ValueError);
}

// layer_norm_linear is linear(layer_norm(x)) with its epilogue: the same values on every
// device (one row, the shape a device may fuse, and several rows), and while autograd records,
// the composed ops' gradients.
BOOST_AUTO_TEST_CASE(layer_norm_linear_is_the_composed_ops) {
    kael::manual_seed(9);
    for (const kael::Device& device : test_devices()) {
        for (const std::int64_t rows : {1, 3}) {
            BOOST_TEST_CONTEXT("on " << device.str() << ", rows " << rows) {
                const auto leaf = [&](const Shape& shape) {
                    return kael::randn(shape, DType::F64).to(device).set_requires_grad(true);
                };
                const Tensor x = leaf({rows, 8});
                const Tensor g = leaf({8});
                const Tensor beta = leaf({8});
                const Tensor w = leaf({5, 8});
                const Tensor b = leaf({5});
                const Tensor r = leaf({rows, 5});
                const auto fused = [](const std::vector<Tensor>& in) {
                    return kael::layer_norm_linear(in[0], in[1], in[2], 1e-5, in[3], in[4],
                                                   kael::Activation::GeluTanh, in[5]);
                };
                {
                    const kael::NoGradGuard no_grad;
                    const Tensor composed = kael::linear(kael::layer_norm(x, g, beta, 1e-5), w, b,
                                                         kael::Activation::GeluTanh, r);
                    BOOST_TEST(kael::allclose(fused({x, g, beta, w, b, r}), composed));
                }
                BOOST_TEST(kael::autograd::gradcheck(fused, {x, g, beta, w, b, r}));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(linear_with_bias_passes_gradcheck) {
    kael::manual_seed(6);
    using Inputs = std::vector<Tensor>;
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT("on " << device.str()) {
            const auto leaf = [&](const Shape& shape) {
                return kael::randn(shape, DType::F64).to(device).set_requires_grad(true);
            };
            const Tensor b = leaf({5});
            BOOST_TEST(gradcheck(
                [](const Inputs& in) { return kael::linear(in[0], in[1], in[2]); },
                {leaf({4, 3}), leaf({5, 3}), b}));
            BOOST_TEST(gradcheck(
                [](const Inputs& in) { return kael::linear(in[0], in[1], in[2]); },
                {leaf({2, 4, 3}), leaf({5, 3}), b}));
            BOOST_TEST(gradcheck(  // x and weight as transposed views
                [](const Inputs& in) { return kael::linear(in[0].T(), in[1].T(), in[2]); },
                {leaf({3, 4}), leaf({3, 5}), b}));
            BOOST_TEST(gradcheck(  // a residual in the product, as GPT blocks train
                [](const Inputs& in) {
                    return kael::linear(in[0], in[1], in[2], kael::Activation::None, in[3]);
                },
                {leaf({2, 4, 3}), leaf({5, 3}), b, leaf({2, 4, 5})}));
        }
    }
}

BOOST_AUTO_TEST_CASE(linear_init_stays_within_bound) {
    kael::manual_seed(5);
    nn::Linear layer(50, 40);
    const double bound = 1.0 / std::sqrt(50.0);
    double largest = 0;
    for (const Tensor& parameter : {layer.weight, layer.bias}) {
        for (const double value : v(parameter)) {
            BOOST_TEST(std::abs(value) <= bound);
            largest = std::max(largest, std::abs(value));
        }
    }
    // 2040 uniform draws: the largest is close to the bound, not far inside it.
    BOOST_TEST(largest > 0.9 * bound);
}

BOOST_AUTO_TEST_CASE(embedding_picks_rows) {
    kael::manual_seed(6);
    nn::Embedding table(10, 4);
    const std::vector<double> weight = v(table.weight);
    const std::vector<std::int64_t> indices{3, 0, 9, 3, 7, 1};
    const Tensor rows = table(kael::tensor(indices, {2, 3}));
    BOOST_TEST(rows.shape() == (Shape{2, 3, 4}));
    std::vector<double> expected;
    for (const std::int64_t index : indices) {
        for (std::size_t d = 0; d < 4; ++d) expected.push_back(weight[index * 4 + d]);
    }
    BOOST_TEST(v(rows) == expected, tt::per_element());
    BOOST_CHECK_THROW(table(kael::tensor(std::vector<std::int64_t>{2, 10})), kael::IndexError);
    BOOST_CHECK_THROW(table(kael::tensor(std::vector<std::int64_t>{-1})), kael::IndexError);
}

BOOST_AUTO_TEST_CASE(layer_norm_normalizes_rows) {
    kael::manual_seed(7);
    nn::LayerNorm norm(8);
    const Tensor x = kael::randn({3, 8}) * 3.0 + 1.5;
    const std::vector<double> in = v(x);
    const std::vector<double> out = v(norm(x));
    for (std::size_t r = 0; r < 3; ++r) {
        double mean = 0;
        double variance = 0;
        for (std::size_t c = 0; c < 8; ++c) mean += out[r * 8 + c] / 8;
        for (std::size_t c = 0; c < 8; ++c) variance += std::pow(out[r * 8 + c] - mean, 2) / 8;
        BOOST_TEST(std::abs(mean) < 1e-5);
        BOOST_TEST(variance == 1.0, tt::tolerance(1e-4));
    }
    // With a weight and bias: w * (x - mean) / sqrt(var + eps) + b.
    {
        const kael::NoGradGuard guard;
        norm.weight.copy_(kael::arange(1, 9));
        norm.bias.copy_(kael::arange(0, 8) * -0.5);
    }
    const std::vector<double> scaled = v(norm(x));
    for (std::size_t r = 0; r < 3; ++r) {
        double mean = 0;
        double variance = 0;
        for (std::size_t c = 0; c < 8; ++c) mean += in[r * 8 + c] / 8;
        for (std::size_t c = 0; c < 8; ++c) variance += std::pow(in[r * 8 + c] - mean, 2) / 8;
        for (std::size_t c = 0; c < 8; ++c) {
            const double expected =
                static_cast<double>(c + 1) * (in[r * 8 + c] - mean) / std::sqrt(variance + 1e-5) -
                0.5 * static_cast<double>(c);
            BOOST_TEST(scaled[r * 8 + c] == expected, tt::tolerance(1e-4));
        }
    }
}

BOOST_AUTO_TEST_CASE(activation_modules) {
    const std::vector<double> in{-2.0, -0.5, 0.0, 0.3, 1.7};
    const Tensor x = kael::tensor(in);
    auto apply = [&](nn::Module& module, double (*reference)(double)) {
        const std::vector<double> out = v(module(x));
        for (std::size_t i = 0; i < in.size(); ++i) {
            BOOST_TEST(out[i] == reference(in[i]), tt::tolerance(1e-5));
        }
    };
    nn::ReLU relu;
    nn::Sigmoid sigmoid;
    nn::Tanh tanh_module;
    nn::GELU gelu;
    nn::GELU gelu_tanh(true);
    apply(relu, [](double a) { return a > 0 ? a : 0.0; });
    apply(sigmoid, [](double a) { return 1 / (1 + std::exp(-a)); });
    apply(tanh_module, [](double a) { return std::tanh(a); });
    apply(gelu, [](double a) { return 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))); });
    apply(gelu_tanh, [](double a) {
        return 0.5 * a *
               (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (a + 0.044715 * a * a * a)));
    });
    BOOST_CHECK_THROW(nn::Dropout(1.0)(x), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(save_and_load_round_trip) {
    kael::manual_seed(8);
    nn::Sequential model({std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
                          std::make_shared<nn::LayerNorm>(4)});
    const TempFile file("nn_round_trip");
    model.save(file.path.string());
    const auto saved = snapshot(model);
    const auto handles = model.parameters();
    perturb(model);
    BOOST_TEST((snapshot(model) != saved));
    model.load(file.path.string());
    BOOST_TEST((snapshot(model) == saved));
    const auto after = model.parameters();
    for (std::size_t i = 0; i < handles.size(); ++i) {
        BOOST_TEST(after[i].same_impl(handles[i]));
        BOOST_TEST(after[i].requires_grad());
    }
    // A second module of the same architecture takes the same values.
    kael::manual_seed(99);
    nn::Sequential copy({std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
                         std::make_shared<nn::LayerNorm>(4)});
    copy.load(file.path.string());
    BOOST_TEST((snapshot(copy) == saved));
}

BOOST_AUTO_TEST_CASE(load_rejects_mismatch_and_leaves_module_unchanged) {
    kael::manual_seed(9);
    nn::Sequential small({std::make_shared<nn::LayerNorm>(4), std::make_shared<nn::Linear>(4, 3)});
    const TempFile file("nn_mismatch");
    small.save(file.path.string());

    // Same names; the first parameters match, "1.weight" does not.
    nn::Sequential wide({std::make_shared<nn::LayerNorm>(4), std::make_shared<nn::Linear>(4, 5)});
    const auto before = snapshot(wide);
    BOOST_CHECK_EXCEPTION(
        wide.load(file.path.string()), kael::ValueError, [](const kael::ValueError& error) {
            return std::string(error.what()).find("1.weight") != std::string::npos;
        });
    BOOST_TEST((snapshot(wide) == before));

    nn::Linear other_names(4, 3);
    BOOST_CHECK_THROW(other_names.load(file.path.string()), kael::ValueError);
    BOOST_CHECK_EXCEPTION(small.load((file.path.string() + ".missing")), kael::OSError,
                          [](const kael::OSError& error) { return error.code() == ENOENT; });
}

BOOST_AUTO_TEST_CASE(load_rejects_truncated_and_foreign_files) {
    kael::manual_seed(10);
    nn::Linear layer(6, 5);
    const TempFile file("nn_full");
    layer.save(file.path.string());
    const std::vector<char> bytes = read_bytes(file.path);
    BOOST_REQUIRE_GT(bytes.size(), 30U * 4U);
    const auto before = snapshot(layer);
    const TempFile broken("nn_broken");
    // Cut inside the magic, the count, a name, a shape, the data and the last byte.
    for (const std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{12}, std::size_t{20},
                                  std::size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
        BOOST_TEST_CONTEXT("cut at " << cut) {
            write_bytes(broken.path, bytes, cut);
            BOOST_CHECK_THROW(layer.load(broken.path.string()), kael::ValueError);
            BOOST_TEST((snapshot(layer) == before));
        }
    }
    const std::string text = "this is plain text, not a parameter file";
    write_bytes(broken.path, std::vector<char>(text.begin(), text.end()), text.size());
    BOOST_CHECK_EXCEPTION(
        layer.load(broken.path.string()), kael::ValueError, [](const kael::ValueError& error) {
            return std::string(error.what()).find("not a kael") != std::string::npos;
        });
    BOOST_TEST((snapshot(layer) == before));
}


BOOST_AUTO_TEST_CASE(layer_constructors_reject_non_positive_sizes) {
    auto says = [](const std::string& text) {
        return [text](const kael::ValueError& error) {
            BOOST_TEST_MESSAGE("message: " << error.what());
            return std::string(error.what()) == text;
        };
    };
    BOOST_CHECK_EXCEPTION(nn::Linear(-1, 3), kael::ValueError,
                          says("Linear: in_features must be positive, got -1"));
    BOOST_CHECK_EXCEPTION(nn::Linear(3, 0), kael::ValueError,
                          says("Linear: out_features must be positive, got 0"));
    BOOST_CHECK_EXCEPTION(nn::Embedding(0, 4), kael::ValueError,
                          says("Embedding: num_embeddings must be positive, got 0"));
    BOOST_CHECK_EXCEPTION(nn::Embedding(4, -2), kael::ValueError,
                          says("Embedding: embedding_dim must be positive, got -2"));
    BOOST_CHECK_EXCEPTION(nn::LayerNorm(0), kael::ValueError,
                          says("LayerNorm: normalized_shape must be positive, got 0"));
    BOOST_CHECK_THROW(nn::LayerNorm(3, -1e-5), kael::ValueError);
    BOOST_CHECK_THROW(nn::LayerNorm(3, std::nan("")), kael::ValueError);
    BOOST_CHECK_THROW(nn::Dropout(-0.1), kael::ValueError);
    BOOST_CHECK_THROW(nn::Dropout(std::nan("")), kael::ValueError);
    BOOST_CHECK_THROW(nn::Sequential({nullptr}), kael::ValueError);
}
