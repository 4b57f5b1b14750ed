#pragma once
// Fused softmax / log_softmax, forward and backward: the reference bodies, one item per block of
// lines, a line being the `size` elements (o, ., j) of an outer x size x inner buffer: maximum,
// sum of exp(x - maximum), write. f32 accumulates in double. Cross-entropy, built on the same
// LogSumExp, is in cross_entropy.h.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// exp(shifted) evaluated in E's precision: f32 data takes expf, the cost that counts on a cpu,
// while sums stay in double.
template <typename E, typename A>
KAEL_HD A exp_in(A shifted) {
    return static_cast<A>(math::exp(static_cast<E>(shifted)));
}

// Running maximum and sum of exp(x - maximum), folded one element at a time or merged; the
// devices' one-pass kernels use it too, so every plugin treats -inf, +inf and NaN alike.
// A accumulates; exponentials are taken in E.
template <typename A, typename E = A>
struct LogSumExp {
    A maximum;
    A total;

    KAEL_HD static LogSumExp none() { return {-INFINITY, A(0)}; }
    KAEL_HD static A rescaled(A total, A from, A to) {
        return from == to ? total : total * exp_in<E>(from - to);  // -inf to -inf stays
    }
    // One exp per element; a NaN element makes the total NaN (it never becomes the maximum).
    KAEL_HD void add(A x) {
        if (x > maximum) {
            total = total * exp_in<E>(maximum - x) + A(1);
            maximum = x;
        } else {
            total += x == maximum ? A(1) : exp_in<E>(x - maximum);
        }
    }
    KAEL_HD void merge(const LogSumExp& other) {
        const A top = other.maximum > maximum ? other.maximum : maximum;
        total = rescaled(total, maximum, top) + rescaled(other.total, other.maximum, top);
        maximum = top;
    }
    // An infinite maximum (every element -inf, or some +inf) gives NaN, as x - max does in the
    // two-pass formula and in PyTorch.
    [[nodiscard]] KAEL_HD A normalizer() const {
        return maximum == A(INFINITY) || maximum == A(-INFINITY) ? A(NAN) : total;
    }
    [[nodiscard]] KAEL_HD A log_total() const { return maximum + math::log(normalizer()); }
    // -log_softmax of x: (max - x) + log(total), never lse - x, which loses the small loss of a
    // confident row to the rounding of lse (f32 lse near 100 is a multiple of 7.6e-6).
    [[nodiscard]] KAEL_HD A minus_log_softmax(A x) const {
        return (maximum - x) + math::log(normalizer());
    }
};


// Lines (o, ., j) of one o for kLineBlock consecutive j at most, walked together so that every
// read is contiguous along j; each line still folds in order of i, as alone.
inline constexpr std::int64_t kLineBlock = 64;

struct LineBlock {
    std::int64_t start;  // element (o, 0, first j)
    std::int64_t count;  // lines in the block, 1..kLineBlock
};

KAEL_HD inline std::int64_t line_blocks(std::int64_t outer, std::int64_t inner) {
    return outer * ceil_div(inner, kLineBlock);
}

KAEL_HD inline LineBlock line_block(std::int64_t item, std::int64_t size, std::int64_t inner) {
    const std::int64_t per_outer = ceil_div(inner, kLineBlock);
    const std::int64_t first = (item % per_outer) * kLineBlock;
    return {(item / per_outer) * size * inner + first, min_of(kLineBlock, inner - first)};
}

// The largest of row[0, count) (count >= 1), NaN if any is: four running maxima, so the loop
// is not one long dependency chain.
template <typename T>
KAEL_HD T row_maximum(const T* row, std::int64_t count) {
    T top[4] = {row[0], row[0], row[0], row[0]};
    bool nan = false;
    std::int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
        for (int k = 0; k < 4; ++k) {
            const T x = row[i + k];
            nan = nan || is_nan(x);
            top[k] = x > top[k] ? x : top[k];
        }
    }
    for (; i < count; ++i) {
        nan = nan || is_nan(row[i]);
        top[0] = row[i] > top[0] ? row[i] : top[0];
    }
    const T a = top[0] > top[1] ? top[0] : top[1];
    const T b = top[2] > top[3] ? top[2] : top[3];
    return nan ? T(NAN) : (a > b ? a : b);
}

// out = exp(x - max) / sum, or (x - max) - log(sum) when log; every -inf gives NaN.
template <typename T>
struct SoftmaxLines {
    const T* data;
    T* out;
    std::int64_t size;
    std::int64_t inner;
    bool log;

    [[nodiscard]] std::int64_t cost() const { return 3 * size * min_of(inner, kLineBlock); }

    // A contiguous row (inner == 1), with its running values in registers.
    KAEL_HD void row(std::int64_t start) const {
        const T* x = data + start;
        T* y = out + start;
        const T maximum = row_maximum(x, size);
        double total = 0;
        for (std::int64_t i = 0; i < size; ++i) {
            const double exponential = exp_in<T>(static_cast<double>(x[i]) - maximum);
            total += exponential;
            if (!log) {
                y[i] = static_cast<T>(exponential);
            }
        }
        const double log_total = math::log(total);
        const double inverse = 1 / total;
        for (std::int64_t i = 0; i < size; ++i) {
            y[i] = static_cast<T>(log ? (static_cast<double>(x[i]) - maximum) - log_total
                                      : static_cast<double>(y[i]) * inverse);
        }
    }

    KAEL_HD void operator()(std::int64_t item) const {
        if (inner == 1) {
            row(item * size);
            return;
        }
        const LineBlock block = line_block(item, size, inner);
        T maximum[kLineBlock];
        double total[kLineBlock];
        for (std::int64_t j = 0; j < block.count; ++j) {
            maximum[j] = data[block.start + j];
            total[j] = 0;
        }
        for (std::int64_t i = 1; i < size; ++i) {
            const T* row = data + block.start + i * inner;
            for (std::int64_t j = 0; j < block.count; ++j) {
                maximum[j] = nan_aware_max(maximum[j], row[j]);
            }
        }
        // The exponentials go to out on the way, for softmax to scale in the last pass.
        for (std::int64_t i = 0; i < size; ++i) {
            const std::int64_t at = block.start + i * inner;
            for (std::int64_t j = 0; j < block.count; ++j) {
                const double exponential =
                    exp_in<T>(static_cast<double>(data[at + j]) - maximum[j]);
                total[j] += exponential;
                if (!log) {
                    out[at + j] = static_cast<T>(exponential);
                }
            }
        }
        for (std::int64_t j = 0; j < block.count; ++j) {
            total[j] = log ? math::log(total[j]) : total[j];
        }
        for (std::int64_t i = 0; i < size; ++i) {
            const std::int64_t at = block.start + i * inner;
            for (std::int64_t j = 0; j < block.count; ++j) {
                out[at + j] =
                    static_cast<T>(log ? (static_cast<double>(data[at + j]) - maximum[j]) - total[j]
                                       : static_cast<double>(out[at + j]) / total[j]);
            }
        }
    }
};

// softmax: grad_in = out * (grad_out - sum(grad_out * out)); log: grad_out - exp(out) * sum.
template <typename T>
struct SoftmaxBackwardLines {
    const T* grad_out;
    const T* out;
    T* grad_in;
    std::int64_t size;
    std::int64_t inner;
    bool log;

    [[nodiscard]] std::int64_t cost() const { return 2 * size * min_of(inner, kLineBlock); }

    KAEL_HD void row(std::int64_t start) const {
        const T* g = grad_out + start;
        const T* y = out + start;
        double total = 0;
        for (std::int64_t i = 0; i < size; ++i) {
            total += log ? static_cast<double>(g[i]) : static_cast<double>(g[i]) * y[i];
        }
        for (std::int64_t i = 0; i < size; ++i) {
            const double gi = g[i];
            const double yi = y[i];
            grad_in[start + i] =
                static_cast<T>(log ? gi - exp_in<T>(yi) * total : yi * (gi - total));
        }
    }

    KAEL_HD void operator()(std::int64_t item) const {
        if (inner == 1) {
            row(item * size);
            return;
        }
        const LineBlock block = line_block(item, size, inner);
        double total[kLineBlock];
        for (std::int64_t j = 0; j < block.count; ++j) {
            total[j] = 0;
        }
        for (std::int64_t i = 0; i < size; ++i) {
            const std::int64_t at = block.start + i * inner;
            for (std::int64_t j = 0; j < block.count; ++j) {
                const double g = grad_out[at + j];
                total[j] += log ? g : g * out[at + j];
            }
        }
        for (std::int64_t i = 0; i < size; ++i) {
            const std::int64_t at = block.start + i * inner;
            for (std::int64_t j = 0; j < block.count; ++j) {
                const double g = grad_out[at + j];
                const double y = out[at + j];
                grad_in[at + j] =
                    static_cast<T>(log ? g - exp_in<T>(y) * total[j] : y * (g - total[j]));
            }
        }
    }
};

// Float dtypes run; other valid dtypes are unsupported, invalid ones invalid.
inline void check_float_dtype(const char* entry, kael_dtype dtype) {
    if (!valid_dtype(dtype)) {
        plugin::invalid(std::string(entry) + ": invalid dtype " + std::to_string(dtype));
    }
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64) {
        plugin::unsupported(std::string(entry) + " of " + plugin::dtype_name(dtype));
    }
}

inline void check_not_null(const char* entry, std::initializer_list<const void*> buffers) {
    for (const void* buffer : buffers) {
        if (buffer == nullptr) {
            plugin::invalid(std::string(entry) + ": null buffer");
        }
    }
}

// Validates a softmax or softmax_backward call; false when there is nothing to do.
inline bool check_softmax_call(const char* entry, kael_dtype dtype,
                               std::initializer_list<const void*> buffers, std::int64_t outer,
                               std::int64_t size, std::int64_t inner) {
    check_float_dtype(entry, dtype);
    if (outer < 0 || size < 0 || inner < 0) {
        plugin::invalid(std::string(entry) + ": negative outer, size or inner");
    }
    if (outer == 0 || size == 0 || inner == 0) {
        return false;
    }
    check_not_null(entry, buffers);
    return true;
}

template <typename Launcher>
void launch_softmax(kael_dtype dtype, void* out, const void* data, std::int64_t outer,
                    std::int64_t size, std::int64_t inner, bool log) {
    if (!check_softmax_call("softmax", dtype, {out, data}, outer, size, inner)) {
        return;
    }
    with_dtype(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        if constexpr (is_floating_v<T>) {
            Launcher::for_each(line_blocks(outer, inner),
                               SoftmaxLines<T>{static_cast<const T*>(data), static_cast<T*>(out),
                                               size, inner, log});
        }
    });
}

template <typename Launcher>
void launch_softmax_backward(kael_dtype dtype, void* grad_in, const void* grad_out, const void* out,
                             std::int64_t outer, std::int64_t size, std::int64_t inner, bool log) {
    if (!check_softmax_call("softmax_backward", dtype, {grad_in, grad_out, out}, outer, size,
                            inner)) {
        return;
    }
    with_dtype(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        if constexpr (is_floating_v<T>) {
            Launcher::for_each(
                line_blocks(outer, inner),
                SoftmaxBackwardLines<T>{static_cast<const T*>(grad_out), static_cast<const T*>(out),
                                        static_cast<T*>(grad_in), size, inner, log});
        }
    });
}

}  // namespace kael::kernels::tasks
