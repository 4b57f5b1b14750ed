#define BOOST_TEST_MODULE optim_groups
// Parameter groups, state dicts and gradient clipping of the C++ optimizers, on every device.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "kael/clip_grad.h"
#include "kael/ops.h"
#include "kael/optim.h"
#include "nn_test_support.h"

using kael::Tensor;
namespace optim = kael::optim;

namespace {

Tensor parameter(const std::vector<float>& values, const kael::Device& device) {
    return kael::tensor(values).to(device).set_requires_grad(true);
}

// A loss whose gradients depend on the parameters and the step: sum(1.5 p^2) + step sum(p).
void backward(const std::vector<Tensor>& params, int step) {
    Tensor total;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const Tensor term = kael::sum(kael::square(params[i]) * 1.5) +
                            kael::sum(params[i]) * static_cast<double>(step);
        total = total.defined() ? total + term : term;
    }
    total.backward();
}

void run(optim::Optimizer& optimizer, const std::vector<Tensor>& params, int first, int count) {
    for (int step = first; step < first + count; ++step) {
        optimizer.zero_grad();
        backward(params, step);
        optimizer.step();
    }
}

std::vector<Tensor> fresh(const kael::Device& device) {
    return {parameter({1.0F, -2.0F, 0.5F}, device), parameter({0.25F, 3.0F}, device)};
}

}  // namespace

BOOST_AUTO_TEST_CASE(groups_take_their_own_options_and_defaults) {
    for (const kael::Device& device : test_devices()) {
        const std::vector<Tensor> grouped = fresh(device);
        const std::vector<Tensor> first = {grouped[0].detach().clone().set_requires_grad(true)};
        const std::vector<Tensor> second = {grouped[1].detach().clone().set_requires_grad(true)};
        optim::Adam adam({optim::ParamGroup({grouped[0]}),
                          optim::ParamGroup({grouped[1]}, {{"lr", 0.05}, {"beta1", 0.8}})},
                         optim::AdamHyper{.lr = 0.01});
        BOOST_TEST(adam.param_groups()[0].lr() == 0.01);
        BOOST_TEST(adam.param_groups()[1].option("beta2") == 0.999);
        optim::Adam alone_first(first, 0.01);
        optim::Adam alone_second(second, 0.05, 0.8);
        run(adam, grouped, 0, 5);
        run(alone_first, first, 0, 5);
        run(alone_second, second, 0, 5);
        BOOST_TEST(grouped[0].to_vector<float>() == first[0].to_vector<float>(),
                   boost::test_tools::per_element());
        BOOST_TEST(grouped[1].to_vector<float>() == second[0].to_vector<float>(),
                   boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(set_lr_takes_effect_at_the_next_step) {
    const Tensor p = parameter({1.0F}, kael::kCPU);
    optim::SGD sgd({p}, 0.1);
    sgd.param_groups()[0].set_lr(0.5);
    p.set_grad(kael::tensor(std::vector<float>{1.0F}));
    sgd.step();
    BOOST_TEST(p.item<float>() == 0.5F);
}

BOOST_AUTO_TEST_CASE(group_errors) {
    const Tensor p = parameter({1.0F}, kael::kCPU);
    BOOST_CHECK_THROW(optim::SGD(std::vector<optim::ParamGroup>{optim::ParamGroup({p}),
                                                                optim::ParamGroup({p})},
                                 optim::SGDHyper{}),
                      kael::ValueError);
    optim::SGD sgd({p}, 0.1);
    BOOST_CHECK_THROW(sgd.add_param_group(optim::ParamGroup({p})), kael::ValueError);
    const Tensor q = parameter({2.0F}, kael::kCPU);
    BOOST_CHECK_THROW(sgd.add_param_group(optim::ParamGroup({q}, {{"betas", 0.5}})),
                      kael::ValueError);
    BOOST_CHECK_THROW(sgd.add_param_group(optim::ParamGroup({q}, {{"lr", -1.0}})),
                      kael::ValueError);
    BOOST_CHECK_THROW(optim::SGD(std::vector<optim::ParamGroup>{optim::ParamGroup({p})},
                                 optim::SGDHyper{.lr = 0.1, .nesterov = true}),
                      kael::ValueError);
    BOOST_CHECK_THROW(optim::SGD(std::vector<optim::ParamGroup>{}, optim::SGDHyper{}),
                      kael::ValueError);
    sgd.add_param_group(optim::ParamGroup({q}, {{"momentum", 0.9}}));
    BOOST_TEST(sgd.param_groups()[1].option("momentum") == 0.9);
    BOOST_TEST(sgd.parameters().size() == 2U);
}

BOOST_AUTO_TEST_CASE(zero_grad_sets_to_none_or_zeroes) {
    const Tensor p = parameter({1.0F, 2.0F}, kael::kCPU);
    optim::SGD sgd({p}, 0.1);
    p.set_grad(kael::tensor(std::vector<float>{3.0F, 4.0F}));
    const Tensor grad = p.grad();
    sgd.zero_grad(false);
    BOOST_TEST(grad.to_vector<float>() == std::vector<float>({0.0F, 0.0F}),
               boost::test_tools::per_element());
    sgd.zero_grad();
    BOOST_TEST(!p.grad().defined());
}

BOOST_AUTO_TEST_CASE(state_dict_resumes_bit_identically_on_every_device) {
    for (const kael::Device& device : test_devices()) {
        for (const bool adam : {false, true}) {
            const std::vector<Tensor> params = fresh(device);
            const auto make = [&](const std::vector<Tensor>& p) -> std::unique_ptr<optim::Optimizer> {
                std::vector<optim::ParamGroup> groups{optim::ParamGroup({p[0]}),
                                                      optim::ParamGroup({p[1]}, {{"lr", 0.02}})};
                if (adam) {
                    return std::make_unique<optim::AdamW>(std::move(groups),
                                                          optim::AdamHyper{.lr = 0.05});
                }
                return std::make_unique<optim::SGD>(
                    std::move(groups), optim::SGDHyper{.lr = 0.05, .momentum = 0.9,
                                                       .nesterov = true});
            };
            const auto uninterrupted = make(params);
            run(*uninterrupted, params, 0, 4);
            optim::StateDict saved = uninterrupted->state_dict();
            BOOST_TEST(saved.state.size() == 2U);
            BOOST_TEST(saved.param_groups[1].params == std::vector<std::int64_t>({1}));
            BOOST_TEST(saved.state.at(0).buffers.count(adam ? "exp_avg" : "momentum_buffer") == 1U);
            for (auto& [index, state] : saved.state) {
                for (auto& [name, buffer] : state.buffers) {
                    buffer = buffer.cpu().clone();  // as a checkpoint holds it
                }
            }
            std::vector<Tensor> copies;
            for (const Tensor& p : params) {
                copies.push_back(p.detach().clone().set_requires_grad(true));
            }
            run(*uninterrupted, params, 4, 4);
            const auto resumed = make(copies);
            resumed->load_state_dict(saved);
            BOOST_TEST((resumed->state(copies[0]).buffers.begin()->second.device() == device));
            run(*resumed, copies, 4, 4);
            for (std::size_t i = 0; i < params.size(); ++i) {
                BOOST_TEST(params[i].to_vector<float>() == copies[i].to_vector<float>(),
                           boost::test_tools::per_element());
            }
            saved.param_groups.pop_back();
            BOOST_CHECK_THROW(resumed->load_state_dict(saved), kael::ValueError);
        }
    }
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_scales_on_device) {
    for (const kael::Device& device : test_devices()) {
        const Tensor a = parameter({0.0F, 0.0F}, device);
        const Tensor b = parameter({0.0F}, device);
        a.set_grad(kael::tensor(std::vector<float>{3.0F, 0.0F}).to(device));
        b.set_grad(kael::tensor(std::vector<float>{-4.0F}).to(device));
        const Tensor total = kael::nn::clip_grad_norm_({a, b}, 1.0);
        BOOST_TEST((total.device() == device));
        BOOST_TEST(total.item<float>() == 5.0F, boost::test_tools::tolerance(1e-6F));
        check_close(a.grad().to_vector<float>(), std::vector<double>{0.6, 0.0}, 1e-6);
        check_close(b.grad().to_vector<float>(), std::vector<double>{-0.8}, 1e-6);
        const double inf = std::numeric_limits<double>::infinity();
        BOOST_TEST(kael::nn::clip_grad_norm_({a, b}, 10.0, inf).item<float>() ==
                   0.8F, boost::test_tools::tolerance(1e-6F));
        kael::nn::clip_grad_value_({a, b}, 0.5);
        check_close(b.grad().to_vector<float>(), std::vector<double>{-0.5}, 0);
        b.set_grad(kael::tensor(std::vector<float>{std::nanf("")}).to(device));
        BOOST_CHECK_THROW(kael::nn::clip_grad_norm_({a, b}, 1.0, 2.0, true), kael::ValueError);
    }
}

// The capturable step (torch's capturable=True): the count and lr on the device, the bias
// corrections computed there, equal to the host-count step for fused tensors (adam_many), a
// strided one (composed) and f64; a count shared by several tensors is stepped once.
BOOST_AUTO_TEST_CASE(adam_step_on_device_matches_the_host_count) {
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            for (const bool decoupled : {false, true}) {
                kael::manual_seed(11);
                std::vector<Tensor> host, on_device, grads;
                for (const kael::Shape& shape : {kael::Shape{5}, kael::Shape{300}, kael::Shape{4, 3}}) {
                    host.push_back(kael::randn(shape).to(device));
                    grads.push_back(kael::randn(shape).to(device));
                }
                host.push_back(kael::randn({7}, kael::DType::F64).to(device));
                grads.push_back(kael::randn({7}, kael::DType::F64).to(device));
                for (const Tensor& t : host) {
                    on_device.push_back(t.clone());
                }
                on_device[2] = on_device[2].T().contiguous().T();  // strided: composed
                const auto zeros_like = [](const std::vector<Tensor>& list) {
                    std::vector<Tensor> out;
                    for (const Tensor& t : list) {
                        out.push_back(kael::zeros(t.shape(), t.dtype(), t.device()));
                    }
                    return out;
                };
                const std::vector<Tensor> m1 = zeros_like(host), v1 = zeros_like(host);
                const std::vector<Tensor> m2 = zeros_like(host), v2 = zeros_like(host);
                const Tensor count = kael::zeros({}, kael::DType::F32, device);
                const Tensor other = kael::zeros({}, kael::DType::F32, device);
                const std::vector<Tensor> counts = {count, count, count, other};
                optim::AdamHyper hyper{0.05, 0.8, 0.95, 1e-6, 0.1, decoupled};
                for (std::int64_t step = 1; step <= 3; ++step) {
                    hyper.lr = 0.05 / static_cast<double>(step);  // a schedule
                    const Tensor lr = kael::full({}, hyper.lr, kael::DType::F64, device);
                    optim::adam_step(host, grads, m1, v1, {step, step, step, step}, hyper);
                    optim::adam_step_on_device(on_device, grads, m2, v2, counts, lr, hyper);
                }
                for (std::size_t i = 0; i < host.size(); ++i) {
                    BOOST_TEST(kael::allclose(on_device[i].cpu(), host[i].cpu(), 1e-6, 1e-7),
                               "tensor " << i << " decoupled " << decoupled);
                }
                BOOST_TEST(count.item_double() == 3.0);
                BOOST_TEST(other.item_double() == 3.0);
            }
        }
    }
}
