// Index bounds checks (check_indices): at the call on cpu, and deferred to the next
// synchronising call on cuda:0 (a GPU, or the emulated plugin that imitates one), as CUDA
// reports a device-side error: once, with the op's name, and with later work running normally.
#define BOOST_TEST_MODULE index_check
#include <boost/test/unit_test.hpp>
#include <functional>
#include <optional>
#include <sstream>
#include <string>

#include <unistd.h>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"

using kael::Device;
using kael::DType;
using kael::Tensor;
namespace tt = boost::test_tools;

namespace {

Tensor ints(const std::vector<std::int64_t>& values, const Device& device) {
    return kael::tensor(values, {}, device);
}

// The message of the IndexError body throws, or "" when it throws none.
std::string index_error(const std::function<void()>& body) {
    try {
        body();
    } catch (const kael::IndexError& error) {
        return error.what();
    }
    return "";
}

// The message of a deferred IndexError without the suffix naming the issuing thread, which
// must be this one; "" when none is thrown.
std::string deferred_error(const std::function<void()>& body) {
    std::string message = index_error(body);
    const std::string suffix = " (issued by thread " + std::to_string(gettid()) +
                               "; a cuda index check reports at the next synchronising call)";
    if (message.size() >= suffix.size() &&
        message.compare(message.size() - suffix.size(), suffix.size(), suffix) == 0) {
        message.resize(message.size() - suffix.size());
    } else if (!message.empty()) {
        message += " [no issuing thread named]";
    }
    return message;
}

// cuda:0, emulated here and real on a GPU machine: both plugins defer their index checks.
std::optional<Device> deferring_device() {
    for (const kael::DeviceInfo& info : kael::devices()) {
        if (info.device != kael::kCPU) return info.device;
    }
    return std::nullopt;
}

}  // namespace

// The first offending index in row-major order is the one named, below or above the range.
BOOST_AUTO_TEST_CASE(cpu_reports_the_first_bad_index_at_the_call) {
    const Tensor data = kael::arange(0, 6, 1, DType::F64).view({3, 2});
    BOOST_TEST(index_error([&] { (void)kael::index_select(data, 0, ints({1, 5, -7, 9}, kael::kCPU)); }) ==
               "index_select: index 5 is out of bounds for dimension 0 with size 3");
    BOOST_TEST(index_error([&] { (void)kael::embedding(data, ints({0, -7, 5}, kael::kCPU)); }) ==
               "embedding: index -7 is out of bounds for dimension 0 with size 3");
    BOOST_TEST(index_error([&] { (void)kael::index(data, {ints({2, -4, 3}, kael::kCPU)}); }) ==
               "index: index -4 is out of bounds for dimension 0 with size 3");
    BOOST_TEST(index_error([&] {
                   (void)kael::cross_entropy(data, ints({1, 2, 0}, kael::kCPU));
               }) == "cross_entropy: target 2 is out of bounds for dimension 1 with size 2");
}

BOOST_AUTO_TEST_CASE(deferred_errors_surface_at_the_next_synchronising_call_once) {
    const std::optional<Device> device = deferring_device();
    if (!device) {
        BOOST_TEST_MESSAGE("no cuda device: nothing deferred to test");
        return;
    }
    const Tensor data = kael::arange(0, 6, 1, DType::F64, *device).view({3, 2});
    // to(cpu): the call itself returns; the copy reports the error; the good rows are right.
    Tensor selected;
    BOOST_TEST(index_error([&] {
                   selected = kael::index_select(data, 0, ints({2, 7, 0}, *device));
               }).empty());
    BOOST_TEST(deferred_error([&] { (void)selected.to(kael::kCPU); }) ==
               "index_select: index 7 is out of bounds for dimension 0 with size 3");
    const std::vector<double> rows = selected.to_vector<double>();  // reported once only
    BOOST_TEST((std::vector<double>{rows[0], rows[1], rows[4], rows[5]}) ==
                   (std::vector<double>{4, 5, 0, 1}),
               tt::per_element());
    // item() after an embedding; of two errors before a sync, the first is the one reported.
    const Tensor first = kael::embedding(data, ints({-1, 1}, *device));
    const Tensor second = kael::gather(data, 1, kael::tensor(std::vector<std::int64_t>{0, 9, 1, 1, 0, 0}, {3, 2}, *device));
    BOOST_TEST(deferred_error([&] { (void)kael::sum(second).item<double>(); }) ==
               "embedding: index -1 is out of bounds for dimension 0 with size 3");
    BOOST_TEST(index_error([&] { kael::synchronize(*device); }).empty());
    // An embedding runs its check inside the row gather, over many blocks: the first bad
    // position wins, also over a second embedding's error before the same sync.
    std::vector<std::int64_t> many(5000, 3);
    many[3001] = 12;
    many[4000] = -3;
    const Tensor table = kael::randn({10, 8}).to(*device);
    const Tensor picked = kael::embedding(table, ints(many, *device));
    (void)kael::embedding(table, ints({11}, *device));
    BOOST_TEST(deferred_error([&] { kael::synchronize(*device); }) ==
               "embedding: index 12 is out of bounds for dimension 0 with size 10");
    const std::vector<float> row = picked.slice(0, 3001, 3002).to_vector<float>();
    BOOST_TEST(row == std::vector<float>(8, 0.0F), tt::per_element());  // skipped, zeros
    BOOST_TEST(picked.slice(0, 0, 1).to_vector<float>() ==
                   table.slice(0, 3, 4).to_vector<float>(),
               tt::per_element());
    // synchronize() and printing report it too.
    (void)kael::cross_entropy(data, ints({0, 1, 2}, *device));
    BOOST_TEST(deferred_error([&] { kael::synchronize(*device); }) ==
               "cross_entropy: target 2 is out of bounds for dimension 1 with size 2");
    (void)kael::index(data, {ints({3}, *device)});
    BOOST_TEST(deferred_error([&] {
                   std::ostringstream text;
                   text << data;
               }) == "index: index 3 is out of bounds for dimension 0 with size 3");
}

// After an error, the same ops on good indices (forward and backward) match the cpu.
BOOST_AUTO_TEST_CASE(work_after_a_deferred_error_runs_normally) {
    const std::optional<Device> device = deferring_device();
    if (!device) {
        BOOST_TEST_MESSAGE("no cuda device: nothing deferred to test");
        return;
    }
    const Tensor weight_values = kael::randn({5, 3}, DType::F64);
    (void)kael::embedding(weight_values.to(*device), ints({5}, *device));
    BOOST_TEST(!index_error([&] { kael::synchronize(*device); }).empty());
    const auto run = [&](const Device& on) {
        Tensor weight = weight_values.to(on).detach().set_requires_grad(true);
        const Tensor picked = kael::embedding(weight, ints({4, 0, 4, -2 + 3}, on));
        kael::sum(picked * picked).backward();
        return std::make_pair(picked.to_vector<double>(), weight.grad().to_vector<double>());
    };
    const auto [cpu_out, cpu_grad] = run(kael::kCPU);
    const auto [device_out, device_grad] = run(*device);
    BOOST_TEST(device_out == cpu_out, tt::per_element());
    BOOST_TEST(device_grad == cpu_grad, tt::per_element());
    // Negative indices of advanced indexing wrap on the device.
    const Tensor wrapped = kael::index(weight_values.to(*device), {ints({-1, 0, -5}, *device)});
    BOOST_TEST(wrapped.to_vector<double>() ==
                   kael::index(weight_values, {ints({4, 0, 0}, kael::kCPU)}).to_vector<double>(),
               tt::per_element());
}
