#pragma once
// layer_norm over contiguous rows, forward and backward, in double whatever the dtype (the
// reference the fast kernels are held to). Forward and grad_x: one item per row. grad_weight and
// grad_bias: one item per block of kColumnBlock columns, each column summed over the rows in row
// order, so no atomics are needed and the result does not depend on the order items run in.
#include <cstdint>
#include <string>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_math.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// Columns per gradient item: one cache line of f32, so a row's values are read once per item.
inline constexpr std::int64_t kColumnBlock = 16;

// The sum of term(i) over [0, count) in four interleaved partial sums, added pairwise at the
// end: a short dependency chain (SIMD on a CPU) in an order the code fixes.
template <typename Term>
KAEL_HD double interleaved_sum(std::int64_t count, const Term& term) {
    double partial[4] = {0, 0, 0, 0};
    std::int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
        for (int lane = 0; lane < 4; ++lane) {
            partial[lane] += term(i + lane);
        }
    }
    for (int lane = 0; i < count; ++i, ++lane) {
        partial[lane] += term(i);
    }
    return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

template <typename T>
struct LayerNormRows {
    T* out;
    T* mean;
    T* rstd;
    const T* x;
    const T* weight;  // may be null: ones
    const T* bias;    // may be null: zeros
    std::int64_t columns;
    double eps;

    KAEL_HD void operator()(std::int64_t row) const {
        const T* row_x = x + row * columns;
        const double total =
            interleaved_sum(columns, [&](std::int64_t i) { return static_cast<double>(row_x[i]); });
        const double row_mean = total / static_cast<double>(columns);
        const double squares = interleaved_sum(columns, [&](std::int64_t i) {
            const double centered = static_cast<double>(row_x[i]) - row_mean;
            return centered * centered;
        });
        const double row_rstd = 1.0 / math::sqrt(squares / static_cast<double>(columns) + eps);
        T* const row_out = out + row * columns;
        for (std::int64_t i = 0; i < columns; ++i) {
            double value = (static_cast<double>(row_x[i]) - row_mean) * row_rstd;
            if (weight != nullptr) {
                value *= static_cast<double>(weight[i]);
            }
            if (bias != nullptr) {
                value += static_cast<double>(bias[i]);
            }
            row_out[i] = static_cast<T>(value);
        }
        mean[row] = static_cast<T>(row_mean);
        rstd[row] = static_cast<T>(row_rstd);
    }
};

// grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), xhat = (x - mean) * rstd,
// g = grad_out * weight.
template <typename T>
struct LayerNormGradRows {
    T* grad_x;
    const T* grad_out;
    const T* x;
    const T* mean;
    const T* rstd;
    const T* weight;  // may be null: ones
    std::int64_t columns;

    KAEL_HD double scaled_grad(const T* row_grad, std::int64_t i) const {
        const double g = static_cast<double>(row_grad[i]);
        return weight != nullptr ? g * static_cast<double>(weight[i]) : g;
    }

    KAEL_HD void operator()(std::int64_t row) const {
        const T* row_x = x + row * columns;
        const T* row_grad = grad_out + row * columns;
        const double row_mean = static_cast<double>(mean[row]);
        const double row_rstd = static_cast<double>(rstd[row]);
        const double sum_g =
            interleaved_sum(columns, [&](std::int64_t i) { return scaled_grad(row_grad, i); });
        const double sum_g_xhat = interleaved_sum(columns, [&](std::int64_t i) {
            return scaled_grad(row_grad, i) *
                   ((static_cast<double>(row_x[i]) - row_mean) * row_rstd);
        });
        const double mean_g = sum_g / static_cast<double>(columns);
        const double mean_g_xhat = sum_g_xhat / static_cast<double>(columns);
        T* const row_out = grad_x + row * columns;
        for (std::int64_t i = 0; i < columns; ++i) {
            const double xhat = (static_cast<double>(row_x[i]) - row_mean) * row_rstd;
            row_out[i] = static_cast<T>(row_rstd *
                                        (scaled_grad(row_grad, i) - mean_g - xhat * mean_g_xhat));
        }
    }
};

// grad_weight[c] = sum over rows of grad_out * xhat, grad_bias[c] = sum of grad_out; either
// may be null. Zero rows give zeros.
template <typename T>
struct LayerNormGradColumns {
    T* grad_weight;
    T* grad_bias;
    const T* grad_out;
    const T* x;
    const T* mean;
    const T* rstd;
    std::int64_t rows;
    std::int64_t columns;

    KAEL_HD void operator()(std::int64_t block) const {
        const std::int64_t begin = block * kColumnBlock;
        const std::int64_t width = min_of(kColumnBlock, columns - begin);
        double weight_sums[kColumnBlock] = {};
        double bias_sums[kColumnBlock] = {};
        for (std::int64_t row = 0; row < rows; ++row) {
            const double row_mean = static_cast<double>(mean[row]);
            const double row_rstd = static_cast<double>(rstd[row]);
            const T* row_grad = grad_out + row * columns + begin;
            const T* row_x = x + row * columns + begin;
            if (grad_weight != nullptr) {
                for (std::int64_t i = 0; i < width; ++i) {
                    weight_sums[i] += static_cast<double>(row_grad[i]) *
                                      ((static_cast<double>(row_x[i]) - row_mean) * row_rstd);
                }
            }
            for (std::int64_t i = 0; i < width; ++i) {
                bias_sums[i] += static_cast<double>(row_grad[i]);
            }
        }
        for (std::int64_t i = 0; i < width; ++i) {
            if (grad_weight != nullptr) {
                grad_weight[begin + i] = static_cast<T>(weight_sums[i]);
            }
            if (grad_bias != nullptr) {
                grad_bias[begin + i] = static_cast<T>(bias_sums[i]);
            }
        }
    }
};

// low_precision: bf16 and f16 pass too (a plugin that computes them, mean and rstd in f32).
inline void check_layer_norm_sizes(const char* entry, kael_dtype dtype, std::int64_t rows,
                                   std::int64_t columns, bool low_precision = false) {
    if (rows < 0 || columns < 0) {
        plugin::invalid(std::string(entry) + ": negative rows or columns");
    }
    if (!valid_dtype(dtype)) {
        plugin::invalid(std::string(entry) + ": invalid dtype " + std::to_string(dtype));
    }
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64 && !(low_precision && low)) {
        plugin::unsupported(std::string(entry) + " of " + plugin::dtype_name(dtype) +
                            " (f32 and f64 only)");
    }
}

// Validates a layer_norm call; false when there is nothing to do.
inline bool check_layer_norm_call(kael_dtype dtype, const void* out, const void* mean,
                                  const void* rstd, const void* x, std::int64_t rows,
                                  std::int64_t columns, bool low_precision = false) {
    check_layer_norm_sizes("layer_norm", dtype, rows, columns, low_precision);
    if (rows == 0 || columns == 0) {
        return false;
    }
    if (out == nullptr || mean == nullptr || rstd == nullptr || x == nullptr) {
        plugin::invalid("layer_norm: null out, mean, rstd or x");
    }
    return true;
}

// Validates a layer_norm_backward call; false when there is nothing to do. Zero rows still
// zero grad_weight and grad_bias.
inline bool check_layer_norm_backward_call(kael_dtype dtype, const void* grad_x,
                                           const void* grad_weight, const void* grad_bias,
                                           const void* grad_out, const void* x,
                                           const void* mean, const void* rstd, std::int64_t rows,
                                           std::int64_t columns) {
    check_layer_norm_sizes("layer_norm_backward", dtype, rows, columns);
    const bool wanted = grad_weight != nullptr || grad_bias != nullptr ||
                        (grad_x != nullptr && rows > 0);
    if (columns == 0 || !wanted) {
        return false;
    }
    if (rows > 0 && (grad_out == nullptr || x == nullptr || mean == nullptr || rstd == nullptr)) {
        plugin::invalid("layer_norm_backward: null grad_out, x, mean or rstd");
    }
    return true;
}

template <typename Launcher>
void launch_layer_norm(kael_dtype dtype, void* out, void* mean, void* rstd, const void* x,
                       const void* weight, const void* bias, std::int64_t rows,
                       std::int64_t columns, double eps) {
    if (!check_layer_norm_call(dtype, out, mean, rstd, x, rows, columns)) {
        return;
    }
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        Launcher::for_each(rows, LayerNormRows<T>{static_cast<T*>(out), static_cast<T*>(mean),
                                                  static_cast<T*>(rstd), static_cast<const T*>(x),
                                                  static_cast<const T*>(weight),
                                                  static_cast<const T*>(bias), columns, eps});
    };
    dtype == KAEL_DTYPE_F32 ? run(0.0F) : run(0.0);
}

template <typename Launcher>
void launch_layer_norm_backward(kael_dtype dtype, void* grad_x, void* grad_weight,
                                void* grad_bias, const void* grad_out, const void* x,
                                const void* mean, const void* rstd, const void* weight,
                                std::int64_t rows, std::int64_t columns) {
    if (!check_layer_norm_backward_call(dtype, grad_x, grad_weight, grad_bias, grad_out, x, mean,
                                        rstd, rows, columns)) {
        return;
    }
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        const auto* typed_grad = static_cast<const T*>(grad_out);
        const auto* typed_x = static_cast<const T*>(x);
        const auto* typed_mean = static_cast<const T*>(mean);
        const auto* typed_rstd = static_cast<const T*>(rstd);
        if (grad_x != nullptr && rows > 0) {
            Launcher::for_each(rows, LayerNormGradRows<T>{static_cast<T*>(grad_x), typed_grad,
                                                          typed_x, typed_mean, typed_rstd,
                                                          static_cast<const T*>(weight), columns});
        }
        if (grad_weight != nullptr || grad_bias != nullptr) {
            Launcher::for_each(ceil_div(columns, kColumnBlock),
                               LayerNormGradColumns<T>{static_cast<T*>(grad_weight),
                                                       static_cast<T*>(grad_bias), typed_grad,
                                                       typed_x, typed_mean, typed_rstd, rows,
                                                       columns});
        }
    };
    dtype == KAEL_DTYPE_F32 ? run(0.0F) : run(0.0);
}

}  // namespace kael::kernels::tasks
