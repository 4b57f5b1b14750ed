#define BOOST_TEST_MODULE autograd_safety
// Autograd under concurrent backward calls and under in-place writes to tensors it saved.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <string>
#include <thread>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::Device;
using kael::DType;
using kael::Tensor;
namespace tt = boost::test_tools;

namespace {

// cpu, and cuda:0 (the emulated plugin serves it without a GPU).
std::vector<Device> test_devices() {
    std::vector<Device> result{kael::kCPU};
    if (kael::is_available(Device("cuda"))) {
        result.emplace_back("cuda:0");
    }
    return result;
}

std::vector<float> v(const Tensor& t) { return t.to_vector<float>(); }

// PyTorch's message for a saved tensor overwritten in place before backward.
bool names_in_place_modification(const kael::Error& error) {
    const std::string message = error.what();
    return message.find("one of the variables needed for gradient computation has been "
                        "modified by an inplace operation") != std::string::npos &&
           message.find("is at version") != std::string::npos &&
           message.find("expected version") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(concurrent_backward_into_one_leaf_is_exact) {
    constexpr int kThreads = 8;
    constexpr int kIterations = 300;
    for (const Device& device : test_devices()) {
        const Tensor shared = kael::ones({4}, DType::F32, device).set_requires_grad(true);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&shared] {
                for (int i = 0; i < kIterations; ++i) {
                    kael::sum(shared * 1.0).backward();
                }
            });
        }
        for (std::thread& thread : threads) {
            thread.join();
        }
        const std::vector<float> expected(4, static_cast<float>(kThreads * kIterations));
        BOOST_TEST(v(shared.grad()) == expected, tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(concurrent_backward_with_grad_reads_and_shared_graph_parts) {
    // Threads share a leaf used twice per graph, read grad while others accumulate, and each
    // toggles grad mode (thread-local) without affecting the others.
    constexpr int kThreads = 4;
    constexpr int kIterations = 100;
    const Tensor weight = kael::full({3}, 2.0).set_requires_grad(true);
    std::atomic<int> grad_mode_leaks{0};  // Boost.Test's checks are not thread-safe
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&weight, &grad_mode_leaks, t] {
            for (int i = 0; i < kIterations; ++i) {
                if (t % 2 == 1) {
                    const kael::NoGradGuard no_grad;
                    grad_mode_leaks += (weight * 3.0).requires_grad() ? 1 : 0;
                }
                grad_mode_leaks += kael::is_grad_enabled() ? 0 : 1;
                kael::sum(weight * weight + weight).backward();  // d/dw = 2w + 1 = 5
                (void)weight.grad();
            }
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    BOOST_TEST(grad_mode_leaks.load() == 0);
    const std::vector<float> expected(3, 5.0F * kThreads * kIterations);
    BOOST_TEST(v(weight.grad()) == expected, tt::per_element());
}

BOOST_AUTO_TEST_CASE(concurrent_training_steps_share_weights_exactly) {
    // A small MLP's backward (matmul, relu, broadcasting, views) on every thread at once sums to
    // the threads' count times one backward, on each device.
    constexpr int kThreads = 4;
    constexpr int kIterations = 20;
    for (const Device& device : test_devices()) {
        const Tensor input = kael::arange(0, 12, 1, DType::F64, device).view({4, 3}) * 0.25;
        const Tensor weight =
            (kael::arange(0, 6, 1, DType::F64, device).view({3, 2}) - 2.5).set_requires_grad(true);
        const Tensor bias = kael::full({2}, 0.5, DType::F64, device).set_requires_grad(true);
        const auto step = [&] {
            kael::sum(kael::relu(kael::matmul(input, weight) + bias).T() * 3.0).backward();
        };
        step();
        const std::vector<double> one_weight = weight.grad().to_vector<double>();
        const std::vector<double> one_bias = bias.grad().to_vector<double>();
        weight.set_grad(Tensor());
        bias.set_grad(Tensor());
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&step] {
                for (int i = 0; i < kIterations; ++i) {
                    step();
                }
            });
        }
        for (std::thread& thread : threads) {
            thread.join();
        }
        const auto times = [](std::vector<double> values) {
            for (double& value : values) {
                value *= kThreads * kIterations;
            }
            return values;
        };
        BOOST_TEST(weight.grad().to_vector<double>() == times(one_weight), tt::per_element());
        BOOST_TEST(bias.grad().to_vector<double>() == times(one_bias), tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(saved_input_modified_in_place_raises) {
    for (const Device& device : test_devices()) {
        // x=ones(3,requires_grad); a=x*1; y=a*a; a.fill_(5); y.sum().backward()
        const Tensor x = kael::ones({3}, DType::F32, device).set_requires_grad(true);
        Tensor a = x * 1.0;
        const Tensor y = a * a;
        a.fill_(5.0);
        BOOST_CHECK_EXCEPTION(kael::sum(y).backward(), kael::Error, names_in_place_modification);
        BOOST_TEST(!x.grad().defined());
    }
}

BOOST_AUTO_TEST_CASE(leaf_modified_under_no_grad_before_backward_raises) {
    for (const Device& device : test_devices()) {
        // y=(x*x).sum(); with no_grad: x.fill_(3); y.backward(): an optimizer step in between.
        Tensor x = kael::ones({3}, DType::F32, device).set_requires_grad(true);
        const Tensor y = kael::sum(x * x);
        {
            const kael::NoGradGuard no_grad;
            x.fill_(3.0);
        }
        BOOST_CHECK_EXCEPTION(y.backward(), kael::Error, names_in_place_modification);
    }
}

BOOST_AUTO_TEST_CASE(saved_output_modified_in_place_raises) {
    for (const Device& device : test_devices()) {
        // a=exp(x); b=a*1; a*=2; b.sum().backward(): exp saved its output a.
        const Tensor x = kael::ones({3}, DType::F32, device).set_requires_grad(true);
        Tensor a = kael::exp(x);
        const Tensor b = a * 1.0;
        a.copy_(a * 2.0);
        BOOST_CHECK_EXCEPTION(kael::sum(b).backward(), kael::Error,
                              names_in_place_modification);
    }
}

BOOST_AUTO_TEST_CASE(message_names_shape_dtype_and_versions) {
    const Tensor x = kael::ones({2, 3}, DType::F64).set_requires_grad(true);
    Tensor a = x * 1.0;
    const Tensor y = kael::sin(a);
    a.fill_(0.0);
    a.fill_(1.0);
    try {
        kael::sum(y).backward();
        BOOST_FAIL("backward did not raise");
    } catch (const kael::Error& error) {
        const std::string message = error.what();
        BOOST_TEST_INFO(message);
        BOOST_TEST(message.find("[[2, 3] f64]") != std::string::npos);
        BOOST_TEST(message.find("SinBackward") != std::string::npos);
        const auto at = message.find("is at version ");
        const auto expected = message.find("; expected version ");
        BOOST_TEST_REQUIRE((at != std::string::npos && expected != std::string::npos));
        const long now = std::stol(message.substr(at + 14));
        const long then = std::stol(message.substr(expected + 19));
        BOOST_TEST(now == then + 2);  // two writes since the save
    }
}

BOOST_AUTO_TEST_CASE(every_in_place_write_bumps_the_shared_version) {
    for (const Device& device : test_devices()) {
        Tensor base = kael::zeros({4}, DType::F32, device);
        Tensor view = base.slice(0, 1, 3);
        const auto version = [&base] { return base.impl().storage->version(); };
        auto before = version();
        view.fill_(1.0);
        BOOST_TEST(version() > before);
        before = version();
        view.copy_(kael::ones({2}, DType::F32, device));
        BOOST_TEST(version() > before);
        before = version();
        Tensor index = kael::tensor(std::vector<std::int64_t>{0, 1}).to(device);
        kael::scatter_add_(base, 0, index, kael::ones({2}, DType::F32, device));
        BOOST_TEST(version() > before);
        before = version();
        (void)(base * 2.0);  // reading does not write
        BOOST_TEST(version() == before);
    }
}

BOOST_AUTO_TEST_CASE(legitimate_in_place_patterns_keep_working) {
    for (const Device& device : test_devices()) {
        const Tensor x = kael::full({3}, 2.0, DType::F32, device).set_requires_grad(true);
        // In place on an intermediate that nothing saved: h *= 3 (mul saves only what the
        // other operand's gradient needs), h += 1.
        Tensor h = x * x;
        h.copy_(h * 3.0);
        h.copy_(h + 1.0);
        kael::sum(h).backward();
        BOOST_TEST(v(x.grad()) == (std::vector<float>(3, 12.0F)), tt::per_element());
        // exp saves its output, not its input: writing the input afterwards is fine.
        Tensor input = x * 1.0;
        const Tensor e = kael::exp(input);
        input.fill_(0.0);
        x.zero_grad();
        kael::sum(e).backward();
        BOOST_TEST(v(x.grad()) == v(kael::exp(x.detach())), tt::per_element());
        // An optimizer step after backward, then a new forward and backward.
        {
            const kael::NoGradGuard no_grad;
            Tensor parameter = x;
            parameter.copy_(x.detach() - x.grad() * 0.1);
        }
        x.zero_grad();
        kael::sum(x * x).backward();
        BOOST_TEST(v(x.grad()) == v(x.detach() * 2.0), tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(in_place_multiply_by_a_tensor_that_requires_grad_is_exact) {
    // a *= w: w's gradient is a's value before the write (PyTorch saves original_self).
    for (const Device& device : test_devices()) {
        const Tensor x = kael::full({3}, 3.0, DType::F32, device).set_requires_grad(true);
        const Tensor w = kael::full({3}, 2.0, DType::F32, device).set_requires_grad(true);
        Tensor a = x * 1.0;
        kael::mul_(a, w);
        kael::sum(a).backward();
        BOOST_TEST(v(w.grad()) == (std::vector<float>(3, 3.0F)), tt::per_element());
        BOOST_TEST(v(x.grad()) == (std::vector<float>(3, 2.0F)), tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(retained_graph_checks_versions_on_every_backward) {
    Tensor x = kael::ones({2}).set_requires_grad(true);
    const Tensor y = kael::sum(x * x);
    y.backward(std::nullopt, true);
    BOOST_TEST(v(x.grad()) == (std::vector<float>{2, 2}), tt::per_element());
    {
        const kael::NoGradGuard no_grad;
        x.fill_(4.0);
    }
    BOOST_CHECK_EXCEPTION(y.backward(), kael::Error, names_in_place_modification);
}
