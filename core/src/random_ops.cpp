// Random ops that read or write tensors: randperm, multinomial, bernoulli and the in-place fills.
// Values are drawn on the host, as the factories draw them, so a seed gives the same values on
// every device.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "in_place.h"
#include "kael/random.h"
#include "random_draws.h"

namespace kael {

using namespace detail;

namespace {

// values (host doubles, in self's shape) written into self as copy_ does.
Tensor& write_values(Tensor& self, const std::vector<double>& values, const char* op) {
    const Tensor drawn = from_values(values, self.shape(), self.dtype(), self.device());
    return write_into(self, drawn, op);
}

std::vector<double> draws(Tensor& self, Generator& generator, const char* op,
                          double (*draw)(std::mt19937_64&, double, double), double a, double b) {
    check_floating(self.dtype(), op);
    std::vector<double> values(static_cast<std::size_t>(self.numel()));
    generator.with_engine([&](std::mt19937_64& engine) {
        for (double& value : values) {
            value = draw(engine, a, b);
        }
    });
    return values;
}

void check_probabilities(const std::vector<double>& weights, const char* op) {
    for (const double weight : weights) {
        if (!std::isfinite(weight) || weight < 0) {
            throw ValueError(std::string(op) +
                             ": probability tensor contains either inf, nan or element < 0");
        }
    }
}

// One row's samples: inverse CDF with replacement; without, the largest keys weight / E with
// E ~ Exp(1) (the exponential race, as PyTorch), so zero weights come last.
void sample_row(std::mt19937_64& engine, const double* weights, std::int64_t categories,
                std::int64_t count, bool replacement, std::int64_t* out) {
    if (replacement) {
        std::vector<double> cumulative(static_cast<std::size_t>(categories));
        std::partial_sum(weights, weights + categories, cumulative.begin());
        const double total = cumulative.back();
        for (std::int64_t i = 0; i < count; ++i) {
            const double target = uniform_double(engine) * total;
            auto found = std::upper_bound(cumulative.begin(), cumulative.end(), target);
            // Skips zero-weight categories that share the same cumulative value.
            found = std::min(found, cumulative.end() - 1);
            out[i] = found - cumulative.begin();
        }
        return;
    }
    std::vector<std::pair<double, std::int64_t>> keys(static_cast<std::size_t>(categories));
    for (std::int64_t c = 0; c < categories; ++c) {
        const double exponential = -std::log(1.0 - uniform_double(engine));
        keys[static_cast<std::size_t>(c)] = {weights[c] / exponential, c};
    }
    std::partial_sort(keys.begin(), keys.begin() + count, keys.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::int64_t i = 0; i < count; ++i) {
        out[i] = keys[static_cast<std::size_t>(i)].second;
    }
}

}  // namespace

Tensor randperm(std::int64_t n, DType dtype, Device device, Generator& generator) {
    if (n < 0) {
        throw ValueError("randperm: n must be non-negative, got " + std::to_string(n));
    }
    if (dtype == DType::Bool) {
        throw TypeError("randperm: dtype bool cannot hold a permutation");
    }
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    generator.with_engine([&](std::mt19937_64& engine) {
        for (std::int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
            const auto j = static_cast<std::int64_t>(bounded(engine, static_cast<std::uint64_t>(i) + 1));
            std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
        }
    });
    const Tensor result = tensor(order, {n});
    return (dtype == DType::I64 ? result : result.to(dtype)).to(device);
}

Tensor multinomial(const Tensor& input, std::int64_t num_samples, bool replacement,
                   Generator& generator) {
    if (input.dim() != 1 && input.dim() != 2) {
        throw ValueError("multinomial: input must be 1-D or 2-D, got " +
                         std::to_string(input.dim()) + "-D");
    }
    if (!is_floating(input.dtype())) {
        throw TypeError("multinomial: only floating-point inputs, got " + to_string(input.dtype()));
    }
    if (num_samples <= 0) {
        throw ValueError("multinomial: cannot sample num_samples <= 0 samples (got " +
                         std::to_string(num_samples) + ")");
    }
    const std::int64_t categories = input.shape().back();
    if (!replacement && num_samples > categories) {
        throw ValueError("multinomial: cannot sample " + std::to_string(num_samples) +
                         " samples from " + std::to_string(categories) +
                         " categories without replacement");
    }
    const std::int64_t rows = input.dim() == 2 ? input.shape()[0] : 1;
    const std::vector<double> weights = input.detach().contiguous().to_vector<double>();
    check_probabilities(weights, "multinomial");
    for (std::int64_t r = 0; r < rows; ++r) {
        const double* row = weights.data() + r * categories;
        if (!(std::accumulate(row, row + categories, 0.0) > 0)) {
            throw ValueError("multinomial: invalid distribution (sum of probabilities <= 0) in row " +
                             std::to_string(r));
        }
    }
    std::vector<std::int64_t> samples(static_cast<std::size_t>(rows * num_samples));
    generator.with_engine([&](std::mt19937_64& engine) {
        for (std::int64_t r = 0; r < rows; ++r) {
            sample_row(engine, weights.data() + r * categories, categories, num_samples,
                       replacement, samples.data() + r * num_samples);
        }
    });
    const Shape shape = input.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples};
    return tensor(samples, {rows * num_samples}).reshape(shape).to(input.device());
}

Tensor bernoulli(const Tensor& input, Generator& generator) {
    check_floating(input.dtype(), "bernoulli");
    const std::vector<double> probabilities = input.detach().contiguous().to_vector<double>();
    for (const double p : probabilities) {
        if (!(p >= 0.0 && p <= 1.0)) {
            throw ValueError("bernoulli: probabilities must be in [0, 1], got " + std::to_string(p));
        }
    }
    std::vector<double> values(probabilities.size());
    generator.with_engine([&](std::mt19937_64& engine) {
        for (std::size_t i = 0; i < values.size(); ++i) {
            values[i] = uniform_double(engine) < probabilities[i] ? 1.0 : 0.0;
        }
    });
    return from_values(values, input.shape(), input.dtype(), input.device());
}

Tensor& uniform_(Tensor& self, double from, double to, Generator& generator) {
    if (!(from <= to)) {
        throw ValueError("uniform_: expects a [from, to) range, but found from=" +
                         std::to_string(from) + " > to=" + std::to_string(to));
    }
    const bool narrow = self.dtype() == DType::F32;
    const auto draw = narrow ? +[](std::mt19937_64& e, double a, double b) {
        return a + (b - a) * uniform_float(e);
    } : +[](std::mt19937_64& e, double a, double b) { return a + (b - a) * uniform_double(e); };
    return write_values(self, draws(self, generator, "uniform_", draw, from, to), "uniform_");
}

Tensor& normal_(Tensor& self, double mean, double std, Generator& generator) {
    if (!(std >= 0.0)) {
        throw ValueError("normal_: expects std >= 0.0, but found std " + std::to_string(std));
    }
    check_floating(self.dtype(), "normal_");
    std::vector<double> values(static_cast<std::size_t>(self.numel()));
    generator.with_engine([&](std::mt19937_64& engine) { fill_normal(engine, values); });
    for (double& value : values) {
        value = mean + std * value;
    }
    return write_values(self, values, "normal_");
}

Tensor& bernoulli_(Tensor& self, double p, Generator& generator) {
    if (!(p >= 0.0 && p <= 1.0)) {
        throw ValueError("bernoulli_: expects p to be in [0, 1], but got p=" + std::to_string(p));
    }
    std::vector<double> values(static_cast<std::size_t>(self.numel()));
    generator.with_engine([&](std::mt19937_64& engine) {
        for (double& value : values) {
            value = uniform_double(engine) < p ? 1.0 : 0.0;
        }
    });
    return write_values(self, values, "bernoulli_");
}

Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator& generator) {
    const Tensor probabilities = p.detach().to(self.device()).to(DType::F64).expand(self.shape());
    const Tensor drawn = bernoulli(probabilities.contiguous(), generator);
    return write_into(self, drawn, "bernoulli_");
}

Tensor& exponential_(Tensor& self, double lambd, Generator& generator) {
    if (!(lambd > 0.0)) {
        throw ValueError("exponential_: expects lambda > 0.0, but found lambda=" +
                         std::to_string(lambd));
    }
    const auto draw = +[](std::mt19937_64& e, double rate, double) {
        return -std::log1p(-uniform_double(e)) / rate;
    };
    return write_values(self, draws(self, generator, "exponential_", draw, lambd, 0.0),
                        "exponential_");
}

}  // namespace kael
