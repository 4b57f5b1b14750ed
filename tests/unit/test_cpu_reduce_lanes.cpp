// The cpu plugin's lane folds (reduce_lanes.h, reduce_rows_f32.h) against an in-order fold
// written here: rows of every length around the lane counts and kBlock, with ties, NaNs at the
// front, middle and tail, and -0.0; along the last dim (row folds) and the first (column folds).
// unit_cpu_ops runs this at every KAEL_CPU_VECTOR_ISA and thread count.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kael/ops.h"

using kael::DType;
using kael::Tensor;

namespace {

const std::vector<std::int64_t> kLengths = {1,   2,   31,  32,  33,   63,   64,   65,  100,
                                            127, 128, 129, 257, 4095, 4096, 4097, 9000};

// Values from a small set, so that ties happen everywhere; position p gets a NaN when listed.
std::vector<double> row_values(std::int64_t length, std::int64_t row,
                               const std::vector<std::int64_t>& nan_at) {
    std::vector<double> values(static_cast<std::size_t>(length));
    for (std::int64_t i = 0; i < length; ++i) {
        values[static_cast<std::size_t>(i)] = static_cast<double>((i * 7919 + row * 31) % 13) - 6;
    }
    for (const std::int64_t p : nan_at) {
        if (p < length) {
            values[static_cast<std::size_t>(p)] = std::nan("");
        }
    }
    return values;
}

struct Expected {
    double max, min, sum;
    std::int64_t argmax, argmin;
};

Expected in_order(const std::vector<double>& row) {
    Expected e{row[0], row[0], 0.0, 0, 0};
    for (std::size_t i = 0; i < row.size(); ++i) {
        const double x = row[i];
        e.sum += x;
        if (std::isnan(e.max)) {
            continue;  // the first NaN stays, for max, min and their positions
        }
        if (std::isnan(x)) {
            e.max = e.min = x;
            e.argmax = e.argmin = static_cast<std::int64_t>(i);
            continue;
        }
        if (x > e.max) {
            e.max = x;
            e.argmax = static_cast<std::int64_t>(i);
        }
        if (x < e.min) {
            e.min = x;
            e.argmin = static_cast<std::int64_t>(i);
        }
    }
    return e;
}

Tensor as(const std::vector<double>& values, kael::Shape shape, DType dtype) {
    return kael::tensor(values, std::move(shape)).to(dtype);
}

void check_rows(DType dtype, const std::vector<std::int64_t>& nan_at) {
    const bool floating = dtype != DType::I64;
    for (const std::int64_t length : kLengths) {
        const std::int64_t rows = 3;
        std::vector<double> all;
        std::vector<Expected> expected;
        for (std::int64_t r = 0; r < rows; ++r) {
            const auto row = row_values(length, r, floating ? nan_at : std::vector<std::int64_t>{});
            all.insert(all.end(), row.begin(), row.end());
            expected.push_back(in_order(row));
        }
        const Tensor x = as(all, {rows, length}, dtype);
        // The same rows as columns: reduced along dim 0 of the transposed copy.
        const Tensor columns = x.T().contiguous();
        for (const Tensor& input : {x, columns}) {
            const std::int64_t dim = input.shape()[0] == rows ? 1 : 0;
            const auto max = kael::amax(input, {dim}).to(DType::F64).to_vector<double>();
            const auto min = kael::amin(input, {dim}).to(DType::F64).to_vector<double>();
            const auto sum = kael::sum(input, dim).to(DType::F64).to_vector<double>();
            const auto argmax = kael::argmax(input, dim).to_vector<std::int64_t>();
            const auto argmin = kael::argmin(input, dim).to_vector<std::int64_t>();
            for (std::int64_t r = 0; r < rows; ++r) {
                const auto k = static_cast<std::size_t>(r);
                BOOST_TEST_CONTEXT("dtype " << kael::to_string(dtype) << " length " << length
                                            << " row " << r << " dim " << dim) {
                    const Expected& e = expected[k];
                    BOOST_TEST(std::isnan(max[k]) == std::isnan(e.max));
                    BOOST_TEST(std::isnan(min[k]) == std::isnan(e.min));
                    if (!std::isnan(e.max)) {
                        BOOST_TEST(max[k] == e.max);
                        BOOST_TEST(min[k] == e.min);
                        BOOST_TEST(sum[k] == e.sum);  // small integers: every order is exact
                    }
                    BOOST_TEST(argmax[k] == e.argmax);
                    BOOST_TEST(argmin[k] == e.argmin);
                }
            }
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(lane_folds_match_an_in_order_fold) {
    for (const DType dtype : {DType::F32, DType::F64, DType::I64}) {
        check_rows(dtype, {});
        check_rows(dtype, {0});           // a NaN in the first lane's start
        check_rows(dtype, {70, 40});      // two NaNs: the first one, not the first lane's
        check_rows(dtype, {4100, 8999});  // in the second block, and in a tail
    }
}

BOOST_AUTO_TEST_CASE(lane_sums_keep_negative_zero_and_fractions) {
    for (const std::int64_t length : kLengths) {
        const Tensor zeros = kael::full({length}, -0.0);
        BOOST_TEST(std::signbit(kael::sum(zeros).item<float>()));
        // 0.1 in f32 summed in double, then rounded once: as an in-order double sum.
        std::vector<float> tenths(static_cast<std::size_t>(length), 0.1f);
        double reference = 0.0;
        for (const float t : tenths) {
            reference += static_cast<double>(t);
        }
        BOOST_TEST(kael::sum(kael::tensor(tenths)).item<float>() == static_cast<float>(reference));
        // A product pairs elements 32 apart in f32 (f32_sums_pair_elements_32_apart).
        const Tensor near_one = kael::full({length}, 1.0001);
        const double factor = 1.0001f;
        const std::int64_t pairs = length / 64 * 32 + std::max<std::int64_t>(0, length % 64 - 32);
        const double pair = 1.0001f * 1.0001f;
        BOOST_TEST(
            kael::prod(near_one).item<float>() ==
                static_cast<float>(std::pow(pair, pairs) * std::pow(factor, length - 2 * pairs)),
            boost::test_tools::tolerance(1e-6f));
    }
}

namespace {

// First halves of 64-element groups +-512 plus a small integer, second halves odd multiples of
// 2^-15: every pair's f32 sum rounds (a tie), the +-512 cancel, and any order of double
// additions of the terms is exact (multiples of 2^-15 below 2^24), so the expected sum is too.
float paired_value(std::int64_t i, std::int64_t column) {
    const auto h = static_cast<int>((i * 40503 + column * 2654435761) % 999983);
    const float sign = ((i / 64 + i + column) & 1) != 0 ? -1.0f : 1.0f;
    return i % 64 < 32 ? sign * static_cast<float>(512 + h % 16)
                       : std::ldexp(static_cast<float>(2 * (h % 500) + 1), -15);
}

// kael's paired f32 sum (kael/kernels/tasks/reduce.h): element k of each 64-element group meets
// k + 32 in f32; `widened` is the plain double sum, which the data must tell apart.
double paired_sum(const std::vector<float>& run, bool widened) {
    double total = 0.0;
    const auto n = static_cast<std::int64_t>(run.size());
    for (std::int64_t group = 0; group < n; group += 64) {
        for (std::int64_t k = group; k < std::min(n, group + 32); ++k) {
            const float low = run[static_cast<std::size_t>(k)];
            if (k + 32 >= n) {
                total += low;
            } else if (widened) {
                total += static_cast<double>(low) + run[static_cast<std::size_t>(k + 32)];
            } else {
                total += static_cast<double>(low + run[static_cast<std::size_t>(k + 32)]);
            }
        }
    }
    return total;
}

}  // namespace

BOOST_AUTO_TEST_CASE(f32_sums_pair_elements_32_apart) {
    int told_apart = 0;
    for (const std::int64_t length : kLengths) {
        // Rows of a [3, length] tensor, and columns of [length, 203] (register blocks of columns,
        // narrower ones and single columns) and [length, 300] (streamed rows) ones.
        for (const std::int64_t columns : {std::int64_t{3}, std::int64_t{203}, std::int64_t{300}}) {
            std::vector<double> values(static_cast<std::size_t>(length * columns));
            std::vector<std::vector<float>> runs(static_cast<std::size_t>(columns));
            for (std::int64_t i = 0; i < length; ++i) {
                for (std::int64_t j = 0; j < columns; ++j) {
                    const float v = paired_value(i, j);
                    values[static_cast<std::size_t>(i * columns + j)] = v;
                    runs[static_cast<std::size_t>(j)].push_back(v);
                }
            }
            const Tensor x = kael::tensor(values, {length, columns}).to(DType::F32);
            const auto down = kael::sum(x, 0).to_vector<float>();
            const auto along = kael::sum(x.T().contiguous(), 1).to_vector<float>();
            for (std::int64_t j = 0; j < columns; ++j) {
                const auto& run = runs[static_cast<std::size_t>(j)];
                const auto expected = static_cast<float>(paired_sum(run, false));
                told_apart += expected != static_cast<float>(paired_sum(run, true));
                BOOST_TEST_CONTEXT("length " << length << " column " << j << " of " << columns) {
                    BOOST_TEST(down[static_cast<std::size_t>(j)] == expected);
                    BOOST_TEST(along[static_cast<std::size_t>(j)] == expected);
                }
            }
        }
    }
    BOOST_TEST(told_apart > 100);  // the data can fail a device that widens before pairing
    {  // 4100 columns: tiles of 2048 streamed (reduce_dims.cpp's kStreamTile) and a ragged one
        const std::int64_t length = 100;
        const std::int64_t columns = 4100;
        std::vector<double> values(static_cast<std::size_t>(length * columns));
        for (std::size_t k = 0; k < values.size(); ++k) {
            values[k] = paired_value(static_cast<std::int64_t>(k) / columns,
                                     static_cast<std::int64_t>(k) % columns);
        }
        const auto sums =
            kael::sum(kael::tensor(values, {length, columns}).to(DType::F32), 0).to_vector<float>();
        std::size_t wrong = 0;
        for (std::int64_t j = 0; j < columns; ++j) {
            std::vector<float> run;
            for (std::int64_t i = 0; i < length; ++i) {
                run.push_back(paired_value(i, j));
            }
            wrong +=
                sums[static_cast<std::size_t>(j)] != static_cast<float>(paired_sum(run, false));
        }
        BOOST_TEST(wrong == 0U);
    }
    // Products pair too: (1 + 2^-12)^2 rounds to 1 + 2^-11 in f32 (a tie, to even), 32 apart.
    for (const std::int64_t length : {std::int64_t{64}, std::int64_t{1000}, std::int64_t{9000}}) {
        const float factor = 1.0f + std::ldexp(1.0f, -12);
        const Tensor x = kael::full({length}, static_cast<double>(factor));
        const std::int64_t pairs = length / 64 * 32 + std::max<std::int64_t>(0, length % 64 - 32);
        const std::int64_t alone = length - 2 * pairs;
        const double expected = std::pow(static_cast<double>(factor * factor), pairs) *
                                std::pow(static_cast<double>(factor), alone);
        BOOST_TEST(kael::prod(x).item<float>() == expected, boost::test_tools::tolerance(1e-6));
        const Tensor columns = kael::full({length, 40}, static_cast<double>(factor));
        for (const float column : kael::prod(columns, 0).to_vector<float>()) {
            BOOST_TEST(column == expected, boost::test_tools::tolerance(1e-6));
        }
    }
}
