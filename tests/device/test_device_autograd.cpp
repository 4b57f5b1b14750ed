// Autograd, nn, optim and GPT on the device, step for step against the cpu.
#include "device_test_support.h"

using device_test::expect_matches_cpu;
using device_test::OnDevice;
using kael::DType;
using kael::Tensor;
namespace tt = boost::test_tools;

namespace {

// Gradients of sum(f(x) * w) for x on one device.
Tensor gradient_of(const Tensor& host_x, const kael::Device& device,
                   const std::function<Tensor(const Tensor&)>& f) {
    const Tensor x = host_x.to(device).detach().set_requires_grad(true);
    const Tensor out = f(x);
    const Tensor weight = kael::arange(1, static_cast<double>(out.numel()) + 1, 1, out.dtype())
                              .view(out.shape())
                              .to(device);
    kael::sum(out * weight).backward();
    return x.grad();
}

void expect_gradients_match(const Tensor& host_x, const kael::Device& device,
                            const std::function<Tensor(const Tensor&)>& f) {
    const Tensor on_device = gradient_of(host_x, device, f);
    BOOST_TEST((on_device.device() == device), "gradient stays on the device");
    expect_matches_cpu(on_device, gradient_of(host_x, kael::kCPU, f));
}

kael::nn::GPTConfig tiny_gpt() {
    kael::nn::GPTConfig config;
    config.vocab_size = 11;
    config.block_size = 12;
    config.layers = 2;
    config.heads = 2;
    config.embed = 16;
    return config;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(Cuda, OnDevice)

BOOST_AUTO_TEST_CASE(BackwardMatchesCpuAndStaysOnTheDevice) {
    const Tensor x = kael::randn({4, 5});
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::tanh(t) * kael::exp(t); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::relu(t) + kael::sigmoid(t); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::softmax(t, 1); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::matmul(t, t.T()); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::sum(t, 0) / kael::max(t); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::layer_norm(t); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::gelu(t, true); });
}

BOOST_AUTO_TEST_CASE(GradientsCrossDevicesBackToTheOrigin) {
    const Tensor leaf = kael::randn({3}).set_requires_grad(true);
    const Tensor moved = leaf.to(device);
    kael::sum(moved * moved).backward();
    BOOST_TEST(leaf.grad().device().is_cpu());
    expect_matches_cpu((leaf.detach() * 2.0).to(device), leaf.grad());
}

BOOST_AUTO_TEST_CASE(ViewAndIndexingGradientsMatchCpu) {
    const Tensor x = kael::randn({4, 6});
    expect_gradients_match(x, device, [](const Tensor& t) { return t.T().slice(0, 1, 6, 2); });
    expect_gradients_match(x, device, [](const Tensor& t) { return t.view({2, 12}).expand({3, 2, 12}); });
    expect_gradients_match(x, device, [](const Tensor& t) {
        return kael::gather(t, 1, kael::tensor(std::vector<std::int64_t>{0, 5, 5, 1}, {4, 1}).to(t.device()));
    });
    expect_gradients_match(x, device, [](const Tensor& t) {
        return kael::index_select(t, 0, kael::tensor(std::vector<std::int64_t>{3, 3, 0}).to(t.device()));
    });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::cat({t, t.select(0, 1).unsqueeze(0)}, 0); });
    expect_gradients_match(x, device, [](const Tensor& t) { return kael::cumsum(t, 1); });
}

BOOST_AUTO_TEST_CASE(GradcheckRunsOnTheDevice) {
    const Tensor a = kael::randn({3, 4}, DType::F64).to(device).set_requires_grad(true);
    const Tensor b = kael::randn({4, 2}, DType::F64).to(device).set_requires_grad(true);
    BOOST_TEST(kael::autograd::gradcheck(
        [](const std::vector<Tensor>& in) {
            return kael::sum(kael::tanh(kael::matmul(in[0], in[1])) * kael::sigmoid(kael::sum(in[1], 0)));
        },
        {a, b}));
}

BOOST_AUTO_TEST_CASE(ModuleToKeepsParameterIdentityAndValues) {
    kael::nn::Linear layer(3, 2);
    const std::vector<Tensor> before = layer.parameters();
    const std::vector<float> weight = layer.weight.to_vector<float>();
    kael::optim::SGD optimizer(layer.parameters(), 0.1);
    layer.to(device);
    const std::vector<Tensor> after = layer.parameters();
    for (std::size_t i = 0; i < before.size(); ++i) {
        BOOST_TEST(before[i].same_impl(after[i]));
        BOOST_TEST((after[i].device() == device));
    }
    BOOST_TEST(layer.weight.cpu().to_vector<float>() == weight, tt::per_element());
    kael::sum(layer(kael::ones({1, 3}).to(device))).backward();
    optimizer.step();  // the optimizer's handles see the moved parameters
    BOOST_TEST((optimizer.parameters()[0].device() == device));
    BOOST_TEST(layer.weight.cpu().to_vector<float>() != weight);
}

BOOST_AUTO_TEST_CASE(ModuleToMovesExistingGradients) {
    kael::nn::Linear layer(2, 2);
    kael::sum(layer(kael::ones({1, 2}))).backward();
    const Tensor gradient = layer.weight.grad();
    layer.to(device);
    BOOST_TEST((layer.weight.grad().device() == device));
    expect_matches_cpu(layer.weight.grad(), gradient);
}

BOOST_AUTO_TEST_CASE(LayersMatchCpu) {
    kael::manual_seed(11);
    kael::nn::Sequential cpu_model({std::make_shared<kael::nn::Linear>(6, 5),
                                    std::make_shared<kael::nn::GELU>(),
                                    std::make_shared<kael::nn::LayerNorm>(5),
                                    std::make_shared<kael::nn::Linear>(5, 3)});
    kael::manual_seed(11);
    kael::nn::Sequential device_model({std::make_shared<kael::nn::Linear>(6, 5),
                                       std::make_shared<kael::nn::GELU>(),
                                       std::make_shared<kael::nn::LayerNorm>(5),
                                       std::make_shared<kael::nn::Linear>(5, 3)});
    device_model.to(device);
    const Tensor x = kael::randn({4, 6});
    expect_matches_cpu(device_model(x.to(device)), cpu_model(x));
    kael::nn::Embedding embedding(7, 4);
    const Tensor tokens = kael::tensor(std::vector<std::int64_t>{1, 6, 6});
    const Tensor host_rows = embedding(tokens);
    embedding.to(device);
    expect_matches_cpu(embedding(tokens.to(device)), host_rows);
}

BOOST_AUTO_TEST_CASE(TrainingMatchesCpuStepByStep) {
    auto make = [](const kael::Device& target) {
        kael::manual_seed(5);
        auto model = std::make_shared<kael::nn::Sequential>(std::vector<std::shared_ptr<kael::nn::Module>>{
            std::make_shared<kael::nn::Linear>(8, 16), std::make_shared<kael::nn::ReLU>(),
            std::make_shared<kael::nn::Linear>(16, 4)});
        model->to(target);
        return model;
    };
    auto cpu_model = make(kael::kCPU);
    auto device_model = make(device);
    kael::optim::Adam cpu_optimizer(cpu_model->parameters(), 0.01);
    kael::optim::Adam device_optimizer(device_model->parameters(), 0.01);
    kael::manual_seed(9);
    const Tensor x = kael::randn({10, 8});
    const Tensor y = kael::randint(0, 4, {10});
    for (int step = 0; step < 5; ++step) {
        const Tensor cpu_loss = kael::cross_entropy((*cpu_model)(x), y);
        const Tensor device_loss = kael::cross_entropy((*device_model)(x.to(device)), y.to(device));
        BOOST_TEST(device_loss.item<float>() == cpu_loss.item<float>(), tt::tolerance(1e-4f));
        cpu_optimizer.zero_grad();
        device_optimizer.zero_grad();
        cpu_loss.backward();
        device_loss.backward();
        cpu_optimizer.step();
        device_optimizer.step();
    }
    const auto cpu_parameters = cpu_model->parameters();
    const auto device_parameters = device_model->parameters();
    for (std::size_t i = 0; i < cpu_parameters.size(); ++i) {
        expect_matches_cpu(device_parameters[i].detach(), cpu_parameters[i].detach());
    }
}

BOOST_AUTO_TEST_CASE(GptMatchesCpuIncludingTheCacheAndGeneration) {
    kael::manual_seed(3);
    kael::nn::GPT cpu_gpt(tiny_gpt());
    kael::manual_seed(3);
    kael::nn::GPT device_gpt(tiny_gpt());
    device_gpt.to(device);
    cpu_gpt.eval();
    device_gpt.eval();
    const Tensor tokens = kael::tensor(std::vector<std::int64_t>{1, 4, 2, 9, 3, 3, 0, 7}, {2, 4});
    expect_matches_cpu(device_gpt.forward(tokens.to(device)), cpu_gpt.forward(tokens));
    kael::nn::KVCache cache;
    const Tensor first = device_gpt.forward(tokens.slice(1, 0, 3).to(device), &cache);
    const Tensor last = device_gpt.forward(tokens.slice(1, 3, 4).to(device), &cache);
    expect_matches_cpu(kael::cat({first, last}, 1), cpu_gpt.forward(tokens));
    const std::vector<std::int64_t> prompt{1, 2, 3};
    BOOST_TEST(device_gpt.generate(prompt, 15) == cpu_gpt.generate(prompt, 15), tt::per_element());
    expect_matches_cpu(device_gpt.loss(tokens.to(device), tokens.to(device)),
                       cpu_gpt.loss(tokens, tokens));
}

BOOST_AUTO_TEST_SUITE_END()
