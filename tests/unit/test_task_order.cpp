// The shared device tasks do not depend on the order of their work items: the emulated plugin's
// backwards loop breaks a task that does, and leaves the shared ones bit-identical. End to end,
// the emulated plugin serves cuda:0 and its long sums equal the cpu's exactly.
#define BOOST_TEST_MODULE task_order
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "emulated/emulated_launch.h"
#include "kael/kernels/tasks/index.h"
#include "kael/kernels/tasks/matmul.h"
#include "kael/kernels/tasks/reduce.h"
#include "kael/kernels/tasks/reduce_dims.h"
#include "kael/kernels/tasks/sequence.h"
#include "kael/ops.h"
#include "kael/registry.h"
#include "kael/tensor.h"

namespace tasks = kael::kernels::tasks;
namespace tt = boost::test_tools;

namespace {

template <typename Task>
void forward_each(std::int64_t count, const Task& task) {
    for (std::int64_t item = 0; item < count; ++item) {
        task(item);
    }
}

// Launchers over host memory: the one the emulated plugin uses, and the forward one it is not.
struct HostMemory {
    static void* allocate(std::int64_t bytes) { return std::malloc(static_cast<size_t>(bytes)); }
    static void release(void* block) { std::free(block); }
    template <typename T>
    static void atomic_add(T* target, T value) {
        kael::emulated::atomic_add(target, value);
    }
};
struct Backward : HostMemory {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        kael::emulated::for_each(count, task);
    }
};
struct Forward : HostMemory {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        forward_each(count, task);
    }
};

// Wrong on a device: item i reads item i - 1's output, which only a forward loop has written.
struct PrefixFromPrevious {
    const std::int64_t* input;
    std::int64_t* output;
    void operator()(std::int64_t item) const {
        output[item] = input[item] + (item > 0 ? output[item - 1] : 0);
    }
};

std::vector<float> varied(std::int64_t count) {
    std::vector<float> values(static_cast<size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
        values[static_cast<size_t>(i)] = static_cast<float>(
            std::sin(0.37 * static_cast<double>(i)) * 1000.0 + 1e-3 * static_cast<double>(i % 97));
    }
    return values;
}

template <typename Launcher>
std::vector<double> sums_of_rows(const std::vector<double>& data, std::int64_t rows) {
    std::vector<double> results(static_cast<size_t>(rows));
    tasks::launch_reduce<Launcher>(KAEL_REDUCE_SUM, KAEL_DTYPE_F64, KAEL_DTYPE_F64, results.data(),
                                   data.data(), static_cast<std::int64_t>(data.size()) / rows,
                                   rows);
    return results;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_order_dependent_task_fails_under_the_emulated_loop) {
    const std::vector<std::int64_t> input{1, 2, 3, 4, 5, 6};
    const std::vector<std::int64_t> prefix_sums{1, 3, 6, 10, 15, 21};
    std::vector<std::int64_t> forward(input.size(), 0);
    forward_each(6, PrefixFromPrevious{input.data(), forward.data()});
    BOOST_TEST(forward == prefix_sums, tt::per_element());
    std::vector<std::int64_t> backward(input.size(), 0);
    kael::emulated::for_each(6, PrefixFromPrevious{input.data(), backward.data()});
    BOOST_TEST(backward != prefix_sums);
    // The shared CumsumRows computes the same sums in either order.
    std::vector<std::int64_t> rows(input.size(), 0);
    kael::emulated::for_each(2, tasks::CumsumRows<std::int64_t>{input.data(), rows.data(), 3});
    BOOST_TEST(rows == (std::vector<std::int64_t>{1, 3, 6, 4, 9, 15}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(block_reductions_match_a_sequential_fold_of_the_same_tree) {
    const std::int64_t rows = 3;
    const std::int64_t length = 5 * tasks::kBlock + 17;  // five whole blocks and a short one
    std::vector<double> data(static_cast<size_t>(rows * length));
    for (size_t i = 0; i < data.size(); ++i) {
        data[i] = std::sin(static_cast<double>(i)) * 1e6 + 1e-7 * static_cast<double>(i);
    }
    const std::vector<double> backward = sums_of_rows<Backward>(data, rows);
    const std::vector<double> forward = sums_of_rows<Forward>(data, rows);
    for (std::int64_t row = 0; row < rows; ++row) {
        // The cpu plugin's order: blocks folded in order, partials merged pairwise in place.
        std::vector<double> partials;
        for (std::int64_t begin = 0; begin < length; begin += tasks::kBlock) {
            double partial = data[static_cast<size_t>(row * length + begin)];
            for (std::int64_t i = begin + 1; i < std::min(length, begin + tasks::kBlock); ++i) {
                partial += data[static_cast<size_t>(row * length + i)];
            }
            partials.push_back(partial);
        }
        for (size_t width = partials.size(); width > 1; width = (width + 1) / 2) {
            for (size_t i = 0; i < width / 2; ++i) {
                partials[i] = partials[2 * i] + partials[2 * i + 1];
            }
            if (width % 2 != 0) {
                partials[width / 2] = partials[width - 1];
            }
        }
        const auto index = static_cast<size_t>(row);
        BOOST_TEST(std::memcmp(&backward[index], &partials[0], sizeof(double)) == 0);
        BOOST_TEST(std::memcmp(&forward[index], &partials[0], sizeof(double)) == 0);
    }
}

BOOST_AUTO_TEST_CASE(arg_reductions_keep_the_first_occurrence_across_blocks) {
    const std::int64_t length = 3 * tasks::kBlock + 5;
    std::vector<double> data(static_cast<size_t>(length), 0.0);
    data[tasks::kBlock + 7] = 2.0;  // ties in a later block must lose to the first
    data[2 * tasks::kBlock + 1] = 2.0;
    std::int64_t position = -1;
    tasks::launch_reduce<Backward>(KAEL_REDUCE_ARGMAX, KAEL_DTYPE_I64, KAEL_DTYPE_F64, &position,
                                   data.data(), length, 1);
    BOOST_TEST(position == tasks::kBlock + 7);
    data[3 * tasks::kBlock + 2] = std::numeric_limits<double>::quiet_NaN();
    data[2 * tasks::kBlock + 9] = std::numeric_limits<double>::quiet_NaN();
    tasks::launch_reduce<Backward>(KAEL_REDUCE_ARGMIN, KAEL_DTYPE_I64, KAEL_DTYPE_F64, &position,
                                   data.data(), length, 1);
    BOOST_TEST(position == 2 * tasks::kBlock + 9);
}

BOOST_AUTO_TEST_CASE(sort_and_scatter_add_give_the_same_bits_in_either_order) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> data{3, nan, 1, 3, -2, nan, 1, 0, 5, 5, -1, 2};
    for (const bool descending : {false, true}) {
        std::vector<double> values(data.size());
        std::vector<std::int64_t> backward(data.size());
        std::vector<std::int64_t> forward(data.size());
        tasks::launch_sort<Backward>(KAEL_DTYPE_F64, values.data(), backward.data(), data.data(), 6,
                                     2, descending);
        tasks::launch_sort<Forward>(KAEL_DTYPE_F64, values.data(), forward.data(), data.data(), 6,
                                    2, descending);
        BOOST_TEST(backward == forward, tt::per_element());
        const std::vector<std::int64_t> expected =
            descending ? std::vector<std::int64_t>{1, 5, 0, 3, 2, 4, 2, 3, 5, 0, 1, 4}
                       : std::vector<std::int64_t>{4, 2, 0, 3, 1, 5, 4, 1, 0, 5, 2, 3};
        BOOST_TEST(backward == expected, tt::per_element());
    }
    const std::vector<std::int64_t> indices{0, 2, 0, 0};
    const std::vector<std::int64_t> source{std::numeric_limits<std::int64_t>::max(), 5, 1, 7};
    std::vector<std::int64_t> target{0, 0, 0};
    kael_index_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.dims = 1;
    layout.count = 4;
    layout.shape[0] = 4;
    layout.data_strides[0] = 1;
    layout.index_strides[0] = 1;
    layout.source_strides[0] = 1;
    layout.axis_size = 3;
    tasks::launch_scatter_add<Backward>(KAEL_DTYPE_I64, target.data(), indices.data(),
                                        source.data(), &layout);
    BOOST_TEST(target[0] == std::numeric_limits<std::int64_t>::min() + 7);  // wraps
    BOOST_TEST(target[2] == 5);
}

// matmul_bias's task over batches: a broadcast, transposed b, the bias added to every row of
// every batch, against plain loops (i64, so exact).
BOOST_AUTO_TEST_CASE(batched_matmul_with_bias_adds_the_bias_to_every_row) {
    const std::int64_t batches = 2, rows = 3, inner = 4, columns = 5;
    std::vector<std::int64_t> a(batches * rows * inner), b(columns * inner), bias(columns);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int64_t>(i % 7) - 3;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::int64_t>(i % 5) - 2;
    for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = 100 * static_cast<std::int64_t>(i);
    kael_matmul_sizes sizes{};
    sizes.struct_size = sizeof(sizes);
    sizes.batches = batches;
    sizes.rows = rows;
    sizes.inner = inner;
    sizes.columns = columns;
    sizes.a_batch_stride = rows * inner;
    sizes.b_batch_stride = 0;  // one b, stored columns x inner, for every batch
    sizes.b_transposed = 1;
    std::vector<std::int64_t> out(batches * rows * columns, -1);
    tasks::launch_matmul<Backward>(KAEL_DTYPE_I64, a.data(), b.data(), out.data(), &sizes,
                                   bias.data());
    std::vector<std::int64_t> expected;
    for (std::int64_t batch = 0; batch < batches; ++batch) {
        for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t c = 0; c < columns; ++c) {
                std::int64_t sum = bias[c];
                for (std::int64_t k = 0; k < inner; ++k) {
                    sum += a[(batch * rows + r) * inner + k] * b[c * inner + k];
                }
                expected.push_back(sum);
            }
        }
    }
    BOOST_TEST(out == expected, tt::per_element());
}

BOOST_AUTO_TEST_CASE(the_emulated_plugin_serves_cuda_and_sums_like_cpu) {
    bool listed = false;
    for (const kael::DeviceInfo& info : kael::devices()) {
        if (info.device.str() == "cuda:0" && info.plugin == "emulated") {
            listed = info.emulated && info.memory_total > 0 && info.memory_free > 0;
        }
    }
    if (!listed) {
        BOOST_TEST_MESSAGE("cuda:0 is not the emulated plugin here (KAEL_PLUGINS?); skipped");
        return;
    }
    kael::reset_fallback_counts();
    const kael::Tensor ones = kael::ones({3}).cuda();
    BOOST_TEST((ones.device() == kael::Device("cuda:0")));
    BOOST_TEST(ones.cpu().to_vector<float>() == (std::vector<float>{1, 1, 1}), tt::per_element());
    const kael::Tensor values = kael::tensor(varied(100003));
    const float on_cpu = kael::sum(values).item<float>();
    const float on_device = kael::sum(values.cuda()).item<float>();
    BOOST_TEST(std::memcmp(&on_cpu, &on_device, sizeof(float)) == 0);
    const kael::Tensor rows = values.slice(0, 0, 100000).reshape({4, 25000});
    BOOST_TEST(
        kael::sum(rows.cuda(), 1).cpu().to_vector<float>() == kael::sum(rows, 1).to_vector<float>(),
        tt::per_element());
    BOOST_TEST(kael::argmax(rows.cuda(), 1).cpu().to_vector<std::int64_t>() ==
                   kael::argmax(rows, 1).to_vector<std::int64_t>(),
               tt::per_element());
    // Columns (reduce_dims, long runs of i) use the same tree on both plugins.
    const kael::Tensor columns = values.slice(0, 0, 100000).reshape({2, 12500, 4});
    BOOST_TEST(kael::sum(columns.cuda(), 1).cpu().to_vector<float>() ==
                   kael::sum(columns, 1).to_vector<float>(),
               tt::per_element());
    BOOST_TEST(kael::argmin(columns.cuda(), 1).cpu().to_vector<std::int64_t>() ==
                   kael::argmin(columns, 1).to_vector<std::int64_t>(),
               tt::per_element());
    BOOST_TEST(kael::fallback_counts().empty());
}

BOOST_AUTO_TEST_CASE(column_reductions_equal_row_reductions_of_the_transpose_in_either_order) {
    const std::int64_t outer = 2;
    const std::int64_t size = 3 * tasks::kBlock + 11;
    const std::int64_t inner = 3;
    std::vector<double> data(static_cast<size_t>(outer * size * inner));
    for (size_t i = 0; i < data.size(); ++i) {
        data[i] = std::sin(static_cast<double>(i)) * 1e6 + 1e-7 * static_cast<double>(i);
    }
    data[static_cast<size_t>((size + 2 * tasks::kBlock) * inner + 1)] = 5e6;  // (1, 2 blocks, 1)
    data[static_cast<size_t>((size + tasks::kBlock + 9) * inner + 1)] = 5e6;  // the first tie
    // The same runs laid out as rows: transposed[o][j][i].
    std::vector<double> rows(data.size());
    for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < size; ++i) {
            for (std::int64_t j = 0; j < inner; ++j) {
                rows[static_cast<size_t>((o * inner + j) * size + i)] =
                    data[static_cast<size_t>((o * size + i) * inner + j)];
            }
        }
    }
    for (const kael_reduce_op op : {KAEL_REDUCE_SUM, KAEL_REDUCE_ARGMAX}) {
        const kael_dtype out_dtype = op == KAEL_REDUCE_SUM ? KAEL_DTYPE_F64 : KAEL_DTYPE_I64;
        std::vector<double> expected(static_cast<size_t>(outer * inner));
        std::vector<double> backward(expected.size());
        std::vector<double> forward(expected.size());
        tasks::launch_reduce<Forward>(op, out_dtype, KAEL_DTYPE_F64, expected.data(), rows.data(),
                                      size, outer * inner);
        tasks::launch_reduce_dims<Backward>(op, out_dtype, KAEL_DTYPE_F64, backward.data(),
                                            data.data(), outer, size, inner);
        tasks::launch_reduce_dims<Forward>(op, out_dtype, KAEL_DTYPE_F64, forward.data(),
                                           data.data(), outer, size, inner);
        BOOST_TEST(std::memcmp(backward.data(), expected.data(), expected.size() * 8) == 0);
        BOOST_TEST(std::memcmp(forward.data(), expected.data(), expected.size() * 8) == 0);
        if (op == KAEL_REDUCE_ARGMAX) {
            std::int64_t position = 0;
            std::memcpy(&position, &backward[4], sizeof(position));
            BOOST_TEST(position == tasks::kBlock + 9);
        }
    }
}

namespace {

// Population variance of the three ways a device folds values into Moments: Welford steps in
// one pass, Welford pieces merged pairwise by Chan's formula, and shifted sums (the cuda lanes)
// merged the same way; pieces of `piece` elements.
template <typename In>
std::vector<double> variance_three_ways(const std::vector<In>& values, std::size_t piece) {
    using R = tasks::Variance<In>;
    tasks::Moments sequential = R::first(values[0], 0);
    for (std::size_t i = 1; i < values.size(); ++i) {
        sequential = R::step(sequential, values[i], 0);
    }
    std::vector<tasks::Moments> welford;
    std::vector<tasks::Moments> shifted;
    for (std::size_t begin = 0; begin < values.size(); begin += piece) {
        const std::size_t end = std::min(values.size(), begin + piece);
        tasks::Moments state = R::identity();
        tasks::ShiftedSums sums(static_cast<double>(values[begin]));
        for (std::size_t i = begin; i < end; ++i) {
            state = R::step(state, values[i], 0);
            sums.add(static_cast<double>(values[i]));
        }
        welford.push_back(state);
        shifted.push_back(sums.result());
    }
    const auto merge_all = [](std::vector<tasks::Moments> states) {
        while (states.size() > 1) {
            std::vector<tasks::Moments> next;
            for (std::size_t i = 0; i + 1 < states.size(); i += 2) {
                next.push_back(R::merge(states[i], states[i + 1]));
            }
            if (states.size() % 2 != 0) {
                next.push_back(states.back());
            }
            states = next;
        }
        return states[0];
    };
    return {R::finish(sequential), R::finish(merge_all(welford)), R::finish(merge_all(shifted))};
}

double two_pass(const std::vector<double>& values) {
    double total = 0;
    for (const double x : values) total += x;
    const double mean = total / static_cast<double>(values.size());
    double squares = 0;
    for (const double x : values) squares += (x - mean) * (x - mean);
    return squares / static_cast<double>(values.size());
}

}  // namespace

BOOST_AUTO_TEST_CASE(variance_states_merge_precisely_under_an_offset) {
    std::uint64_t seed = 12345;
    const auto noise = [&seed] {  // uniform in [-1, 1), deterministic
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(seed >> 11) / 4503599627370496.0 - 1.0;
    };
    std::vector<double> wide;
    std::vector<float> narrow;
    for (int i = 0; i < 10007; ++i) {
        wide.push_back(1e6 + 1e-3 * noise());
        narrow.push_back(static_cast<float>(1e6 + noise()));
    }
    const std::vector<double> narrow_wide(narrow.begin(), narrow.end());
    for (const std::size_t piece : {std::size_t{37}, std::size_t{64}, std::size_t{4096}}) {
        for (const double value : variance_three_ways(wide, piece)) {
            BOOST_TEST(value == two_pass(wide), tt::tolerance(3e-7));
        }
        for (const double value : variance_three_ways(narrow, piece)) {
            BOOST_TEST(value == two_pass(narrow_wide), tt::tolerance(1e-9));
        }
        for (const double value : variance_three_ways(std::vector<float>(300, 0.1F), piece)) {
            BOOST_TEST(value == 0.0);  // constant rows exactly 0
        }
        std::vector<double> special(300, 2.0);
        for (const double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
            special[150] = bad;
            for (const double value : variance_three_ways(special, piece)) {
                BOOST_TEST(std::isnan(value));
            }
        }
    }
    const tasks::Moments some{3.0, 1e30, 5.0};
    const tasks::Moments none = tasks::Variance<float>::identity();
    const tasks::Moments left = tasks::Variance<float>::merge(none, some);
    const tasks::Moments right = tasks::Variance<float>::merge(some, none);
    BOOST_TEST((left.count == 3.0 && left.mean == 1e30 && left.m2 == 5.0));
    BOOST_TEST((right.count == 3.0 && right.mean == 1e30 && right.m2 == 5.0));
    BOOST_TEST(std::isnan(tasks::Variance<double>::finish(none)));  // n == 0
}
