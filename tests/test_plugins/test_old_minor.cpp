// A plugin from an older ABI minor has no kernel slots: its device still works, with every
// kernel run on the cpu plugin through copies and counted. Run with
// KAEL_PLUGIN_PATH=<old_minor folder> and KAEL_PLUGINS=cpu,old_minor.
#include <boost/test/unit_test.hpp>

#include "kael/gpt.h"
#include "kael/ops.h"
#include "kael/optim.h"
#include "plugin_loading_support.h"

using kael::PluginStatus;
using namespace kael_test;

namespace {

const kael::Device kCuda("cuda", 0);

std::int64_t fallbacks_for(const std::string& slot) {
    const auto counts = kael::fallback_counts();
    const auto found = counts.find("old_minor:" + slot);
    return found == counts.end() ? 0 : found->second;
}

void check_on_cuda(const kael::Tensor& tensor) {
    BOOST_CHECK_MESSAGE(tensor.device() == kCuda, "result lives on " << tensor.device().str());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(old_minor)

BOOST_AUTO_TEST_CASE(loads_and_serves_cuda) {
    const kael::PluginRecord record = require_record("old_minor");
    check_status(record, PluginStatus::Loaded);
    BOOST_TEST(record.selected);
    BOOST_TEST(record.reason.empty());
    BOOST_TEST(record.device_type == "cuda");
    BOOST_TEST(record.kind == "emulated");
    BOOST_TEST(record.priority == 1);
    BOOST_TEST(record.device_count == 1);
    BOOST_TEST(record.version == "0.0.9");

    bool cuda_listed = false;
    for (const kael::DeviceInfo& info : kael::devices()) {
        if (info.device == kCuda) {
            cuda_listed = true;
            BOOST_TEST(info.plugin == "old_minor");
            BOOST_TEST(info.emulated);
            BOOST_TEST(info.name == "kael test device (host memory)");
        }
    }
    BOOST_TEST(cuda_listed);
    BOOST_CHECK_THROW(kael::require_device(kael::Device("cuda", 1)), kael::DeviceError);
    check_core_still_works();
}

BOOST_AUTO_TEST_CASE(factories_fall_back_for_fill) {
    kael::reset_fallback_counts();
    const kael::Tensor zeros = kael::zeros({3}, kael::DType::F32, kCuda);
    check_on_cuda(zeros);
    const std::vector<float> expected = {0.0F, 0.0F, 0.0F};
    BOOST_TEST(zeros.to_vector<float>() == expected, boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for("fill") > 0);
}

BOOST_AUTO_TEST_CASE(add_falls_back_for_elementwise) {
    kael::reset_fallback_counts();
    const kael::Tensor a = kael::tensor(std::vector<float>{1.0F, 2.0F, 3.0F}, {}, kCuda);
    const kael::Tensor b = kael::ones({3}, kael::DType::F32, kCuda);
    const kael::Tensor sum = kael::add(a, b);
    check_on_cuda(sum);
    const std::vector<float> expected = {2.0F, 3.0F, 4.0F};
    BOOST_TEST(sum.to_vector<float>() == expected, boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for("elementwise") > 0);
}

BOOST_AUTO_TEST_CASE(sum_falls_back_for_reduce) {
    kael::reset_fallback_counts();
    const kael::Tensor a = kael::tensor(std::vector<float>{1.0F, 2.0F, 3.0F, 4.0F}, {2, 2}, kCuda);
    const kael::Tensor total = kael::sum(a);
    check_on_cuda(total);
    BOOST_TEST(total.item<float>() == 10.0F);
    const kael::Tensor rows = kael::sum(a, 1);
    check_on_cuda(rows);
    const std::vector<float> expected = {3.0F, 7.0F};
    BOOST_TEST(rows.to_vector<float>() == expected, boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for("reduce") > 0);
}

// The variance reduction is ABI 1.2: an ABI 1.0 plugin never sees it, the cpu plugin runs it.
BOOST_AUTO_TEST_CASE(var_and_std_fall_back_for_reduce_and_match_cpu) {
    kael::reset_fallback_counts();
    const std::vector<double> values = {1.0, 2.0, 4.0, 8.0, 1e6, 1e6 + 1.0, 1e6 + 3.0, 1e6};
    for (const kael::DType dtype : {kael::DType::F32, kael::DType::F64}) {
        const kael::Tensor host = kael::tensor(values, {2, 4}).to(dtype);
        const kael::Tensor a = host.to(kCuda);
        const kael::Tensor rows = kael::var(a, 1);
        check_on_cuda(rows);
        const std::vector<double> expected = kael::var(host, 1).to(kael::DType::F64).to_vector<double>();
        BOOST_TEST(rows.to(kael::DType::F64).cpu().to_vector<double>() == expected,
                   boost::test_tools::per_element());
        BOOST_TEST(kael::stddev(a.T(), 0, 0).to(kael::DType::F64).cpu().to_vector<double>() ==
                       kael::stddev(host.T(), 0, 0).to(kael::DType::F64).to_vector<double>(),
                   boost::test_tools::per_element());
        BOOST_TEST(kael::var(a).to(kael::DType::F64).item<double>() ==
                   kael::var(host).to(kael::DType::F64).item<double>());
    }
    BOOST_TEST(fallbacks_for("reduce") > 0);
}

BOOST_AUTO_TEST_CASE(matmul_falls_back_for_matmul) {
    kael::reset_fallback_counts();
    const kael::Tensor a = kael::tensor(std::vector<float>{1.0F, 2.0F, 3.0F, 4.0F}, {2, 2}, kCuda);
    const kael::Tensor b = kael::tensor(std::vector<float>{5.0F, 6.0F, 7.0F, 8.0F}, {2, 2}, kCuda);
    const kael::Tensor product = kael::matmul(a, b);
    check_on_cuda(product);
    const std::vector<float> expected = {19.0F, 22.0F, 43.0F, 50.0F};
    BOOST_TEST(product.to_vector<float>() == expected, boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for("matmul") > 0);
}

BOOST_AUTO_TEST_CASE(gather_falls_back_for_gather) {
    kael::reset_fallback_counts();
    const kael::Tensor data = kael::tensor(std::vector<float>{1.0F, 2.0F, 3.0F, 4.0F}, {2, 2}, kCuda);
    const kael::Tensor index = kael::tensor(std::vector<std::int64_t>{1, 0, 0, 0}, {2, 2}, kCuda);
    const kael::Tensor gathered = kael::gather(data, 1, index);
    check_on_cuda(gathered);
    const std::vector<float> expected = {2.0F, 1.0F, 3.0F, 3.0F};
    BOOST_TEST(gathered.to_vector<float>() == expected, boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for("gather") > 0);
    // Without check_indices the indices are checked on the host, so the error is the call's.
    BOOST_TEST(fallbacks_for("check_indices") > 0);
    const kael::Tensor bad = kael::tensor(std::vector<std::int64_t>{1, 2, 0, 0}, {2, 2}, kCuda);
    BOOST_CHECK_EXCEPTION((void)kael::gather(data, 1, bad), kael::IndexError,
                          [](const kael::IndexError& error) {
                              return std::string(error.what()) ==
                                     "gather: index 2 is out of bounds for dimension 1 with size 2";
                          });
}

BOOST_AUTO_TEST_CASE(linear_composes_matmul_and_add_without_matmul_bias) {
    kael::reset_fallback_counts();
    const kael::Tensor x = kael::tensor(std::vector<float>{1.0F, 2.0F}, {1, 2}, kCuda);
    const kael::Tensor weight = kael::tensor(std::vector<float>{1.0F, 0.0F, 1.0F, 1.0F}, {2, 2}, kCuda);
    const kael::Tensor bias = kael::tensor(std::vector<float>{10.0F, 20.0F}, {2}, kCuda);
    const kael::Tensor out = kael::linear(x, weight, bias);
    check_on_cuda(out);
    const std::vector<float> expected = {11.0F, 23.0F};
    BOOST_TEST(out.to_vector<float>() == expected, boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for("matmul") > 0);
    BOOST_TEST(fallbacks_for("matmul_bias") == 0);
}

// The ABI 1.2 kernels (fused row ops, attention, adam, ...) reach an ABI 1.0 plugin's device
// through the host fallback: a GPT training step there matches the same step on cpu.
BOOST_AUTO_TEST_CASE(model_path_kernels_fall_back_and_match_cpu) {
    kael::nn::GPTConfig config;
    config.vocab_size = 11;
    config.block_size = 8;
    config.layers = 1;
    config.heads = 2;
    config.embed = 8;
    kael::manual_seed(41);
    kael::nn::GPT on_cpu(config);
    kael::manual_seed(41);
    kael::nn::GPT on_device(config);
    on_device.to(kCuda);
    kael::optim::AdamW cpu_optimizer(on_cpu.parameters(), 0.01);
    kael::optim::AdamW device_optimizer(on_device.parameters(), 0.01);
    const kael::Tensor tokens = kael::tensor(std::vector<std::int64_t>{1, 4, 2, 9, 3, 3}, {2, 3});
    const kael::Tensor targets = kael::tensor(std::vector<std::int64_t>{4, 2, 9, 3, 3, 0}, {2, 3});
    kael::reset_fallback_counts();
    for (int step = 0; step < 2; ++step) {
        const kael::Tensor cpu_loss = on_cpu.loss(tokens, targets);
        const kael::Tensor device_loss = on_device.loss(tokens.to(kCuda), targets.to(kCuda));
        check_on_cuda(device_loss);
        BOOST_TEST(device_loss.item<float>() == cpu_loss.item<float>(),
                   boost::test_tools::tolerance(1e-5F));
        cpu_optimizer.zero_grad();
        device_optimizer.zero_grad();
        cpu_loss.backward();
        device_loss.backward();
        cpu_optimizer.step();
        device_optimizer.step();
    }
    const auto cpu_parameters = on_cpu.parameters();
    const auto device_parameters = on_device.parameters();
    for (std::size_t i = 0; i < cpu_parameters.size(); ++i) {
        check_on_cuda(device_parameters[i]);
        BOOST_TEST(kael::allclose(device_parameters[i].detach().to(kael::kCPU),
                                  cpu_parameters[i].detach(), 1e-4, 1e-5),
                   "parameter " << i);
    }
    BOOST_TEST(fallbacks_for("adam") > 0);
    BOOST_TEST(fallbacks_for("elementwise") > 0);
}

BOOST_AUTO_TEST_CASE(cpu_work_is_never_counted_as_fallback) {
    kael::reset_fallback_counts();
    check_core_still_works();
    BOOST_TEST(kael::fallback_counts().empty());
}

BOOST_AUTO_TEST_SUITE_END()
