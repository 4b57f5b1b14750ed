// Optimizers against hand-computed updates, training sanity and end-to-end gradients.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
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

Tensor random_f64(const Shape& shape, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> uniform(-1.5, 1.5);
    std::int64_t count = 1;
    for (const auto size : shape) count *= size;
    std::vector<double> values(static_cast<std::size_t>(count));
    for (double& value : values) value = uniform(generator);
    return kael::tensor(values).reshape(shape);
}

// x [rows, in] times w [out, in]^T plus b, in plain loops.
}  // namespace
namespace {

struct Hyper {
    double lr = 0.1;
    double momentum = 0;
    double weight_decay = 0;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    bool decoupled = false;
};

const std::vector<double> kStart{0.5, -1.0, 2.0, 0.0};
const std::vector<std::vector<double>> kGrads{
    {0.1, -0.2, 0.3, 1.0}, {0.4, 0.1, -0.5, 1.0}, {-0.3, 0.2, 0.25, 1.0}};

std::vector<double> sgd_reference(const Hyper& h) {
    std::vector<double> p = kStart;
    std::vector<double> buffer(p.size());
    for (std::size_t step = 0; step < kGrads.size(); ++step) {
        for (std::size_t i = 0; i < p.size(); ++i) {
            double g = kGrads[step][i] + h.weight_decay * p[i];
            if (h.momentum != 0) {
                buffer[i] = step == 0 ? g : h.momentum * buffer[i] + g;
                g = buffer[i];
            }
            p[i] -= h.lr * g;
        }
    }
    return p;
}

std::vector<double> adam_reference(const Hyper& h) {
    std::vector<double> p = kStart;
    std::vector<double> m(p.size());
    std::vector<double> s(p.size());
    for (std::size_t step = 0; step < kGrads.size(); ++step) {
        const double t = static_cast<double>(step + 1);
        for (std::size_t i = 0; i < p.size(); ++i) {
            double g = kGrads[step][i];
            if (h.decoupled) {
                p[i] *= 1 - h.lr * h.weight_decay;
            } else {
                g += h.weight_decay * p[i];
            }
            m[i] = h.beta1 * m[i] + (1 - h.beta1) * g;
            s[i] = h.beta2 * s[i] + (1 - h.beta2) * g * g;
            const double m_hat = m[i] / (1 - std::pow(h.beta1, t));
            const double s_hat = s[i] / (1 - std::pow(h.beta2, t));
            p[i] -= h.lr * m_hat / (std::sqrt(s_hat) + h.eps);
        }
    }
    return p;
}

// Runs three steps with the known gradients; checks the values and that the parameter is the
// same tensor throughout.
void check_steps(optim::Optimizer& optimizer, const Tensor& parameter,
                 const std::vector<double>& expected) {
    for (const auto& grad : kGrads) {
        parameter.set_grad(kael::tensor(grad));
        optimizer.step();
        BOOST_TEST(optimizer.parameters()[0].same_impl(parameter));
        BOOST_TEST(parameter.is_leaf());
    }
    check_close(v(parameter), expected, 1e-12);
}

Tensor start_parameter() {
    return kael::tensor(kStart).set_requires_grad(true);
}

}  // namespace

BOOST_AUTO_TEST_CASE(sgd_matches_hand_computed_updates) {
    for (const Hyper& h : {Hyper{.lr = 0.1}, Hyper{.lr = 0.1, .momentum = 0.9},
                           Hyper{.lr = 0.05, .weight_decay = 0.1},
                           Hyper{.lr = 0.05, .momentum = 0.8, .weight_decay = 0.2}}) {
        BOOST_TEST_CONTEXT("momentum " << h.momentum << " weight decay " << h.weight_decay) {
            const Tensor p = start_parameter();
            optim::SGD sgd({p}, h.lr, h.momentum, h.weight_decay);
            check_steps(sgd, p, sgd_reference(h));
        }
    }
    // Momentum changes the result (the reference is not blind to it).
    BOOST_TEST((sgd_reference({.lr = 0.1, .momentum = 0.9}) != sgd_reference({.lr = 0.1})));
}

BOOST_AUTO_TEST_CASE(adam_and_adamw_match_hand_computed_updates) {
    for (const Hyper& h :
         {Hyper{.lr = 0.01}, Hyper{.lr = 0.1, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-3},
          Hyper{.lr = 0.01, .weight_decay = 0.5}}) {
        BOOST_TEST_CONTEXT("Adam lr " << h.lr << " weight decay " << h.weight_decay) {
            const Tensor p = start_parameter();
            optim::Adam adam({p}, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay);
            check_steps(adam, p, adam_reference(h));
        }
    }
    for (const Hyper& h : {Hyper{.lr = 0.01, .weight_decay = 1e-2, .decoupled = true},
                           Hyper{.lr = 0.1, .weight_decay = 0.5, .decoupled = true}}) {
        BOOST_TEST_CONTEXT("AdamW lr " << h.lr << " weight decay " << h.weight_decay) {
            const Tensor p = start_parameter();
            optim::AdamW adamw({p}, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay);
            check_steps(adamw, p, adam_reference(h));
        }
    }
    const Hyper coupled{.lr = 0.1, .weight_decay = 0.5};
    Hyper decoupled = coupled;
    decoupled.decoupled = true;
    BOOST_TEST((adam_reference(coupled) != adam_reference(decoupled)));
}

// A contiguous parameter takes the fused adam kernel, a strided view of the same values the
// composed ops; both must give the same trajectory (f32: within rounding). On every device, with
// a size that is not a multiple of 4 and a parameter at an odd offset (the CUDA plugin's vector
// path and its fallback).
BOOST_AUTO_TEST_CASE(fused_adam_matches_the_composed_update) {
    for (const kael::Device& device : test_devices()) {
        for (const bool decoupled : {false, true}) {
            for (const std::int64_t offset : {0, 1}) {
                BOOST_TEST_CONTEXT(device.str() << " decoupled " << decoupled << " offset "
                                                << offset) {
                    kael::manual_seed(3);
                    const Tensor start = kael::randn({6, 5}).to(device);
                    const Tensor holder = kael::zeros({30 + offset}).to(device);
                    const Tensor fused = holder.slice(0, offset, 30 + offset).view({6, 5});
                    {
                        const kael::NoGradGuard no_grad;
                        Tensor target = fused;
                        target.copy_(start);
                    }
                    fused.set_requires_grad(true);
                    const Tensor strided_base = start.T().contiguous().clone();
                    const Tensor strided = strided_base.T().set_requires_grad(true);
                    BOOST_REQUIRE(!strided.is_contiguous());
                    optim::Adam fused_adam({fused}, 0.05, 0.8, 0.95, 1e-6, 0.1, decoupled);
                    optim::Adam composed_adam({strided}, 0.05, 0.8, 0.95, 1e-6, 0.1, decoupled);
                    for (int step = 0; step < 4; ++step) {
                        const Tensor grad = kael::randn({6, 5}).to(device);
                        fused.set_grad(grad);
                        strided.set_grad(grad.T().contiguous().T());
                        fused_adam.step();
                        composed_adam.step();
                    }
                    BOOST_TEST(kael::allclose(fused.detach(), strided.detach(), 1e-5, 1e-6));
                    BOOST_TEST(!kael::allclose(fused.detach(), start, 1e-3, 1e-3));
                }
            }
        }
    }
}

// One optimizer over many tensors steps them through adam_many (ABI 1.4): the cuda plugin
// groups tensors under 2^16 elements, 32 to a launch. Against the same steps on cpu: small and
// large tensors, more than one group, a view at an odd offset, f32 beside f64, a parameter
// without a gradient and one listed twice (stepped twice, in order).
BOOST_AUTO_TEST_CASE(adam_many_matches_the_cpu_steps_tensor_by_tensor) {
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            kael::manual_seed(8);
            std::vector<Tensor> on_cpu;
            for (int i = 0; i < 40; ++i) {
                on_cpu.push_back(kael::randn({1 + 97 * i % 3072}));
            }
            on_cpu.push_back(kael::randn({70001}));
            on_cpu.push_back(kael::randn({5}, DType::F64));
            on_cpu.push_back(kael::randn({9}));  // stepped through an odd offset on device
            on_cpu.push_back(kael::randn({3}));  // never given a gradient
            std::vector<Tensor> on_device;
            for (const Tensor& t : on_cpu) {
                on_device.push_back(t.to(device));
            }
            const Tensor holder = kael::zeros({10}).to(device);
            on_device[42] = holder.slice(0, 1, 10);
            {
                const kael::NoGradGuard no_grad;
                on_device[42].copy_(on_cpu[42].to(device));
            }
            for (Tensor& t : on_cpu) {
                t.set_requires_grad(true);
            }
            for (Tensor& t : on_device) {
                t.set_requires_grad(true);
            }
            const Tensor first_start = on_cpu[0].detach().clone();
            const Tensor untouched_start = on_cpu[43].detach().clone();
            std::vector<Tensor> cpu_list = on_cpu;
            std::vector<Tensor> device_list = on_device;
            cpu_list.push_back(on_cpu[3]);
            device_list.push_back(on_device[3]);
            optim::AdamW cpu_adam(cpu_list, 0.02, 0.8, 0.95, 1e-6, 0.1);
            optim::AdamW device_adam(device_list, 0.02, 0.8, 0.95, 1e-6, 0.1);
            for (int step = 0; step < 3; ++step) {
                for (std::size_t i = 0; i + 1 < on_cpu.size(); ++i) {
                    const Tensor grad = kael::randn(on_cpu[i].shape(), on_cpu[i].dtype());
                    on_cpu[i].set_grad(grad);
                    on_device[i].set_grad(grad.to(device));
                }
                cpu_adam.step();
                device_adam.step();
            }
            for (std::size_t i = 0; i < on_cpu.size(); ++i) {
                BOOST_TEST(kael::allclose(on_device[i].detach().to(kael::kCPU), on_cpu[i].detach(),
                                          1e-5, 1e-6),
                           "tensor " << i);
            }
            BOOST_TEST(!kael::allclose(on_cpu[0].detach(), first_start, 1e-3, 1e-3));
            BOOST_TEST(
                kael::allclose(on_device[43].detach().to(kael::kCPU), untouched_start, 0, 0));
        }
    }
}

BOOST_AUTO_TEST_CASE(optimizers_skip_parameters_without_grad) {
    const Tensor a = start_parameter();
    const Tensor b = kael::tensor(std::vector<double>{1.0, 2.0}).set_requires_grad(true);
    optim::SGD sgd({a, b}, 0.1, 0.9);
    a.set_grad(kael::tensor(kGrads[0]));
    sgd.step();
    BOOST_TEST(v(b) == (std::vector<double>{1.0, 2.0}), tt::per_element());
    BOOST_TEST((v(a) != kStart));

    // b first gets a gradient at the second step: its moments and bias correction start
    // then, so its first update is lr * g / (|g| + eps) as in PyTorch.
    const Tensor c = start_parameter();
    const Tensor d = kael::tensor(std::vector<double>{1.0, 2.0}).set_requires_grad(true);
    optim::Adam adam({c, d}, 0.01);
    c.set_grad(kael::tensor(kGrads[0]));
    adam.step();
    BOOST_TEST(v(d) == (std::vector<double>{1.0, 2.0}), tt::per_element());
    d.set_grad(kael::tensor(std::vector<double>{0.5, -2.0}));
    adam.step();
    check_close(
        v(d), std::vector<double>{1.0 - 0.01 * 0.5 / (0.5 + 1e-8), 2.0 + 0.01 * 2.0 / (2.0 + 1e-8)},
        1e-12);

    adam.zero_grad();
    BOOST_TEST(!c.grad().defined());
    BOOST_TEST(!d.grad().defined());
    const auto frozen = v(c);
    adam.step();
    BOOST_TEST(v(c) == frozen, tt::per_element());
}

BOOST_AUTO_TEST_CASE(optimizers_reject_invalid_hyper_parameters) {
    const Tensor p = start_parameter();
    const double nan = std::nan("");
    BOOST_CHECK_THROW(optim::SGD({p}, -0.1), kael::ValueError);
    BOOST_CHECK_THROW(optim::SGD({p}, nan), kael::ValueError);
    BOOST_CHECK_THROW(optim::SGD({p}, 0.1, -0.5), kael::ValueError);
    BOOST_CHECK_THROW(optim::SGD({p}, 0.1, 0, -1), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, -1e-3), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, 1e-3, 1.0), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, 1e-3, -0.1), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, 1e-3, 0.9, 1.0), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, 1e-3, 0.9, 0.999, -1e-8), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, 1e-3, 0.9, 0.999, 1e-8, -0.1), kael::ValueError);
    BOOST_CHECK_THROW(optim::AdamW({p}, 1e-3, 0.9, 0.999, 1e-8, -0.1), kael::ValueError);
    BOOST_CHECK_THROW(optim::Adam({p}, nan), kael::ValueError);
    const Tensor frozen = kael::tensor(kStart);
    BOOST_CHECK_THROW(optim::SGD({frozen}, 0.1), kael::ValueError);
    BOOST_CHECK_NO_THROW(optim::SGD({p}, 0.0));
    BOOST_CHECK_NO_THROW(optim::AdamW({p}));
}

BOOST_AUTO_TEST_CASE(mlp_fits_xor) {
    kael::manual_seed(11);
    nn::Sequential model({std::make_shared<nn::Linear>(2, 8), std::make_shared<nn::Tanh>(),
                          std::make_shared<nn::Linear>(8, 2)});
    const Tensor x = kael::tensor(std::vector<float>{0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
    const Tensor y = kael::tensor(std::vector<std::int64_t>{0, 1, 1, 0});
    optim::Adam adam(model.parameters(), 0.05);
    double loss = 0;
    for (int step = 0; step < 300; ++step) {
        adam.zero_grad();
        const Tensor value = kael::cross_entropy(model(x), y);
        value.backward();
        adam.step();
        loss = value.item<double>();
    }
    BOOST_TEST(loss < 0.05);
    const Tensor predicted = kael::argmax(model(x), 1);
    BOOST_TEST(predicted.to_vector<std::int64_t>() == y.to_vector<std::int64_t>(),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(gradcheck_through_linear_and_layer_norm) {
    const Tensor x = random_f64({2, 3, 4}, 1).set_requires_grad(true);
    const Tensor w = random_f64({5, 4}, 2).set_requires_grad(true);
    const Tensor b = random_f64({5}, 3).set_requires_grad(true);
    BOOST_TEST(
        gradcheck([](const std::vector<Tensor>& in) { return kael::linear(in[0], in[1], in[2]); },
                  {x, w, b}));
    const Tensor rows = random_f64({3, 5}, 4).set_requires_grad(true);
    const Tensor gamma = random_f64({5}, 5).set_requires_grad(true);
    const Tensor beta = random_f64({5}, 6).set_requires_grad(true);
    BOOST_TEST(gradcheck(
        [](const std::vector<Tensor>& in) { return kael::layer_norm(in[0], in[1], in[2]); },
        {rows, gamma, beta}));
    // Both in sequence, as a pre-norm layer applies them.
    BOOST_TEST(gradcheck(
        [](const std::vector<Tensor>& in) {
            return kael::tanh(kael::linear(kael::layer_norm(in[0], in[1], in[2]), in[3], in[4]));
        },
        {rows, gamma, beta, random_f64({4, 5}, 7).set_requires_grad(true),
         random_f64({4}, 8).set_requires_grad(true)}));
}

// Module::to between steps moves the parameters; SGD's velocity and Adam's moments follow them
// at the next step, and the updates equal those of a model that stayed on the cpu.
BOOST_AUTO_TEST_CASE(optimizer_state_follows_module_to) {
    const auto devices = test_devices();
    if (devices.size() < 2) {
        BOOST_TEST_MESSAGE("no cuda:0 device: skipped");
        return;
    }
    const kael::Device& other = devices[1];
    using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;
    const std::vector<std::pair<std::string, Make>> optimizers = {
        {"SGD", [](std::vector<Tensor> p) {
             return std::make_unique<optim::SGD>(std::move(p), 0.1, 0.9);
         }},
        {"Adam", [](std::vector<Tensor> p) {
             return std::make_unique<optim::Adam>(std::move(p), 0.1);
         }},
        {"AdamW", [](std::vector<Tensor> p) {
             return std::make_unique<optim::AdamW>(std::move(p), 0.1);
         }}};
    for (const auto& [name, make] : optimizers) {
        BOOST_TEST_CONTEXT(name) {
            kael::manual_seed(60);
            nn::Linear moved(3, 2);
            kael::manual_seed(60);
            nn::Linear stayed(3, 2);
            auto moved_optimizer = make(moved.parameters());
            auto stayed_optimizer = make(stayed.parameters());
            const Tensor x = kael::tensor(std::vector<float>{1, -2, 0.5f, 3, 0, -1}, {2, 3});
            auto step = [&](nn::Linear& model, optim::Optimizer& optimizer) {
                optimizer.zero_grad();
                kael::sum(square(model(x.to(model.weight.device())))).backward();
                optimizer.step();
            };
            step(moved, *moved_optimizer);
            step(stayed, *stayed_optimizer);
            moved.to(other);
            step(moved, *moved_optimizer);
            step(stayed, *stayed_optimizer);
            moved.to(kael::kCPU);
            step(moved, *moved_optimizer);
            step(stayed, *stayed_optimizer);
            check_close(v(moved.weight), v(stayed.weight), 1e-6);
            check_close(v(moved.bias), v(stayed.bias), 1e-6);
        }
    }
}
