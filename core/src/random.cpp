// Generators and the random factories. Only the raw 64-bit stream comes from the standard
// library; the mappings to distributions are spelled out so every standard library gives the
// same values.
#include "kael/random.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "random_draws.h"
#include "tensor_internal.h"

namespace kael {

namespace {

// A state's bytes: this tag, the initial seed, the word count, then the engine's words, each
// 8 bytes little-endian. The words are the engine's standard textual state, so any conforming
// library reads them back.
constexpr char kStateTag[8] = {'K', 'A', 'E', 'L', 'M', 'T', '6', '4'};

void put_word(std::vector<std::uint8_t>& bytes, std::uint64_t word) {
    for (int shift = 0; shift < 64; shift += 8) {
        bytes.push_back(static_cast<std::uint8_t>(word >> shift));
    }
}

std::uint64_t get_word(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
    std::uint64_t word = 0;
    for (int i = 7; i >= 0; --i) {
        word = (word << 8) | bytes[offset + static_cast<std::size_t>(i)];
    }
    return word;
}

}  // namespace

Generator::Generator(std::uint64_t seed) : engine_(seed), initial_seed_(seed) {}

Generator& Generator::manual_seed(std::uint64_t seed) {
    const std::lock_guard lock(mutex_);
    engine_.seed(seed);
    initial_seed_ = seed;
    return *this;
}

std::uint64_t Generator::seed() {
    std::random_device device;
    const std::uint64_t fresh = (static_cast<std::uint64_t>(device()) << 32) | device();
    manual_seed(fresh);
    return fresh;
}

std::uint64_t Generator::initial_seed() const {
    const std::lock_guard lock(mutex_);
    return initial_seed_;
}

std::vector<std::uint8_t> Generator::get_state() const {
    std::ostringstream text;
    {
        const std::lock_guard lock(mutex_);
        text << engine_;
    }
    std::vector<std::uint64_t> words;
    std::istringstream reader(text.str());
    for (std::uint64_t word = 0; reader >> word;) {
        words.push_back(word);
    }
    std::vector<std::uint8_t> bytes(std::begin(kStateTag), std::end(kStateTag));
    put_word(bytes, initial_seed());
    put_word(bytes, words.size());
    for (const std::uint64_t word : words) {
        put_word(bytes, word);
    }
    return bytes;
}

void Generator::set_state(const std::vector<std::uint8_t>& state, const char* op) {
    const auto broken = [&state, op](const std::string& why) {
        return ValueError(std::string(op) + ": not a kael generator state (" + why + ", " +
                          std::to_string(state.size()) + " bytes)");
    };
    if (state.size() < 24 || std::memcmp(state.data(), kStateTag, sizeof kStateTag) != 0) {
        throw broken("no KAELMT64 tag");
    }
    const std::uint64_t count = get_word(state, 16);
    if (count > 4096 || state.size() != 24 + count * 8) {
        throw broken("the word count does not match the size");
    }
    std::ostringstream text;
    for (std::size_t i = 0; i < count; ++i) {
        text << (i > 0 ? " " : "") << get_word(state, 24 + i * 8);
    }
    std::mt19937_64 restored;
    std::istringstream reader(text.str());
    reader >> restored;
    if (reader.fail()) {
        throw broken("the engine words do not parse");
    }
    const std::lock_guard lock(mutex_);
    engine_ = restored;
    initial_seed_ = get_word(state, 8);
}

Generator& default_generator() {
    static Generator instance;
    return instance;
}

void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

namespace detail {

std::int64_t element_count(const Shape& shape, const char* op) {
    return check_shape(shape, op);
}

void check_floating(DType dtype, const char* op) {
    if (!is_floating(dtype)) {
        throw TypeError(std::string(op) + ": expected a floating dtype, got " + to_string(dtype));
    }
}

Tensor from_values(const std::vector<double>& values, const Shape& shape, DType dtype,
                   const Device& device) {
    const Shape flat{static_cast<std::int64_t>(values.size())};
    if (dtype == DType::F32) {
        const std::vector<float> narrowed(values.begin(), values.end());
        return tensor(narrowed, flat).reshape(shape).to(device);
    }
    if (dtype == DType::I64) {
        const std::vector<std::int64_t> integers(values.begin(), values.end());
        return tensor(integers, flat).reshape(shape).to(device);
    }
    if (dtype == DType::Bool) {
        std::vector<bool> flags(values.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
            flags[i] = values[i] != 0.0;
        }
        return tensor_bool(flags, flat).reshape(shape).to(device);
    }
    return tensor(values, flat).reshape(shape).to(device);
}

void fill_normal(std::mt19937_64& engine, std::vector<double>& values) {
    // Box-Muller: two uniforms give two independent normals.
    for (std::size_t i = 0; i < values.size(); i += 2) {
        const double radius_uniform = 1.0 - uniform_double(engine);  // (0, 1]
        const double angle = 2.0 * std::numbers::pi * uniform_double(engine);
        const double radius = std::sqrt(-2.0 * std::log(radius_uniform));
        values[i] = radius * std::cos(angle);
        if (i + 1 < values.size()) {
            values[i + 1] = radius * std::sin(angle);
        }
    }
}

std::uint64_t bounded(std::mt19937_64& engine, std::uint64_t range) {
    // Draws at or above the largest multiple of range are rejected, so every value is equally
    // likely.
    const std::uint64_t limit = (std::numeric_limits<std::uint64_t>::max() / range) * range;
    std::uint64_t draw = engine();
    while (draw >= limit) {
        draw = engine();
    }
    return draw % range;
}

}  // namespace detail

using namespace detail;

Tensor rand(const Shape& shape, DType dtype, Device device, Generator& generator) {
    check_floating(dtype, "rand");
    std::vector<double> values(static_cast<std::size_t>(element_count(shape, "rand")));
    generator.with_engine([&](std::mt19937_64& engine) {
        for (double& value : values) {
            value = dtype == DType::F32 ? uniform_float(engine) : uniform_double(engine);
        }
    });
    return from_values(values, shape, dtype, device);
}

Tensor randn(const Shape& shape, DType dtype, Device device, Generator& generator) {
    check_floating(dtype, "randn");
    std::vector<double> values(static_cast<std::size_t>(element_count(shape, "randn")));
    generator.with_engine([&](std::mt19937_64& engine) { fill_normal(engine, values); });
    return from_values(values, shape, dtype, device);
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Device device,
               Generator& generator) {
    if (low >= high) {
        throw ValueError("randint: low " + std::to_string(low) + " must be less than high " +
                         std::to_string(high));
    }
    std::vector<std::int64_t> values(static_cast<std::size_t>(element_count(shape, "randint")));
    const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    generator.with_engine([&](std::mt19937_64& engine) {
        for (std::int64_t& value : values) {
            value = static_cast<std::int64_t>(static_cast<std::uint64_t>(low) +
                                              bounded(engine, range));
        }
    });
    return tensor(values, {static_cast<std::int64_t>(values.size())}).reshape(shape).to(device);
}

Tensor bernoulli_mask(const Shape& shape, double p, Device device, Generator& generator) {
    if (!(p >= 0.0 && p <= 1.0)) {
        throw ValueError("bernoulli_mask: probability " + std::to_string(p) +
                         " is outside [0, 1]");
    }
    std::vector<bool> values(static_cast<std::size_t>(element_count(shape, "bernoulli_mask")));
    generator.with_engine([&](std::mt19937_64& engine) {
        for (std::size_t i = 0; i < values.size(); ++i) {
            values[i] = uniform_double(engine) < p;
        }
    });
    return tensor_bool(values, {static_cast<std::int64_t>(values.size())})
        .reshape(shape)
        .to(device);
}

}  // namespace kael
