#pragma once
// Helpers shared by the composite-op test files: host references computed line by line.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <ostream>
#include <vector>

#include "kael/ops.h"

namespace kael {
// Lets Boost.Test print dtypes in failed comparisons.
inline std::ostream& operator<<(std::ostream& stream, DType dtype) {
    return stream << to_string(dtype);
}
}  // namespace kael

namespace kael_test {

using kael::DType;
using kael::Shape;
using kael::Tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

inline Tensor iota(const Shape& shape, DType dtype = DType::F32) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    return kael::arange(0, static_cast<double>(count), 1, dtype).view(shape);
}
template <typename T> inline std::vector<T> v(const Tensor& t) { return t.to_vector<T>(); }

// Values with repeats and mixed signs, as f64 of the given shape.
inline Tensor mixed(const Shape& shape, DType dtype = DType::F64) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    std::vector<double> values;
    for (std::int64_t i = 0; i < count; ++i) {
        values.push_back(static_cast<double>((i * 7 + 3) % 11) * 0.5 - 2.0);
    }
    return kael::tensor(values, shape).to(dtype);
}

inline void check_close(const std::vector<double>& actual, const std::vector<double>& expected,
                 double tolerance = 1e-6) {
    BOOST_REQUIRE_EQUAL(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        if (std::isnan(expected[i])) {
            BOOST_TEST(std::isnan(actual[i]), "element " << i << " is " << actual[i]);
        } else if (std::isinf(expected[i])) {
            BOOST_TEST(actual[i] == expected[i], "element " << i << ": " << actual[i]);
        } else {
            BOOST_TEST(std::abs(actual[i] - expected[i]) <= tolerance * (1 + std::abs(expected[i])),
                       "element " << i << ": " << actual[i] << " vs " << expected[i]);
        }
    }
}

// A 2-d tensor read on the host in logical order; lines run along dim.
struct Grid {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<double> values;

    explicit Grid(const Tensor& t)
        : rows(t.size(0)), cols(t.size(1)), values(t.to_vector<double>()) {}
    [[nodiscard]] std::int64_t lines(int dim) const { return dim == 1 ? rows : cols; }
    [[nodiscard]] std::int64_t length(int dim) const { return dim == 1 ? cols : rows; }
    [[nodiscard]] std::vector<double> line(int dim, std::int64_t i) const {
        std::vector<double> out;
        for (std::int64_t j = 0; j < length(dim); ++j) {
            out.push_back(values[static_cast<std::size_t>(dim == 1 ? i * cols + j : j * cols + i)]);
        }
        return out;
    }
};

using LineMap = std::function<std::vector<double>(const std::vector<double>&)>;
using LineReduce = std::function<double(const std::vector<double>&)>;

// Applies f to each line along dim; result in logical row-major order of the same shape.
inline std::vector<double> map_lines(const Grid& grid, int dim, const LineMap& f) {
    std::vector<double> out(grid.values.size());
    for (std::int64_t i = 0; i < grid.lines(dim); ++i) {
        const std::vector<double> mapped = f(grid.line(dim, i));
        for (std::int64_t j = 0; j < grid.length(dim); ++j) {
            out[static_cast<std::size_t>(dim == 1 ? i * grid.cols + j : j * grid.cols + i)] =
                mapped[static_cast<std::size_t>(j)];
        }
    }
    return out;
}

inline std::vector<double> reduce_lines(const Grid& grid, int dim, const LineReduce& f) {
    std::vector<double> out;
    for (std::int64_t i = 0; i < grid.lines(dim); ++i) {
        out.push_back(f(grid.line(dim, i)));
    }
    return out;
}

inline double variance_of(const std::vector<double>& x, int correction) {
    double mean = 0;
    for (double value : x) mean += value;
    mean /= static_cast<double>(x.size());
    double squares = 0;
    for (double value : x) squares += (value - mean) * (value - mean);
    return squares / std::max<double>(static_cast<double>(x.size()) - correction, 0);
}

inline std::vector<double> softmax_of(const std::vector<double>& x) {
    std::vector<double> out;
    double total = 0;
    for (double value : x) total += std::exp(value);
    for (double value : x) out.push_back(std::exp(value) / total);
    return out;
}

// The inputs every line-wise op is checked on: contiguous, transposed, stepped slice.
inline std::vector<Tensor> layouts(DType dtype = DType::F64) {
    const Tensor base = mixed({4, 6}, dtype);
    return {base, mixed({6, 4}, dtype).T(), mixed({4, 12}, dtype).slice(1, 1, 12, 2)};
}

}  // namespace kael_test
