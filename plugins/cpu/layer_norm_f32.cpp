// The f32 layer_norm forward and backward written for the cpu: the shared tasks' math (double
// sums, so the results match them to rounding), with each row's sums split over kLanes
// independent lanes so the loops vectorize; the backward reads x and g once, adding the weight
// and bias sums of each 64-row piece beside grad_x and merging the pieces in order. Compiled
// for AVX-512 and AVX2 as well and picked by the plugin's vector ISA (vector_math::isa, which
// KAEL_CPU_VECTOR_ISA lowers). Through the shared tasks the forward and backward together ran
// at about 0.7 of PyTorch CPU's speed on one machine; with a second pass over the columns for
// the weight and bias, 0.75.
#include "layer_norm_f32.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kColumns = 64;  // columns per item of the weight and bias sums

// sums[0] after a fixed pairwise tree over the lanes.
[[gnu::always_inline]] inline double lane_total(double (&sums)[kLanes]) {
    for (int64_t width = kLanes / 2; width > 0; width /= 2) {
        for (int64_t lane = 0; lane < width; ++lane) {
            sums[lane] += sums[lane + width];
        }
    }
    return sums[0];
}

[[gnu::always_inline]] inline void forward_rows(const LayerNormForward& a, int64_t begin,
                                                int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
        const float* x = a.x + row * a.columns;
        double sums[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= a.columns; i += kLanes) {
            for (int64_t lane = 0; lane < kLanes; ++lane) {
                sums[lane] += double(x[i + lane]);
            }
        }
        for (int64_t lane = 0; i < a.columns; ++i, ++lane) {
            sums[lane] += double(x[i]);
        }
        const double mean = lane_total(sums) / double(a.columns);
        double squares[kLanes] = {};
        i = 0;
        for (; i + kLanes <= a.columns; i += kLanes) {
            for (int64_t lane = 0; lane < kLanes; ++lane) {
                const double centered = double(x[i + lane]) - mean;
                squares[lane] += centered * centered;
            }
        }
        for (int64_t lane = 0; i < a.columns; ++i, ++lane) {
            const double centered = double(x[i]) - mean;
            squares[lane] += centered * centered;
        }
        const double rstd = 1.0 / std::sqrt(lane_total(squares) / double(a.columns) + a.eps);
        // The map in float lanes (twice double's), the mean split into a float and its
        // remainder so that x - mean keeps double's accuracy where x sits far from zero.
        const auto high = static_cast<float>(mean);
        const auto low = static_cast<float>(mean - double(high));
        const auto scale = static_cast<float>(rstd);
        float* out = a.out + row * a.columns;
        if (a.weight != nullptr && a.bias != nullptr) {
            for (int64_t j = 0; j < a.columns; ++j) {
                out[j] = ((x[j] - high) - low) * scale * a.weight[j] + a.bias[j];
            }
        } else {
            for (int64_t j = 0; j < a.columns; ++j) {
                float value = ((x[j] - high) - low) * scale;
                value = a.weight != nullptr ? value * a.weight[j] : value;
                out[j] = a.bias != nullptr ? value + a.bias[j] : value;
            }
        }
        a.mean[row] = static_cast<float>(mean);
        a.rstd[row] = static_cast<float>(rstd);
    }
}

[[gnu::target("avx512f")]] void forward_rows_avx512(const LayerNormForward& a, int64_t begin,
                                                    int64_t end) {
    forward_rows(a, begin, end);
}

[[gnu::target("avx2")]] void forward_rows_avx2(const LayerNormForward& a, int64_t begin,
                                               int64_t end) {
    forward_rows(a, begin, end);
}

// grad_x of rows [begin, end); with column_sums (2 * columns doubles: weight then bias), also
// adds each column's g * xhat and g over these rows there, so x and g are read once.
template <bool kWeighted, bool kColumnSums>
[[gnu::always_inline]] inline void grad_rows(const LayerNormGrad& a, int64_t begin, int64_t end,
                                             double* column_sums) {
    double* const weight_sums = column_sums;
    double* const bias_sums = column_sums + a.columns;
    for (int64_t row = begin; row < end; ++row) {
        const float* g = a.grad_out + row * a.columns;
        const float* x = a.x + row * a.columns;
        const double mean = a.mean[row];
        const double rstd = a.rstd[row];
        double sum_g[kLanes] = {};
        double sum_gx[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= a.columns; i += kLanes) {
            for (int64_t lane = 0; lane < kLanes; ++lane) {
                const double xhat = (double(x[i + lane]) - mean) * rstd;
                const double scaled =
                    kWeighted ? double(g[i + lane]) * a.weight[i + lane] : double(g[i + lane]);
                sum_g[lane] += scaled;
                sum_gx[lane] += scaled * xhat;
                if constexpr (kColumnSums) {
                    weight_sums[i + lane] += double(g[i + lane]) * xhat;
                    bias_sums[i + lane] += double(g[i + lane]);
                }
            }
        }
        for (int64_t lane = 0; i < a.columns; ++i, ++lane) {
            const double xhat = (double(x[i]) - mean) * rstd;
            const double scaled = kWeighted ? double(g[i]) * a.weight[i] : double(g[i]);
            sum_g[lane] += scaled;
            sum_gx[lane] += scaled * xhat;
            if constexpr (kColumnSums) {
                weight_sums[i] += double(g[i]) * xhat;
                bias_sums[i] += double(g[i]);
            }
        }
        const double mean_g = lane_total(sum_g) / double(a.columns);
        const double mean_gx = lane_total(sum_gx) / double(a.columns);
        float* out = a.grad_x + row * a.columns;
        for (int64_t j = 0; j < a.columns; ++j) {
            const double scaled = kWeighted ? double(g[j]) * a.weight[j] : double(g[j]);
            const double xhat = (double(x[j]) - mean) * rstd;
            out[j] = static_cast<float>(rstd * (scaled - mean_g - xhat * mean_gx));
        }
    }
}

[[gnu::always_inline]] inline void grad_columns(const LayerNormGrad& a, int64_t first_block,
                                                int64_t end_block) {
    for (int64_t block = first_block; block < end_block; ++block) {
        const int64_t begin = block * kColumns;
        const int64_t width = std::min(kColumns, a.columns - begin);
        double weight_sums[kColumns] = {};
        double bias_sums[kColumns] = {};
        for (int64_t row = 0; row < a.rows; ++row) {
            const double mean = a.mean[row];
            const double rstd = a.rstd[row];
            const float* g = a.grad_out + row * a.columns + begin;
            const float* x = a.x + row * a.columns + begin;
            for (int64_t i = 0; i < width; ++i) {
                weight_sums[i] += double(g[i]) * ((double(x[i]) - mean) * rstd);
                bias_sums[i] += double(g[i]);
            }
        }
        for (int64_t i = 0; i < width; ++i) {
            if (a.grad_weight != nullptr) {
                a.grad_weight[begin + i] = static_cast<float>(weight_sums[i]);
            }
            if (a.grad_bias != nullptr) {
                a.grad_bias[begin + i] = static_cast<float>(bias_sums[i]);
            }
        }
    }
}

// Rows per piece of the fused pass: each piece keeps its own column sums, merged in piece
// order, so the weight and bias gradients do not depend on the thread count.
constexpr int64_t kRowPiece = 64;

// One of the passes over [begin, end): row pieces (pass 0; column_sums null when the weight and
// bias gradients are not wanted, else 2 * columns doubles per piece) or column blocks (pass 1,
// when grad_x is not wanted).
[[gnu::always_inline]] inline void run_pass(int pass, const LayerNormGrad& a, int64_t begin,
                                            int64_t end, double* column_sums) {
    if (pass == 1) {
        grad_columns(a, begin, end);
        return;
    }
    for (int64_t piece = begin; piece < end; ++piece) {
        const int64_t first = piece * kRowPiece;
        const int64_t last = std::min(a.rows, first + kRowPiece);
        double* const sums = column_sums == nullptr ? nullptr : column_sums + piece * 2 * a.columns;
        if (a.weight != nullptr) {
            sums != nullptr ? grad_rows<true, true>(a, first, last, sums)
                            : grad_rows<true, false>(a, first, last, sums);
        } else {
            sums != nullptr ? grad_rows<false, true>(a, first, last, sums)
                            : grad_rows<false, false>(a, first, last, sums);
        }
    }
}

[[gnu::target("avx512f")]] void run_pass_avx512(int pass, const LayerNormGrad& a, int64_t begin,
                                                int64_t end, double* column_sums) {
    run_pass(pass, a, begin, end, column_sums);
}

[[gnu::target("avx2")]] void run_pass_avx2(int pass, const LayerNormGrad& a, int64_t begin,
                                           int64_t end, double* column_sums) {
    run_pass(pass, a, begin, end, column_sums);
}

void run_pass_widest(int pass, const LayerNormGrad& a, int64_t begin, int64_t end,
                     double* column_sums = nullptr) {
    const vector_math::Isa isa = vector_math::chosen_isa();
    if (isa == vector_math::Isa::Avx512) {
        run_pass_avx512(pass, a, begin, end, column_sums);
    } else if (isa == vector_math::Isa::Avx2) {
        run_pass_avx2(pass, a, begin, end, column_sums);
    } else {
        run_pass(pass, a, begin, end, column_sums);
    }
}

}  // namespace

void layer_norm_f32(const LayerNormForward& a) {
    parallel_ranges(a.rows, 32, [&](int64_t begin, int64_t end) {
        const vector_math::Isa isa = vector_math::chosen_isa();
        if (isa == vector_math::Isa::Avx512) {
            forward_rows_avx512(a, begin, end);
        } else if (isa == vector_math::Isa::Avx2) {
            forward_rows_avx2(a, begin, end);
        } else {
            forward_rows(a, begin, end);
        }
    });
}

void layer_norm_backward_f32(const LayerNormGrad& a) {
    const bool column_grads = a.grad_weight != nullptr || a.grad_bias != nullptr;
    if (a.grad_x == nullptr || a.rows == 0) {
        if (column_grads) {  // the column blocks alone, each over every row in order
            const int64_t blocks = (a.columns + kColumns - 1) / kColumns;
            parallel_ranges(blocks, a.rows >= 64 ? 2 : blocks + 1,
                            [&](int64_t begin, int64_t end) { run_pass_widest(1, a, begin, end); });
        }
        return;
    }
    const int64_t pieces = (a.rows + kRowPiece - 1) / kRowPiece;
    std::vector<double> column_sums(column_grads ? size_t(pieces * 2 * a.columns) : 0, 0.0);
    double* const sums = column_grads ? column_sums.data() : nullptr;
    parallel_ranges(pieces, 2,
                    [&](int64_t begin, int64_t end) { run_pass_widest(0, a, begin, end, sums); });
    if (!column_grads) {
        return;
    }
    for (int64_t piece = 1; piece < pieces; ++piece) {  // in piece order
        const double* from = sums + piece * 2 * a.columns;
        for (int64_t j = 0; j < 2 * a.columns; ++j) {
            sums[j] += from[j];
        }
    }
    for (int64_t j = 0; j < a.columns; ++j) {
        if (a.grad_weight != nullptr) {
            a.grad_weight[j] = static_cast<float>(sums[j]);
        }
        if (a.grad_bias != nullptr) {
            a.grad_bias[j] = static_cast<float>(sums[a.columns + j]);
        }
    }
}

}  // namespace kael::cpu
