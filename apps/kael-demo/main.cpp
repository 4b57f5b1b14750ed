// kael-demo: the same small computation on every available device, checked against cpu.
#include <CLI/CLI.hpp>
#include <iostream>

#include "kael/ops.h"
#include "kael/registry.h"

namespace {

struct Results {
    kael::Tensor matmul;
    kael::Tensor activations;
    kael::Tensor column_sums;
    kael::Tensor picked;
};

Results compute(const kael::Device& device) {
    const kael::Tensor a = kael::arange(0, 12, 1, kael::DType::F32, device).view({3, 4});
    const kael::Tensor b = kael::arange(-4, 4, 1, kael::DType::F32, device).view({4, 2});
    Results results;
    results.matmul = kael::matmul(a, b);
    results.activations = kael::sigmoid(kael::relu(results.matmul * 0.01) - 0.5);
    results.column_sums = kael::sum(a.T(), 1);
    const kael::Tensor index = kael::tensor(std::vector<std::int64_t>{3, 0, 1}, {3, 1}, device);
    results.picked = kael::gather(a, 1, index);
    return results;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kael-demo: computes a small matmul, activations, reductions and a gather on "
                 "every available device and compares each with cpu"};
    app.set_version_flag("--version", "kael-demo " + kael::core_version());
    std::string only;
    app.add_option("--device", only, "run only on this device (cpu, cuda, cuda:N)");
    CLI11_PARSE(app, argc, argv);
    try {
        std::vector<kael::Device> targets;
        if (!only.empty()) {
            targets.push_back(kael::Device(only));
            kael::require_device(targets.back());
        } else {
            for (const kael::DeviceInfo& info : kael::devices()) {
                targets.push_back(info.device);
            }
        }
        const Results reference = compute(kael::kCPU);
        int mismatches = 0;
        for (const kael::Device& device : targets) {
            const Results results = compute(device);
            std::cout << "== " << device.str() << "\n"
                      << "a @ b            = " << results.matmul << "\n"
                      << "sigmoid(relu(.)) = " << results.activations << "\n"
                      << "sum(a.T, 1)      = " << results.column_sums << "\n"
                      << "gather(a, 1, i)  = " << results.picked << "\n";
            const bool same = kael::allclose(results.matmul.cpu(), reference.matmul) &&
                              kael::allclose(results.activations.cpu(), reference.activations) &&
                              kael::allclose(results.column_sums.cpu(), reference.column_sums) &&
                              kael::allclose(results.picked.cpu(), reference.picked);
            std::cout << (same ? "matches cpu\n" : "DIFFERS FROM CPU\n");
            mismatches += same ? 0 : 1;
        }
        const auto fallbacks = kael::fallback_counts();
        for (const auto& [slot, count] : fallbacks) {
            std::cout << "host fallback " << slot << ": " << count << " call(s)\n";
        }
        return mismatches == 0 ? 0 : 1;
    } catch (const std::exception& error) {
        std::cerr << "kael-demo: " << error.what() << "\n";
        return 1;
    }
}
