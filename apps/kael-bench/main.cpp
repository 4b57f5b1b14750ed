// kael-bench: throughput of common ops on one device, the median of repeated runs after a warm-up.
// A benchmark, not a test: it prints figures and never judges them.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kael/ops.h"
#include "kael/registry.h"

namespace {

constexpr int kSchemaVersion = 1;

// What a case computes; benchmarks/ops_vs_numpy.py rebuilds each case in numpy from these names.
enum class Operation { Matmul, Add, Sum, Relu, AddTransposed };

const char* operation_name(Operation operation) {
    switch (operation) {
        case Operation::Matmul: return "matmul";
        case Operation::Add: return "add";
        case Operation::Sum: return "sum";
        case Operation::Relu: return "relu";
        case Operation::AddTransposed: return "add_transposed";
    }
    return "unknown";
}

struct BenchCase {
    std::string name;
    Operation operation = Operation::Add;
    kael::DType dtype = kael::DType::F32;
    kael::Shape shape;                // of every operand
    double flops = 0;                 // floating-point operations per run; 0 unless a matmul
    double bytes_per_element = 0;     // memory traffic per output element; 0 for a matmul
    int max_repeats = 0;              // caps --repeat for the slowest cases; 0 for no cap

    [[nodiscard]] double elements() const {
        double count = 1;
        for (const auto extent : shape) {
            count *= static_cast<double>(extent);
        }
        return count;
    }
};

struct Measurement {
    BenchCase bench_case;
    int repeats = 0;
    int inner = 1;  // runs per timed sample (the sample's time is divided by it)
    double median_seconds = 0;
    double min_seconds = 0;

    [[nodiscard]] bool is_flops() const { return bench_case.flops > 0; }
    // GFLOP/s for a matmul, G elements/s for everything else.
    [[nodiscard]] double figure() const {
        return (is_flops() ? bench_case.flops : bench_case.elements()) / median_seconds / 1e9;
    }
    [[nodiscard]] const char* unit() const { return is_flops() ? "GFLOP/s" : "Gelem/s"; }
    [[nodiscard]] double gigabytes_per_second() const {
        return bench_case.elements() * bench_case.bytes_per_element / median_seconds / 1e9;
    }
};

// 1048576 -> "1Mi", 4096 -> "4Ki": element counts in case names.
std::string binary_count(std::int64_t count) {
    constexpr std::int64_t kKi = 1024;
    if (count % (kKi * kKi) == 0) {
        return std::to_string(count / (kKi * kKi)) + "Mi";
    }
    if (count % kKi == 0) {
        return std::to_string(count / kKi) + "Ki";
    }
    return std::to_string(count);
}

std::vector<BenchCase> cpu_cases(bool quick) {
    using kael::DType;
    std::vector<BenchCase> cases;
    const auto add_matmul = [&](DType dtype, std::int64_t n, int max_repeats) {
        const double size = static_cast<double>(n);
        cases.push_back({"matmul_" + kael::to_string(dtype) + "_" + std::to_string(n),
                         Operation::Matmul, dtype, {n, n}, 2 * size * size * size, 0,
                         max_repeats});
    };
    const auto add_flat = [&](Operation operation, std::int64_t count, double bytes_per_element) {
        cases.push_back({std::string(operation_name(operation)) + "_f32_" + binary_count(count),
                         operation, DType::F32, {count}, 0, bytes_per_element, 0});
    };
    const std::vector<std::int64_t> matmul_sizes =
        quick ? std::vector<std::int64_t>{16, 64} : std::vector<std::int64_t>{256, 512, 1024, 2048};
    for (const auto n : matmul_sizes) {
        add_matmul(DType::F32, n, n >= 2048 ? 5 : 0);
    }
    add_matmul(DType::F64, quick ? 64 : 1024, 0);
    // Bytes per element: two f32 reads and one write for add, a read and a write for relu.
    const std::int64_t small = quick ? 1 << 10 : 1 << 20;
    const std::int64_t large = quick ? 1 << 12 : 1 << 24;
    add_flat(Operation::Add, small, 12);
    add_flat(Operation::Add, large, 12);
    add_flat(Operation::Sum, large, 4);
    add_flat(Operation::Relu, large, 8);
    const std::int64_t side = quick ? 64 : 4096;
    cases.push_back({"add_transposed_f32_" + std::to_string(side), Operation::AddTransposed,
                     DType::F32, {side, side}, 0, 12, 0});
    return cases;
}

// The cases compared with PyTorch on a GPU (benchmarks/gpu_vs_torch.py): add and sum over 2^24 and
// 2^28 f32 elements, and f32 matmul from 512 to 8192 (the matmul path is the plugin's choice, e.g.
// KAEL_CUDA_MATMUL=cublas|tile for the cuda plugin). The 8192 product runs at most 3 times.
std::vector<BenchCase> gpu_cases(bool quick) {
    using kael::DType;
    std::vector<BenchCase> cases;
    const std::vector<std::int64_t> matmul_sizes =
        quick ? std::vector<std::int64_t>{64, 128}
              : std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192};
    for (const auto n : matmul_sizes) {
        const double size = static_cast<double>(n);
        cases.push_back({"matmul_f32_" + std::to_string(n), Operation::Matmul, DType::F32, {n, n},
                         2 * size * size * size, 0, n >= 8192 ? 3 : 0});
    }
    const std::vector<std::int64_t> counts =
        quick ? std::vector<std::int64_t>{1 << 12, 1 << 16}
              : std::vector<std::int64_t>{std::int64_t{1} << 24, std::int64_t{1} << 28};
    for (const auto count : counts) {
        cases.push_back({"add_f32_" + binary_count(count), Operation::Add, DType::F32, {count}, 0,
                         12, 0});
    }
    for (const auto count : counts) {
        cases.push_back({"sum_f32_" + binary_count(count), Operation::Sum, DType::F32, {count}, 0,
                         4, 0});
    }
    return cases;
}

std::vector<BenchCase> all_cases(const std::string& suite, bool quick) {
    if (suite == "gpu") {
        return gpu_cases(quick);
    }
    return cpu_cases(quick);
}

// Deterministic values of both signs in [-1, 1], so relu takes both branches.
kael::Tensor sample(const BenchCase& bench_case, const kael::Device& device, bool use_cosine) {
    const kael::Tensor ramp = kael::arange(0, bench_case.elements(), 1, bench_case.dtype, device);
    return (use_cosine ? kael::cos(ramp) : kael::sin(ramp)).view(bench_case.shape);
}

std::function<kael::Tensor()> prepare(const BenchCase& bench_case, const kael::Device& device) {
    const kael::Tensor a = sample(bench_case, device, false);
    const kael::Tensor b = sample(bench_case, device, true);
    switch (bench_case.operation) {
        case Operation::Matmul: return [a, b] { return kael::matmul(a, b); };
        case Operation::Add: return [a, b] { return a + b; };
        case Operation::Sum: return [a] { return kael::sum(a); };
        case Operation::Relu: return [a] { return kael::relu(a); };
        case Operation::AddTransposed: return [a, b] { return a.T() + b; };
    }
    throw std::logic_error("kael-bench: unknown operation");
}

// One timed sample: `inner` runs between two synchronizations, the time divided by `inner`.
double timed_run(const std::function<kael::Tensor()>& run, const kael::Device& device, int inner) {
    kael::Tensor result;
    const auto start = std::chrono::steady_clock::now();
    for (int index = 0; index < inner; ++index) {
        result = run();  // the previous result goes back to the device's cache inside the clock
    }
    kael::synchronize(device);
    const auto stop = std::chrono::steady_clock::now();
    // The last result is released after the clock stops, as numpy's is in ops_vs_numpy.py.
    return std::chrono::duration<double>(stop - start).count() / inner;
}

// min_sample_seconds > 0: as many runs per sample as make a sample last that long (at most
// 1000), so that the launch and synchronization latency of a device is spread over many runs.
Measurement measure(const BenchCase& bench_case, const kael::Device& device, int repeat,
                    double min_sample_seconds) {
    const auto run = prepare(bench_case, device);
    kael::synchronize(device);
    timed_run(run, device, 1);  // warm-up: first-touch page faults, BLAS thread start-up
    int inner = 1;
    if (min_sample_seconds > 0) {
        const double once = timed_run(run, device, 1);
        const double wanted = std::ceil(min_sample_seconds / std::max(once, 1e-9));
        inner = static_cast<int>(std::clamp(wanted, 1.0, 1000.0));
    }
    const int repeats =
        bench_case.max_repeats > 0 ? std::min(repeat, bench_case.max_repeats) : repeat;
    std::vector<double> seconds;
    seconds.reserve(static_cast<std::size_t>(repeats));
    for (int index = 0; index < repeats; ++index) {
        seconds.push_back(timed_run(run, device, inner));
    }
    std::sort(seconds.begin(), seconds.end());
    const std::size_t middle = seconds.size() / 2;
    const double median = seconds.size() % 2 == 1 ? seconds[middle]
                                                  : (seconds[middle - 1] + seconds[middle]) / 2;
    return {bench_case, repeats, inner, median, seconds.front()};
}

std::string environment_value(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? "" : value;
}

nlohmann::json environment_json(const kael::Device& device) {
    nlohmann::json environment = {{"type", "environment"},
                                  {"schema_version", kSchemaVersion},
                                  {"kael_version", kael::core_version()},
                                  {"device", device.str()},
                                  {"cuda_matmul_env", environment_value("KAEL_CUDA_MATMUL")},
                                  {"hardware_threads", std::thread::hardware_concurrency()},
                                  {"openblas_num_threads_env",
                                   environment_value("OPENBLAS_NUM_THREADS")}};
    for (const auto& info : kael::devices()) {
        if (info.device == device) {
            environment["device_name"] = info.name;
            environment["plugin"] = info.plugin;
            environment["emulated"] = info.emulated;
        }
    }
    for (const auto& record : kael::plugins()) {
        if (record.selected && environment.contains("plugin") &&
            record.name == environment["plugin"].get<std::string>()) {
            environment["plugin_build"] = record.build_info;
        }
    }
    return environment;
}

nlohmann::json measurement_json(const Measurement& measurement) {
    const BenchCase& bench_case = measurement.bench_case;
    nlohmann::json line = {{"type", "case"},
                           {"name", bench_case.name},
                           {"op", operation_name(bench_case.operation)},
                           {"dtype", kael::to_string(bench_case.dtype)},
                           {"shape", bench_case.shape},
                           {"repeats", measurement.repeats},
                           {"inner", measurement.inner},
                           {"median_s", measurement.median_seconds},
                           {"min_s", measurement.min_seconds},
                           {"figure", measurement.figure()},
                           {"unit", measurement.unit()}};
    if (bench_case.bytes_per_element > 0) {
        line["bytes_per_element"] = bench_case.bytes_per_element;
        line["gb_per_s"] = measurement.gigabytes_per_second();
    }
    return line;
}

std::string fixed(double value, int precision) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(precision) << value;
    return text.str();
}

void print_header(const nlohmann::json& environment) {
    std::cout << "kael " << environment["kael_version"].get<std::string>() << " on "
              << environment["device"].get<std::string>();
    if (environment.contains("device_name")) {
        std::cout << " (" << environment["device_name"].get<std::string>() << ")";
    }
    if (environment.contains("plugin_build")) {
        std::cout << ", " << environment["plugin_build"].get<std::string>();
    }
    const std::string blas_threads = environment["openblas_num_threads_env"];
    std::cout << ", OPENBLAS_NUM_THREADS=" << (blas_threads.empty() ? "unset" : blas_threads)
              << "\n\n"
              << std::left << std::setw(26) << "case" << std::right << std::setw(8) << "repeats"
              << std::setw(12) << "median ms" << std::setw(12) << "min ms" << "  figure\n";
}

void print_row(const Measurement& measurement) {
    std::cout << std::left << std::setw(26) << measurement.bench_case.name << std::right
              << std::setw(8) << measurement.repeats << std::setw(12)
              << fixed(measurement.median_seconds * 1e3, 3) << std::setw(12)
              << fixed(measurement.min_seconds * 1e3, 3) << "  "
              << fixed(measurement.figure(), 2) << " " << measurement.unit();
    if (measurement.bench_case.bytes_per_element > 0) {
        std::cout << ", " << fixed(measurement.gigabytes_per_second(), 2) << " GB/s";
    }
    std::cout << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kael-bench: median throughput of matmul, add, sum, relu and a transposed add on "
                 "one device (compare with numpy: benchmarks/ops_vs_numpy.py; on a GPU with "
                 "PyTorch: benchmarks/gpu_vs_torch.py, which uses --suite gpu)"};
    app.set_version_flag("--version", "kael-bench " + kael::core_version());
    std::string device_name = "cpu";
    int repeat = 10;
    bool json = false;
    bool quick = false;
    std::string filter;
    std::string suite = "cpu";
    double min_sample_ms = 0;
    app.add_option("--device", device_name, "device to measure, e.g. cpu or cuda:0")
        ->capture_default_str();
    app.add_option("--repeat", repeat, "timed runs per case after one warm-up (the median counts)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_flag("--json", json, "print one JSON object per line: the environment, then each case");
    app.add_option("--filter", filter, "run only the cases whose name contains this text");
    app.add_flag("--quick", quick, "tiny sizes, to check that every case runs");
    app.add_option("--suite", suite,
                   "cpu: the cases compared with numpy; gpu: add and sum of 2^24 and 2^28 f32, "
                   "matmul f32 512..8192 (compared with PyTorch)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "gpu"}));
    app.add_option("--min-sample-ms", min_sample_ms,
                   "repeat each op inside a timed sample until it lasts this long, and divide "
                   "(0: one op per sample)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    CLI11_PARSE(app, argc, argv);

    std::vector<BenchCase> cases;
    for (auto& bench_case : all_cases(suite, quick)) {
        if (bench_case.name.find(filter) != std::string::npos) {
            cases.push_back(std::move(bench_case));
        }
    }
    if (cases.empty()) {
        std::cerr << "kael-bench: no case name contains \"" << filter << "\"\n";
        return 1;
    }
    kael::Device device;
    try {
        device = kael::Device(device_name);
        kael::require_device(device);
    } catch (const std::exception& error) {
        std::cerr << "kael-bench: " << error.what() << "\n";
        return 2;
    }
    try {
        const nlohmann::json environment = environment_json(device);
        if (json) {
            std::cout << environment.dump() << std::endl;
        } else {
            print_header(environment);
        }
        for (std::size_t index = 0; index < cases.size(); ++index) {
            std::cerr << "kael-bench [" << index + 1 << "/" << cases.size() << "] "
                      << cases[index].name << " ..." << std::flush;
            const Measurement measurement =
                measure(cases[index], device, repeat, min_sample_ms / 1e3);
            std::cerr << " " << fixed(measurement.median_seconds * 1e3, 3) << " ms median of "
                      << measurement.repeats;
            if (measurement.inner > 1) {
                std::cerr << " samples of " << measurement.inner << " runs";
            }
            std::cerr << "\n";
            if (json) {
                std::cout << measurement_json(measurement).dump() << std::endl;
            } else {
                print_row(measurement);
            }
        }
    } catch (const std::exception& error) {
        std::cerr << "\nkael-bench: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
