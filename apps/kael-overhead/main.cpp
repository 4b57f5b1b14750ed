// kael-overhead: host time per small op (1-element tensors by default), the cost a decode step of
// a model pays ~400 times per token whatever the device. A benchmark, not a test.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/random.h"
#include "kael/registry.h"

namespace {

// Median over `samples` of the mean time of `runs` calls, in microseconds.
double microseconds_per_call(const std::function<void()>& call, int runs, int samples) {
    for (int i = 0; i < runs / 10 + 1; ++i) {
        call();  // warm-up: allocator caches, lazily loaded tables
    }
    std::vector<double> means;
    for (int sample = 0; sample < samples; ++sample) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < runs; ++i) {
            call();
        }
        const std::chrono::duration<double, std::micro> spent =
            std::chrono::steady_clock::now() - start;
        means.push_back(spent.count() / runs);
    }
    std::sort(means.begin(), means.end());
    return means[means.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kael-overhead: microseconds per small elementwise op (host overhead)"};
    std::string device_name = "cpu";
    std::int64_t elements = 1;
    int runs = 20000;
    int samples = 7;
    std::string filter;
    app.add_option("--device", device_name, "device, e.g. cpu or cuda:0")->capture_default_str();
    app.add_option("--elements", elements, "elements per tensor")->capture_default_str();
    app.add_option("--runs", runs, "calls per timed sample")->capture_default_str();
    app.add_option("--samples", samples, "timed samples (the median counts)")
        ->capture_default_str();
    app.add_option("--filter", filter, "run only the case of this name");
    CLI11_PARSE(app, argc, argv);
    try {
        const kael::Device device(device_name);
        kael::require_device(device);
        const kael::NoGradGuard no_grad;
        const kael::Tensor a = kael::randn({elements}).to(device);
        const kael::Tensor b = kael::randn({elements}).to(device);
        const kael::Tensor mask = kael::bernoulli_mask({elements}, 0.5).to(device);
        kael::Tensor target = kael::zeros({elements}, kael::DType::F32, device);
        const std::vector<std::pair<std::string, std::function<void()>>> cases = {
            {"add", [&] { (void)kael::add(a, b); }},
            {"mul_scalar", [&] { (void)(a * 0.5); }},
            {"gelu", [&] { (void)kael::gelu(a); }},
            {"add_inplace", [&] { kael::add_(target, b); }},
            {"where", [&] { (void)kael::where(mask, a, b); }},
            {"copy_", [&] { target.copy_(a); }},
        };
        std::cout << "device " << device.str() << ", " << elements << " elements per tensor\n";
        for (const auto& [name, call] : cases) {
            if (!filter.empty() && name != filter) {
                continue;
            }
            std::cout << std::left << std::setw(12) << name << std::fixed << std::setprecision(3)
                      << microseconds_per_call(call, runs, samples) << " us per call\n";
        }
        kael::synchronize(device);
    } catch (const std::exception& error) {
        std::cerr << "kael-overhead: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
