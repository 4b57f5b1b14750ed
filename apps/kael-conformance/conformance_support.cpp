// How device results are compared with cpu results, and the seeded values the cases read.
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <limits>
#include <sstream>

#include "conformance.h"

namespace conformance {

namespace {

Comparisons g_comparisons;
kael::Device g_device;  // cpu until main sets it

// The error kind of the exception in flight, with its message.
std::string current_error() {
    try {
        throw;
    } catch (const kael::OutOfMemoryError& e) {
        return std::string("OutOfMemoryError: ") + e.what();
    } catch (const kael::IndexError& e) {
        return std::string("IndexError: ") + e.what();
    } catch (const kael::TypeError& e) {
        return std::string("TypeError: ") + e.what();
    } catch (const kael::ValueError& e) {
        return std::string("ValueError: ") + e.what();
    } catch (const kael::DeviceError& e) {
        return std::string("DeviceError: ") + e.what();
    } catch (const kael::Error& e) {
        return std::string("Error: ") + e.what();
    } catch (const std::exception& e) {
        return std::string("std::exception: ") + e.what();
    }
}

std::string kind_of(const std::string& error) {
    return error.substr(0, error.find(':'));
}

bool close(double got, double want, double rtol, double atol, bool zero_sign) {
    if (std::isnan(got) || std::isnan(want)) {
        return std::isnan(got) && std::isnan(want);
    }
    if (std::isinf(got) || std::isinf(want)) {
        return got == want;
    }
    if (zero_sign && got == 0 && want == 0) {
        return std::signbit(got) == std::signbit(want);
    }
    return std::abs(got - want) <= rtol * std::abs(want) + atol;
}

template <typename T, typename Same>
void compare_elements(const Tensor& on_device, const Tensor& on_cpu, Same same) {
    const std::vector<T> got = on_device.cpu().to_vector<T>();
    const std::vector<T> want = on_cpu.to_vector<T>();
    std::ostringstream first;
    first << std::setprecision(17);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (!same(got[i], want[i])) {
            if (++mismatches <= 4) {
                first << " [" << i << "] device " << +got[i] << " cpu " << +want[i] << ";";
            }
        }
    }
    BOOST_CHECK_MESSAGE(mismatches == 0, mismatches << " of " << want.size()
                                                    << " elements differ (flat index, logical "
                                                       "order):"
                                                    << first.str());
}

Tensor flat(std::vector<double> numbers, const Shape& shape) {
    const auto count = static_cast<std::int64_t>(numbers.size());
    return kael::tensor(numbers, {count}).reshape(shape);
}

Tensor flat(std::vector<std::int64_t> numbers, const Shape& shape) {
    const auto count = static_cast<std::int64_t>(numbers.size());
    return kael::tensor(numbers, {count}).reshape(shape);
}

}  // namespace

const kael::Device& device() {
    return g_device;
}

void set_device(const kael::Device& device) {
    g_device = device;
}

Comparisons comparisons() {
    return g_comparisons;
}

std::string dtype_name(DType dtype) {
    return kael::to_string(dtype);
}

Tolerance matmul_tolerance(double scale) {
    const bool exact = kael::float32_matmul_precision() == kael::MatmulPrecision::Highest;
    return Tolerance{.scale = scale, .zero_sign = false, .f32_rtol = exact ? 1e-4 : 1.0 / 512};
}

void expect_same(const Tensor& on_device, const Tensor& on_cpu, const Tolerance& tolerance) {
    BOOST_CHECK_MESSAGE(on_device.device() == device(), "result lives on "
                                                            << on_device.device().str() << ", not "
                                                            << device().str());
    BOOST_CHECK_MESSAGE(on_device.shape() == on_cpu.shape(),
                        "shape " << kael::to_string(on_device.shape()) << " on the device, "
                                 << kael::to_string(on_cpu.shape()) << " on cpu");
    BOOST_CHECK_MESSAGE(on_device.dtype() == on_cpu.dtype(),
                        "dtype " << dtype_name(on_device.dtype()) << " on the device, "
                                 << dtype_name(on_cpu.dtype()) << " on cpu");
    if (on_device.shape() != on_cpu.shape() || on_device.dtype() != on_cpu.dtype()) {
        return;
    }
    switch (on_cpu.dtype()) {
        case DType::BF16:
        case DType::F16:
        case DType::F32:
        case DType::F64: {
            // A low-precision result is an f32 result rounded once (kernel_run.h): two devices
            // differ by at most one step of the dtype (2^-8 for bf16, 2^-11 for f16).
            const double rtol = on_cpu.dtype() == DType::F32   ? tolerance.f32_rtol
                                : on_cpu.dtype() == DType::F64 ? 1e-10
                                : on_cpu.dtype() == DType::BF16 ? 1.0 / 128
                                                                : 1.0 / 1024;
            const bool low = is_low_precision(on_cpu.dtype());
            compare_elements<double>(low ? on_device.to(DType::F32) : on_device,
                                     low ? on_cpu.to(DType::F32) : on_cpu,
                                     [&](double got, double want) {
                return close(got, want, rtol, rtol * tolerance.scale, tolerance.zero_sign);
            });
            break;
        }
        case DType::I64:
        case DType::I32:
        case DType::I16:
        case DType::I8:
        case DType::U8:
            compare_elements<std::int64_t>(on_device.to(DType::I64), on_cpu.to(DType::I64),
                                           [](std::int64_t a, std::int64_t b) { return a == b; });
            break;
        case DType::Bool:
            compare_elements<bool>(on_device, on_cpu, [](bool a, bool b) { return a == b; });
            break;
    }
}

namespace {

// Results past the first `outputs` are named as the op's inputs, read back after the op.
void compare_runs(const std::function<Tensors()>& on_device, const std::function<Tensors()>& on_cpu,
                  const Tolerance& tolerance, const std::size_t* outputs = nullptr) {
    ++g_comparisons.total;
    Tensors device_results;
    Tensors cpu_results;
    std::string device_error;
    std::string cpu_error;
    try {
        cpu_results = on_cpu();
    } catch (...) {
        cpu_error = current_error();
    }
    try {
        device_results = on_device();
    } catch (...) {
        device_error = current_error();
    }
    if (!cpu_error.empty() || !device_error.empty()) {
        ++g_comparisons.of_errors;
        BOOST_CHECK_MESSAGE(
            kind_of(device_error) == kind_of(cpu_error),
            "errors differ; cpu: '" << cpu_error << "'; device: '" << device_error << "'");
        return;
    }
    BOOST_TEST_REQUIRE(device_results.size() == cpu_results.size());
    for (std::size_t i = 0; i < cpu_results.size(); ++i) {
        const bool input = outputs != nullptr && i >= *outputs;
        BOOST_TEST_CONTEXT((input ? "input " : "output ")
                           << (input ? i - *outputs : i) << (input ? " after the op" : "")) {
            expect_same(device_results[i], cpu_results[i], tolerance);
        }
    }
}

}  // namespace

void compare_factory(const Factory& make, const Tolerance& tolerance) {
    compare_runs([&] { return make(device()); }, [&] { return make(kael::kCPU); }, tolerance);
}

void run_and_compare(const std::vector<Operand>& operands, const Op& op,
                     const Tolerance& tolerance) {
    Tensors device_inputs;
    Tensors cpu_inputs;
    for (const Operand& operand : operands) {
        device_inputs.push_back(operand.view(operand.base.to(device())));
        cpu_inputs.push_back(operand.view(operand.base.clone()));
    }
    // The inputs are compared afterwards too: an op must not write where it only reads, and an
    // in-place op must write the same values on both sides.
    std::size_t outputs = 0;
    const auto with_inputs = [&](const Tensors& inputs) {
        Tensors results = op(inputs);
        outputs = results.size();
        results.insert(results.end(), inputs.begin(), inputs.end());
        return results;
    };
    compare_runs([&] { return with_inputs(device_inputs); },
                 [&] { return with_inputs(cpu_inputs); }, tolerance, &outputs);
}

Tensor values(DType dtype, const Shape& shape, bool specials) {
    if (dtype == DType::Bool) {
        return kael::bernoulli_mask(shape, 0.5);
    }
    constexpr std::size_t kEvery = 7;
    if (dtype == DType::I64) {
        std::vector<std::int64_t> numbers = kael::randint(-20, 20, shape).to_vector<std::int64_t>();
        const std::int64_t top = std::numeric_limits<std::int64_t>::max();
        const std::int64_t bottom = std::numeric_limits<std::int64_t>::min();
        const std::vector<std::int64_t> special = {top, bottom,  -1,
                                                   0,   top - 1, std::int64_t{1} << 40};
        for (std::size_t i = 3; specials && i < numbers.size(); i += kEvery) {
            numbers[i] = special[(i / kEvery) % special.size()];
        }
        return flat(numbers, shape);
    }
    std::vector<double> numbers = (kael::randn(shape, DType::F64) * 3.0).to_vector<double>();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> special = {std::nan(""), inf, -inf, -0.0, 0.0, 0.5, 1e30};
    for (std::size_t i = 3; specials && i < numbers.size(); i += kEvery) {
        numbers[i] = special[(i / kEvery) % special.size()];
    }
    return flat(numbers, shape).to(dtype);
}

}  // namespace conformance
