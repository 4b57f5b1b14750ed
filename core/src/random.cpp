// The process-wide generator. Only the raw 64-bit stream comes from the standard library; the
// mappings to distributions are spelled out so every standard library gives the same values.
#include "kael/random.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace kael {

namespace {

constexpr std::uint64_t kDefaultSeed = 67280421310721ULL;

struct Generator {
    std::mutex mutex;
    std::mt19937_64 engine{kDefaultSeed};
};

Generator& generator() {
    static Generator instance;
    return instance;
}

std::int64_t element_count(const Shape& shape, const char* op) {
    std::int64_t count = 1;
    for (const std::int64_t size : shape) {
        if (size < 0) {
            throw ValueError(std::string(op) + ": negative dimension in shape " + to_string(shape));
        }
        count *= size;
    }
    return count;
}

// 53 random bits scaled into [0, 1).
double uniform_double(std::mt19937_64& engine) {
    return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

// 24 random bits, so rounding to float can never reach 1.
double uniform_float(std::mt19937_64& engine) {
    return static_cast<double>(engine() >> 40) * 0x1.0p-24;
}

void check_floating(DType dtype, const char* op) {
    if (!is_floating(dtype)) {
        throw TypeError(std::string(op) + ": expected a floating dtype, got " + to_string(dtype));
    }
}

// Host values as a tensor of dtype on device.
Tensor from_values(const std::vector<double>& values, const Shape& shape, DType dtype,
                   const Device& device) {
    if (dtype == DType::F32) {
        const std::vector<float> narrowed(values.begin(), values.end());
        return tensor(narrowed, {static_cast<std::int64_t>(values.size())}).reshape(shape).to(
            device);
    }
    return tensor(values, {static_cast<std::int64_t>(values.size())}).reshape(shape).to(device);
}

}  // namespace

void manual_seed(std::uint64_t seed) {
    Generator& state = generator();
    const std::lock_guard lock(state.mutex);
    state.engine.seed(seed);
}

Tensor rand(const Shape& shape, DType dtype, Device device) {
    check_floating(dtype, "rand");
    std::vector<double> values(static_cast<std::size_t>(element_count(shape, "rand")));
    {
        Generator& state = generator();
        const std::lock_guard lock(state.mutex);
        for (double& value : values) {
            value = dtype == DType::F32 ? uniform_float(state.engine)
                                        : uniform_double(state.engine);
        }
    }
    return from_values(values, shape, dtype, device);
}

Tensor randn(const Shape& shape, DType dtype, Device device) {
    check_floating(dtype, "randn");
    std::vector<double> values(static_cast<std::size_t>(element_count(shape, "randn")));
    {
        Generator& state = generator();
        const std::lock_guard lock(state.mutex);
        // Box-Muller: two uniforms give two independent normals.
        for (std::size_t i = 0; i < values.size(); i += 2) {
            const double radius_uniform = 1.0 - uniform_double(state.engine);  // (0, 1]
            const double angle = 2.0 * std::numbers::pi * uniform_double(state.engine);
            const double radius = std::sqrt(-2.0 * std::log(radius_uniform));
            values[i] = radius * std::cos(angle);
            if (i + 1 < values.size()) {
                values[i + 1] = radius * std::sin(angle);
            }
        }
    }
    return from_values(values, shape, dtype, device);
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Device device) {
    if (low >= high) {
        throw ValueError("randint: low " + std::to_string(low) + " must be less than high " +
                         std::to_string(high));
    }
    std::vector<std::int64_t> values(static_cast<std::size_t>(element_count(shape, "randint")));
    const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    // Draws at or above the largest multiple of range are rejected, so every value is equally
    // likely.
    const std::uint64_t limit = (std::numeric_limits<std::uint64_t>::max() / range) * range;
    {
        Generator& state = generator();
        const std::lock_guard lock(state.mutex);
        for (std::int64_t& value : values) {
            std::uint64_t draw = state.engine();
            while (draw >= limit) {
                draw = state.engine();
            }
            value = static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + draw % range);
        }
    }
    return tensor(values, {static_cast<std::int64_t>(values.size())}).reshape(shape).to(device);
}

Tensor bernoulli_mask(const Shape& shape, double p, Device device) {
    if (!(p >= 0.0 && p <= 1.0)) {
        throw ValueError("bernoulli_mask: probability " + std::to_string(p) +
                         " is outside [0, 1]");
    }
    std::vector<bool> values(static_cast<std::size_t>(element_count(shape, "bernoulli_mask")));
    {
        Generator& state = generator();
        const std::lock_guard lock(state.mutex);
        for (std::size_t i = 0; i < values.size(); ++i) {
            values[i] = uniform_double(state.engine) < p;
        }
    }
    return tensor_bool(values, {static_cast<std::int64_t>(values.size())})
        .reshape(shape)
        .to(device);
}

}  // namespace kael
