// layer_norm through its fused slots: values and gradients against torch 1.13, gradcheck of each
// input, only the needed gradients computed, empty inputs, dtype promotion, and every device.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"
#include "composite_ops_test_support.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using namespace kael_test;

namespace {

Tensor f64(const std::vector<double>& values, const Shape& shape) {
    return kael::tensor(values, shape);
}

const std::vector<double> kX = {0.5, -1.25, 2.0, 3.5, -0.75, 1.0, 1.5, -2.5, 0.25, 4.0};
const std::vector<double> kGrad = {1.0, -2.0, 0.5, 0.75, -1.5, 0.25, 3.0, -1.0, 2.0, 0.5};
const std::vector<double> kWeight = {1.5, -0.5, 2.0, 0.25, 1.0};
const std::vector<double> kBias = {0.1, 0.2, -0.3, 0.4, -0.5};

std::vector<kael::Device> devices() {
    std::vector<kael::Device> all{kael::kCPU};
    if (kael::is_available(kael::Device("cuda"))) {
        all.emplace_back("cuda");
    }
    return all;
}

}  // namespace

// torch.nn.functional.layer_norm(x, (5,), w, b, 1e-5).backward(g) in float64.
BOOST_AUTO_TEST_CASE(layer_norm_matches_torch_forward_and_backward) {
    for (const kael::Device& device : devices()) {
        BOOST_TEST_CONTEXT("device " << device.str()) {
            const Tensor x = f64(kX, {2, 5}).to(device).set_requires_grad(true);
            const Tensor w = f64(kWeight, {5}).to(device).set_requires_grad(true);
            const Tensor b = f64(kBias, {5}).to(device).set_requires_grad(true);
            const Tensor out = kael::layer_norm(x, w, b, 1e-5);
            out.backward(f64(kGrad, {2, 5}).to(device));
            check_close(v<double>(out.cpu()),
                        {-0.15620300879975935, 0.7835735200438962, 1.0664160469320494,
                         0.7843045131996389, -1.382477030310282, 0.20738651867021507,
                         0.04488613969857824, -3.497731889290849, 0.32840898755319,
                         1.003411261383011},
                        1e-12);
            check_close(v<double>(x.grad().cpu()),
                        {0.6218793444371384, 0.43611684767588055, 0.25243146635998315,
                         -0.29493516782811613, -1.0154924906448861, 0.3588044765182196,
                         -0.6127973675050195, -0.23772056815614528, 0.5335349362143982,
                         -0.04182147707145273},
                        1e-12);
            check_close(v<double>(w.grad().cpu()),
                        {-0.15290425275480374, 3.2649772419841154, 1.9404699563784369,
                         0.5801854400244364, 2.0754211761569286},
                        1e-12);
            check_close(v<double>(b.grad().cpu()), {1.25, 1.0, -0.5, 2.75, -1.0}, 1e-12);
        }
    }
}

// torch.nn.functional.layer_norm(x, (5,), None, None, 0.1).backward(g) in float64, and in f32.
BOOST_AUTO_TEST_CASE(layer_norm_without_affine_matches_torch) {
    const std::vector<double> out = {-0.16809954440415775, -1.1486802200950779, 0.672398177616631,
                                     1.5128958996374198,   -0.868514312754815,  0.07078937672745134,
                                     0.30675396581895575,  -1.5809627469130796, -0.2831575069098053,
                                     1.4865769112764777};
    const std::vector<double> grad_x = {
        0.7927771553859089,  -0.3494376976167013, 0.05079931286938821, -0.27092966863673806,
        -0.22320910200185762, -0.3483630890735657, 0.8893999364448435, -0.5179790604082717,
        0.5675762944739973,  -0.5906340814370037};
    for (const kael::Device& device : devices()) {
        for (const DType dtype : {DType::F64, DType::F32}) {
            BOOST_TEST_CONTEXT("device " << device.str() << ", " << dtype) {
                const double tolerance = dtype == DType::F64 ? 1e-12 : 1e-5;
                const Tensor x = f64(kX, {2, 5}).to(dtype).to(device).set_requires_grad(true);
                const Tensor normed = kael::layer_norm(x, Tensor(), Tensor(), 0.1);
                BOOST_TEST(normed.dtype() == dtype);
                normed.backward(f64(kGrad, {2, 5}).to(dtype).to(device));
                check_close(v<double>(normed.cpu().to(DType::F64)), out, tolerance);
                check_close(v<double>(x.grad().cpu().to(DType::F64)), grad_x, tolerance);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(layer_norm_gradcheck_each_input) {
    kael::manual_seed(5);
    const auto input = [](const Shape& shape, bool grad) {
        return kael::randn(shape, DType::F64).set_requires_grad(grad);
    };
    const auto norm = [](const std::vector<Tensor>& in) {
        return kael::layer_norm(in[0], in[1], in[2], 1e-3);
    };
    for (const kael::Device& device : devices()) {
        BOOST_TEST_CONTEXT("device " << device.str()) {
            const auto on = [&](const Tensor& t, bool grad) {
                return t.to(device).detach().set_requires_grad(grad);
            };
            for (const auto& [x_grad, weight_grad, bias_grad] :
                 {std::tuple{true, true, true}, std::tuple{true, false, false},
                  std::tuple{false, true, false}, std::tuple{false, false, true}}) {
                BOOST_TEST(kael::autograd::gradcheck(
                    norm, {on(input({2, 3, 7}, false), x_grad), on(input({7}, false), weight_grad),
                           on(input({7}, false), bias_grad)}));
            }
            // A transposed input is made contiguous first; the gradient flows back through it.
            BOOST_TEST(kael::autograd::gradcheck(
                [](const std::vector<Tensor>& in) { return kael::layer_norm(in[0].T()); },
                {on(input({6, 4}, false), true)}));
        }
    }
}

BOOST_AUTO_TEST_CASE(layer_norm_computes_only_the_needed_gradients) {
    const Tensor x = f64(kX, {2, 5});
    const Tensor w = f64(kWeight, {5}).set_requires_grad(true);
    const Tensor b = f64(kBias, {5});
    kael::sum(kael::layer_norm(x, w, b) * f64(kGrad, {2, 5})).backward();
    BOOST_TEST(!x.grad().defined());
    BOOST_TEST(!b.grad().defined());
    check_close(v<double>(w.grad()),
                {-0.15290425275480374, 3.2649772419841154, 1.9404699563784369,
                 0.5801854400244364, 2.0754211761569286},
                1e-9);
    const Tensor bias_only = f64(kBias, {5}).set_requires_grad(true);
    kael::sum(kael::layer_norm(x, Tensor(), bias_only)).backward();
    check_close(v<double>(bias_only.grad()), {2, 2, 2, 2, 2});
    // Nothing requires grad: no node is recorded.
    BOOST_TEST(!kael::layer_norm(x, f64(kWeight, {5})).requires_grad());
}

BOOST_AUTO_TEST_CASE(layer_norm_of_empty_inputs) {
    for (const kael::Device& device : devices()) {
        BOOST_TEST_CONTEXT("device " << device.str()) {
            const Tensor x = kael::zeros({0, 3, 4}, DType::F32, device).set_requires_grad(true);
            const Tensor w = kael::ones({4}, DType::F32, device).set_requires_grad(true);
            const Tensor b = kael::ones({4}, DType::F32, device).set_requires_grad(true);
            const Tensor out = kael::layer_norm(x, w, b);
            BOOST_TEST((out.shape() == Shape{0, 3, 4}));
            kael::sum(out).backward();
            BOOST_TEST((x.grad().shape() == Shape{0, 3, 4}));
            BOOST_TEST(v<float>(w.grad().cpu()) == (std::vector<float>{0, 0, 0, 0}),
                       boost::test_tools::per_element());
            BOOST_TEST(v<float>(b.grad().cpu()) == (std::vector<float>{0, 0, 0, 0}),
                       boost::test_tools::per_element());
            const Tensor no_columns = kael::zeros({3, 0}, DType::F32, device);
            BOOST_TEST((kael::layer_norm(no_columns).shape() == Shape{3, 0}));
        }
    }
}

// An f32 input with f64 parameters is computed in f64, as the composed op promoted; each
// gradient keeps its input's dtype.
BOOST_AUTO_TEST_CASE(layer_norm_promotes_mixed_dtypes) {
    const Tensor x = f64(kX, {2, 5}).to(DType::F32).set_requires_grad(true);
    const Tensor w = f64(kWeight, {5}).set_requires_grad(true);
    const Tensor out = kael::layer_norm(x, w, Tensor(), 1e-5);
    BOOST_TEST(out.dtype() == DType::F64);
    out.backward(f64(kGrad, {2, 5}));
    BOOST_TEST(x.grad().dtype() == DType::F32);
    BOOST_TEST(w.grad().dtype() == DType::F64);
    check_close(v<double>(w.grad()),
                {-0.15290425275480374, 3.2649772419841154, 1.9404699563784369,
                 0.5801854400244364, 2.0754211761569286},
                1e-6);
}

// A plugin from before ABI 1.2 (tests/test_plugins/old_minor.c) has no layer_norm slots: the
// cpu plugin serves them through copies, counted; a plugin with the slots needs no fallback.
BOOST_AUTO_TEST_CASE(layer_norm_falls_back_only_where_the_slots_are_missing) {
    const kael::Device device("cuda");
    if (!kael::is_available(device)) {
        BOOST_TEST_MESSAGE("no cuda device here; skipped");
        return;
    }
    std::string plugin;
    for (const kael::DeviceInfo& info : kael::devices()) {
        plugin = info.device == kael::Device("cuda:0") ? info.plugin : plugin;
    }
    std::uint32_t abi_minor = 0;
    for (const auto& record : kael::plugins()) {
        abi_minor = record.name == plugin ? record.abi_minor : abi_minor;
    }
    BOOST_TEST_MESSAGE("layer_norm on cuda:0 served by " << plugin << " (ABI 1." << abi_minor
                                                          << ")");
    kael::reset_fallback_counts();
    const Tensor x = f64(kX, {2, 5}).to(device).set_requires_grad(true);
    const Tensor w = f64(kWeight, {5}).to(device).set_requires_grad(true);
    kael::layer_norm(x, w).backward(f64(kGrad, {2, 5}).to(device));
    check_close(v<double>(w.grad().cpu()),
                {-0.15290425275480374, 3.2649772419841154, 1.9404699563784369,
                 0.5801854400244364, 2.0754211761569286},
                1e-12);
    const auto counts = kael::fallback_counts();
    const bool has_slots = abi_minor >= 2;
    BOOST_TEST(counts.count(plugin + ":layer_norm") == (has_slots ? 0U : 1U));
    BOOST_TEST(counts.count(plugin + ":layer_norm_backward") == (has_slots ? 0U : 1U));
}
