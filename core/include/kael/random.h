#pragma once
// Seeded generators. Values are drawn on the host and then moved to the device, so a seed gives
// the same values on every device. Every random op takes a Generator; without one it uses the
// process's default generator, whose state can be saved and restored to replay later draws.
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "kael/tensor.h"

namespace kael {

// A 64-bit Mersenne Twister with its seed. Thread-safe: each draw locks it.
class Generator {
public:
    static constexpr std::uint64_t kDefaultSeed = 67280421310721ULL;  // PyTorch's default too

    explicit Generator(std::uint64_t seed = kDefaultSeed);
    Generator(const Generator&) = delete;
    Generator& operator=(const Generator&) = delete;

    Generator& manual_seed(std::uint64_t seed);
    // Reseeds from std::random_device and returns the seed used.
    std::uint64_t seed();
    [[nodiscard]] std::uint64_t initial_seed() const;
    // The whole state (seed and engine) as bytes; set_state(get_state()) replays the same draws.
    // A byte string that is not such a state is a ValueError naming op.
    [[nodiscard]] std::vector<std::uint8_t> get_state() const;
    void set_state(const std::vector<std::uint8_t>& state, const char* op = "Generator.set_state");

    // Runs draw(engine) under the generator's lock; ops use it to draw many values at once.
    template <typename Draw>
    auto with_engine(Draw&& draw) {
        const std::lock_guard lock(mutex_);
        return draw(engine_);
    }

private:
    mutable std::mutex mutex_;
    std::mt19937_64 engine_;
    std::uint64_t initial_seed_;
};

// The process's generator (kael::manual_seed, rand, dropout, ... without a generator).
Generator& default_generator();

// Reseeds the default generator; the sequence after manual_seed(s) is the same in every run.
void manual_seed(std::uint64_t seed);

// Uniform in [0, 1). dtype must be floating (TypeError otherwise).
[[nodiscard]] Tensor rand(const Shape& shape, DType dtype = DType::F32, Device device = kCPU,
                          Generator& generator = default_generator());
// Standard normal (mean 0, variance 1). dtype must be floating (TypeError otherwise).
[[nodiscard]] Tensor randn(const Shape& shape, DType dtype = DType::F32, Device device = kCPU,
                           Generator& generator = default_generator());
// Uniform integers in [low, high), i64; ValueError unless low < high.
[[nodiscard]] Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
                             Device device = kCPU, Generator& generator = default_generator());
// Bool tensor, each element true with probability p; ValueError unless 0 <= p <= 1.
[[nodiscard]] Tensor bernoulli_mask(const Shape& shape, double p, Device device = kCPU,
                                    Generator& generator = default_generator());

// A random permutation of 0..n-1 (Fisher-Yates); dtype I64 by default, F32/F64 allowed.
[[nodiscard]] Tensor randperm(std::int64_t n, DType dtype = DType::I64, Device device = kCPU,
                              Generator& generator = default_generator());
// Category indices drawn from the (unnormalized) weights of each row of a 1-D or 2-D floating
// input, as PyTorch: I64 of shape (num_samples) or (rows, num_samples) on input's device.
// Without replacement no index repeats in a row; zero-weight categories come only after the others.
[[nodiscard]] Tensor multinomial(const Tensor& input, std::int64_t num_samples,
                                 bool replacement = false,
                                 Generator& generator = default_generator());
// 0 or 1 in input's dtype, 1 with the probability held by each element of input (in [0, 1]).
[[nodiscard]] Tensor bernoulli(const Tensor& input, Generator& generator = default_generator());

// In-place fills of a floating tensor (its autograd records a write of constants, as copy_).
Tensor& uniform_(Tensor& self, double from = 0.0, double to = 1.0,
                 Generator& generator = default_generator());
Tensor& normal_(Tensor& self, double mean = 0.0, double std = 1.0,
                Generator& generator = default_generator());
// Each element becomes 1 with probability p (any dtype but bool stays its dtype).
Tensor& bernoulli_(Tensor& self, double p = 0.5, Generator& generator = default_generator());
// Each element becomes 1 with the probability of p's matching (broadcast) element.
Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator& generator = default_generator());
// Exponential with rate lambd: -log(1 - u) / lambd.
Tensor& exponential_(Tensor& self, double lambd = 1.0,
                     Generator& generator = default_generator());

}  // namespace kael
