// kael::DeviceGraph on the device under test: recorded ops run only when replayed, on the same
// addresses each time; blocks the recording freed are not handed to anyone else; a host copy
// inside a recording is an error that leaves the device usable. A device that cannot record
// says so with a TypeError.
#include "device_test_support.h"
#include "kael/device_graph.h"

using device_test::OnDevice;
using kael::DeviceGraph;
using kael::DType;
using kael::Tensor;
namespace tt = boost::test_tools;

BOOST_FIXTURE_TEST_SUITE(device_graph, OnDevice)

BOOST_AUTO_TEST_CASE(records_once_and_replays_in_order) {
    if (!DeviceGraph::supported(device)) {
        BOOST_CHECK_THROW((void)DeviceGraph::record(device, [] {}), kael::TypeError);
        return;
    }
    Tensor x = kael::tensor(std::vector<float>{1, 2, 3, -4}, {4}).to(device);
    Tensor total = kael::zeros({}, DType::F32, device);
    Tensor made;
    const DeviceGraph graph = DeviceGraph::record(device, [&] {
        const Tensor doubled = x * 2.0 + 1.0;  // a temporary, freed inside the recording
        x.copy_(doubled);
        kael::add_(total, kael::sum(x));
        made = kael::relu(x);  // made inside: holds its values once replayed
    });
    // Recording ran nothing.
    BOOST_TEST(x.to_vector<float>() == (std::vector<float>{1, 2, 3, -4}), tt::per_element());
    // Eager blocks of the temporaries' size must not be the recording's: fill some meanwhile.
    std::vector<Tensor> others;
    for (int i = 0; i < 8; ++i) {
        others.push_back(kael::full({4}, 100.0 + i, DType::F32, device));
    }
    std::vector<float> expected{1, 2, 3, -4};
    float expected_total = 0;
    for (int replay = 0; replay < 3; ++replay) {
        graph.replay();
        for (float& value : expected) {
            value = value * 2 + 1;
            expected_total += value;
        }
    }
    BOOST_TEST(x.to_vector<float>() == expected, tt::per_element());
    BOOST_TEST(total.item<double>() == expected_total);
    std::vector<float> relu_expected;
    for (const float value : expected) {
        relu_expected.push_back(value > 0 ? value : 0);
    }
    BOOST_TEST(made.to_vector<float>() == relu_expected, tt::per_element());
    for (int i = 0; i < 8; ++i) {
        BOOST_TEST(others[static_cast<std::size_t>(i)].to_vector<float>() ==
                       std::vector<float>(4, 100.0F + static_cast<float>(i)),
                   tt::per_element());
    }
}

BOOST_AUTO_TEST_CASE(host_copies_inside_a_recording_fail_and_leave_the_device_usable) {
    if (!DeviceGraph::supported(device)) {
        return;
    }
    const Tensor x = kael::ones({3}, DType::F32, device);
    BOOST_CHECK_THROW((void)DeviceGraph::record(device, [&] { (void)kael::sum(x).item<double>(); }),
                      kael::Error);
    BOOST_CHECK_THROW(
        (void)DeviceGraph::record(
            device, [&] { (void)kael::tensor(std::vector<float>{1}, {1}).to(device); }),
        kael::Error);
    BOOST_CHECK_THROW(
        (void)DeviceGraph::record(device, [&] { (void)DeviceGraph::record(device, [] {}); }),
        kael::ValueError);
    BOOST_TEST(kael::sum(x * 3.0).item<double>() == 9.0);  // eager work runs as before
}

// Reductions whose blocks meet at counters (a long row, long columns): each replay must find
// its counters zero again, so every replay equals the same reduction run eagerly.
BOOST_AUTO_TEST_CASE(recorded_multi_block_reductions_replay_like_eager_ones) {
    if (!DeviceGraph::supported(device)) {
        return;
    }
    kael::manual_seed(61);
    Tensor row = kael::randn({50257}, DType::F32, device);
    Tensor columns = kael::randn({8192, 16}, DType::F32, device);
    Tensor row_sum = kael::zeros({}, DType::F32, device);
    Tensor largest = kael::zeros({}, DType::F32, device);
    Tensor largest_at = kael::zeros({}, DType::I64, device);
    Tensor column_sums = kael::zeros({16}, DType::F32, device);
    const DeviceGraph graph = DeviceGraph::record(device, [&] {
        row_sum.copy_(kael::sum(row));
        const auto [value, at] = kael::max_with_indices(row, 0);
        largest.copy_(value);
        largest_at.copy_(at);
        column_sums.copy_(kael::sum(columns, 0));
    });
    for (int replay = 0; replay < 3; ++replay) {
        row.copy_(kael::randn({50257}, DType::F32, device));
        columns.copy_(kael::randn({8192, 16}, DType::F32, device));
        graph.replay();
        BOOST_TEST_CONTEXT("replay " << replay) {
            BOOST_TEST(row_sum.item<double>() == kael::sum(row).item<double>());
            const auto [value, at] = kael::max_with_indices(row, 0);
            BOOST_TEST(largest.item<double>() == value.item<double>());
            BOOST_TEST(largest_at.item<std::int64_t>() == at.item<std::int64_t>());
            BOOST_TEST(column_sums.to_vector<float>() == kael::sum(columns, 0).to_vector<float>(),
                       tt::per_element());
        }
    }
}

// generate replays one recorded step per token: the same tokens as the cpu's eager steps,
// across a context restart.
BOOST_AUTO_TEST_CASE(recorded_generation_matches_the_cpu) {
    kael::nn::GPTConfig config;
    config.vocab_size = 13;
    config.block_size = 10;
    config.layers = 2;
    config.heads = 2;
    config.embed = 16;
    kael::manual_seed(11);
    kael::nn::GPT cpu_gpt(config);
    kael::manual_seed(11);
    kael::nn::GPT device_gpt(config);
    device_gpt.to(device);
    cpu_gpt.eval();
    device_gpt.eval();
    for (const std::vector<std::int64_t>& prompt :
         {std::vector<std::int64_t>{1, 2, 3}, std::vector<std::int64_t>{5}}) {
        BOOST_TEST(device_gpt.generate(prompt, 20) == cpu_gpt.generate(prompt, 20),
                   tt::per_element());
    }
}

BOOST_AUTO_TEST_SUITE_END()
