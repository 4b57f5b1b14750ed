// The out-of-tree example plugin (docs/examples/toy_plugin) seen by the core: a device type no
// kael code names, per-call fallbacks of what it lacks, and choosing a plugin per device type.
// Run with KAEL_PLUGIN_PATH holding the toy plugin and the old_minor test plugin.
#define BOOST_TEST_MODULE toy_device
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "kael/ops.h"
#include "kael/optim.h"
#include "kael/registry.h"

using kael::Device;
using kael::Tensor;

namespace {

const Device kToy("toy", 0);

std::int64_t fallbacks(const std::string& key) {
    const auto counts = kael::fallback_counts();
    const auto found = counts.find(key);
    return found == counts.end() ? 0 : found->second;
}

void expect_equal(const Tensor& on_toy, const Tensor& on_cpu) {
    BOOST_TEST((on_toy.device() == kToy));
    BOOST_TEST(kael::allclose(on_toy.cpu(), on_cpu), on_toy.cpu() << " vs " << on_cpu);
}

}  // namespace

BOOST_AUTO_TEST_CASE(toy_is_a_registered_type_with_two_devices) {
    const auto types = kael::registered_device_types();
    BOOST_TEST((std::find(types.begin(), types.end(), "toy") != types.end()));
    BOOST_TEST((Device("toy:1") == Device("toy", 1)));
    BOOST_TEST(Device("toy").str() == "toy:0");
    int listed = 0;
    for (const kael::DeviceInfo& info : kael::devices()) {
        listed += info.device.type() == "toy" && info.plugin == "toy" ? 1 : 0;
    }
    BOOST_TEST(listed == 2);
    BOOST_TEST(!kael::is_available(Device("toy", 2)));
    try {
        kael::require_device(Device("toy", 2));
        BOOST_FAIL("toy:2 was accepted");
    } catch (const kael::DeviceError& error) {
        BOOST_TEST(std::string(error.what()).find("plugin 'toy' has 2 device(s)") !=
                   std::string::npos);
    }
    try {
        (void)Device("tpu:0");
        BOOST_FAIL("tpu was accepted");
    } catch (const kael::ValueError& error) {
        BOOST_TEST(std::string(error.what()).find("'toy'") != std::string::npos, error.what());
    }
}

BOOST_AUTO_TEST_CASE(what_the_plugin_has_runs_on_it) {
    const Tensor a = kael::arange(0, 6).reshape({2, 3}) - 2.5;
    const Tensor b = kael::full({2, 3}, 0.25);
    const Tensor row = kael::arange(0, 3);
    kael::reset_fallback_counts();
    const Tensor ta = a.to(kToy);
    const Tensor tb = b.to(kToy);
    expect_equal(ta + tb, a + b);
    expect_equal(ta * tb - ta, a * b - a);
    expect_equal(kael::relu(-ta), kael::relu(-a));
    expect_equal(ta.transpose(0, 1) + tb.transpose(0, 1), a.transpose(0, 1) + b.transpose(0, 1));
    expect_equal(ta + row.to(kToy), a + row);  // a broadcast row: stride 0
    expect_equal(kael::zeros({2, 2}, kael::DType::I64, kToy),
                 kael::zeros({2, 2}, kael::DType::I64));
    BOOST_TEST(fallbacks("toy:elementwise") == 0);
    BOOST_TEST(fallbacks("toy:fill") == 0);
}

BOOST_AUTO_TEST_CASE(what_it_lacks_falls_back_to_cpu_and_is_counted) {
    const Tensor a = kael::arange(0, 6).reshape({2, 3});
    const Tensor ta = a.to(kToy);
    kael::reset_fallback_counts();
    expect_equal(kael::exp(ta), kael::exp(a));  // the slot returns UNSUPPORTED for exp
    BOOST_TEST(fallbacks("toy:elementwise") == 1);
    const Tensor d = a.to(kael::DType::F64);
    const Tensor td = ta.to(kael::DType::F64);
    BOOST_TEST(fallbacks("toy:convert") == 1);  // a NULL slot
    expect_equal(td + td, d + d);               // f64: UNSUPPORTED again
    BOOST_TEST(fallbacks("toy:elementwise") == 2);
    expect_equal(kael::matmul(ta, ta.transpose(0, 1)), kael::matmul(a, a.transpose(0, 1)));
    BOOST_TEST(fallbacks("toy:matmul") == 1);
    BOOST_TEST(kael::sum(ta).item_double() == 15.0);
    BOOST_TEST(fallbacks("toy:reduce") + fallbacks("toy:reduce_dims") >= 1);
}

// The toy (built before 1.14's narrow integers, no KAEL_DTYPE_FLAG_NARROW_INT) never sees
// them: its fills and converts of int8 run on the cpu plugin, counted, and results stay on toy.
BOOST_AUTO_TEST_CASE(narrow_integers_reach_an_older_plugin_only_as_counted_fallbacks) {
    kael::reset_fallback_counts();
    const Tensor bytes = kael::full({3}, 100, kael::DType::I8, kToy);
    BOOST_TEST(fallbacks("toy:fill") == 1);
    const Tensor doubled = bytes + bytes;  // in int64 on toy, narrowed: 200 wraps to -56
    BOOST_TEST((doubled.device() == kToy && doubled.dtype() == kael::DType::I8));
    BOOST_TEST(doubled.cpu().to(kael::DType::I64).to_vector<std::int64_t>()[0] == -56);
    BOOST_TEST(fallbacks("toy:convert") >= 2);
}

BOOST_AUTO_TEST_CASE(devices_of_one_type_are_still_separate_devices) {
    const Tensor a = kael::arange(0, 4);
    const Tensor on_one = a.to(Device("toy:1"));
    BOOST_TEST((on_one.to(kToy).device() == kToy));
    expect_equal(on_one.to(kToy), a);
    try {
        (void)(on_one + a.to(kToy));
        BOOST_FAIL("toy:1 + toy:0 was accepted");
    } catch (const kael::DeviceError& error) {
        BOOST_TEST(std::string(error.what()).find("toy:1 and toy:0") != std::string::npos,
                   error.what());
    }
    try {
        (void)(a + on_one);
        BOOST_FAIL("cpu + toy:1 was accepted");
    } catch (const kael::DeviceError& error) {
        BOOST_TEST(std::string(error.what()).find("cpu and toy") != std::string::npos,
                   error.what());
    }
}

// The toy has no adam slot, so a capturable step (count and factors on the device) is
// composed of ops on the toy, never a cpu round trip of the fused kernel.
BOOST_AUTO_TEST_CASE(a_device_step_count_composes_the_step_without_an_adam_slot) {
    const Tensor start = kael::tensor(std::vector<float>{1.0F, -2.0F, 0.5F});
    const Tensor grad = kael::tensor(std::vector<float>{0.3F, 0.1F, -0.2F});
    const kael::optim::AdamHyper hyper{0.1, 0.9, 0.999, 1e-8, 0.0, true};
    Tensor on_cpu = start.clone();
    Tensor m1 = kael::zeros({3}), v1 = kael::zeros({3});
    Tensor on_toy = start.to(kToy);
    Tensor m2 = kael::zeros({3}).to(kToy), v2 = kael::zeros({3}).to(kToy);
    const Tensor count = kael::zeros({}).to(kToy);
    kael::reset_fallback_counts();
    for (std::int64_t step = 1; step <= 2; ++step) {
        kael::optim::adam_step({on_cpu}, {grad}, {m1}, {v1}, {step}, hyper);
        kael::optim::adam_step_on_device({on_toy}, {grad.to(kToy)}, {m2}, {v2}, {count}, {},
                                         hyper);
    }
    BOOST_TEST(fallbacks("toy:adam") == 0);
    expect_equal(on_toy, on_cpu);
    BOOST_TEST(count.cpu().item_double() == 2.0);
}

BOOST_AUTO_TEST_CASE(a_plugin_is_chosen_per_device_type) {
    // old_minor serves cuda too, at priority 1 against emulated's 10; nothing is on cuda yet.
    const auto server_of = [](const std::string& type) {
        for (const kael::DeviceTypeServer& server : kael::device_type_servers()) {
            if (server.device_type == type) {
                return server;
            }
        }
        return kael::DeviceTypeServer{};
    };
    BOOST_TEST(server_of("cuda").plugin == "emulated");
    BOOST_TEST(server_of("cuda").reason == "highest priority with devices (10)");
    BOOST_CHECK_THROW(kael::set_device_plugin("cuda", "toy"), kael::ValueError);
    BOOST_CHECK_THROW(kael::set_device_plugin("cuda", "no_such_plugin"), kael::ValueError);
    kael::set_device_plugin("cuda", "old_minor");
    BOOST_TEST(server_of("cuda").plugin == "old_minor");
    BOOST_TEST(server_of("cuda").reason == "chosen by set_device_plugin");
    kael::reset_fallback_counts();
    const Tensor on_cuda = kael::ones({3}, kael::DType::F32, Device("cuda:0"));
    BOOST_TEST(fallbacks("old_minor:fill") == 1);  // old_minor has no kernel slots
    BOOST_TEST(kael::sum(on_cuda).item_double() == 3.0);
    // old_minor now holds memory: emulated may not take cuda back under its tensors.
    BOOST_CHECK_THROW(kael::set_device_plugin("cuda", "emulated"), kael::Error);
    kael::set_device_plugin("cuda", "old_minor");  // choosing the same one again is fine
}
