// The f32 softmax / log_softmax forward and cross_entropy forward and backward written for the
// cpu: the shared task's rules (the row's
// maximum, NaN in any element gives a NaN row, every -inf gives NaN, double sums), with each
// pass split over kLanes independent lanes so the loops vectorize, the exponentials from
// glibc's vector math, and column blocks (inner > 1) walked row by row, kColumns at a time, so
// a softmax over dim 0 reads memory in order. Compiled for AVX-512 and AVX2 as well, picked by
// the plugin's vector ISA like layer_norm_f32.cpp. Before, the row path ran its sums and scaling
// in baseline SSE2 doubles at about 0.7 of PyTorch CPU's speed.
#include "softmax_f32.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "cpu_launcher.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kColumns = 64;  // columns per block when inner > 1
constexpr int64_t kChunk = 256;   // row elements per exponential call

[[gnu::always_inline]] inline double lane_total(double (&sums)[kLanes]) {
    for (int64_t width = kLanes / 2; width > 0; width /= 2) {
        for (int64_t lane = 0; lane < width; ++lane) {
            sums[lane] += sums[lane + width];
        }
    }
    return sums[0];
}

// The row's maximum, NaN when any element is NaN: a plain loop for the baseline, intrinsics
// for AVX-512 and AVX2 (GCC keeps float compares scalar under -ftrapping-math).
[[gnu::always_inline]] inline float nan_or(bool nan, float maximum) {
    return nan ? NAN : maximum;
}

// The maximum of a vector loop's lanes and of x[i .. size), NaN when nan or any of those is.
[[gnu::always_inline]] inline float finish_maximum(const float* lanes, int count, bool nan,
                                                   const float* x, int64_t i, int64_t size) {
    float maximum = lanes[0];
    for (int lane = 1; lane < count; ++lane) {
        maximum = lanes[lane] > maximum ? lanes[lane] : maximum;
    }
    for (; i < size; ++i) {
        nan = nan || x[i] != x[i];
        maximum = x[i] > maximum ? x[i] : maximum;
    }
    return nan_or(nan, maximum);
}

float row_maximum_baseline(const float* x, int64_t size) {
    return finish_maximum(x, 1, false, x, 0, size);
}

// GCC 12's _mm512_max_ps passes an undefined operand it then warns about; kept out of line so
// the warning stays inside these pragmas.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
[[gnu::target("avx512f"), gnu::noinline]] float row_maximum_avx512(const float* x, int64_t size) {
    __m512 top = _mm512_set1_ps(x[0]);
    __mmask16 nan = 0;
    int64_t i = 0;
    for (; i + 16 <= size; i += 16) {
        const __m512 value = _mm512_loadu_ps(x + i);
        nan |= _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
        top = _mm512_max_ps(top, value);
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, top);
    return finish_maximum(lanes, 16, nan != 0, x, i, size);
}
#pragma GCC diagnostic pop

[[gnu::target("avx2")]] float row_maximum_avx2(const float* x, int64_t size) {
    __m256 top = _mm256_set1_ps(x[0]);
    __m256 nan = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= size; i += 8) {
        const __m256 value = _mm256_loadu_ps(x + i);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(value, value, _CMP_UNORD_Q));
        top = _mm256_max_ps(top, value);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, top);
    return finish_maximum(lanes, 8, _mm256_movemask_ps(nan) != 0, x, i, size);
}

using RowMaximum = float (*)(const float*, int64_t);

// The sum of exp(x[i] - shift) over a row, in double lanes; the exponentials go to
// out + i (out null: a scratch), a chunk at a time.
[[gnu::always_inline]] inline double exponential_total(const float* x, int64_t size, float shift,
                                                       float* out) {
    double sums[kLanes] = {};
    float scratch[kChunk];
    for (int64_t start = 0; start < size; start += kChunk) {
        const int64_t count = std::min(kChunk, size - start);
        float* shifted = out == nullptr ? scratch : out + start;
        for (int64_t i = 0; i < count; ++i) {
            shifted[i] = x[start + i] - shift;
        }
        vector_math::apply(vector_math::Function::Exp, shifted, shifted, count);
        int64_t i = 0;
        for (; i + kLanes <= count; i += kLanes) {
            for (int64_t lane = 0; lane < kLanes; ++lane) {
                sums[lane] += double(shifted[i + lane]);
            }
        }
        for (int64_t lane = 0; i < count; ++i, ++lane) {
            sums[lane] += double(shifted[i]);
        }
    }
    return lane_total(sums);
}

template <RowMaximum kRowMaximum>
[[gnu::always_inline]] inline void softmax_rows(const SoftmaxF32& a, int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
        const float* x = a.x + row * a.size;
        float* y = a.y + row * a.size;
        const float maximum = kRowMaximum(x, a.size);
        // Into y for softmax; not for log_softmax, whose last pass rereads x (which may be y).
        const double total = exponential_total(x, a.size, maximum, a.log ? nullptr : y);
        if (a.log) {
            const double log_total = std::log(total);
            for (int64_t j = 0; j < a.size; ++j) {
                y[j] = static_cast<float>((double(x[j]) - double(maximum)) - log_total);
            }
        } else {
            const double inverse = 1 / total;
            for (int64_t j = 0; j < a.size; ++j) {
                y[j] = static_cast<float>(double(y[j]) * inverse);
            }
        }
    }
}

// Columns first .. first + count - 1 (count <= kColumns) of outer slice o, row after row.
[[gnu::always_inline]] inline void softmax_columns(const SoftmaxF32& a, int64_t o, int64_t first,
                                                   int64_t count) {
    const float* x = a.x + o * a.size * a.inner + first;
    float* y = a.y + o * a.size * a.inner + first;
    float maximum[kColumns];
    float nan[kColumns] = {};
    double total[kColumns] = {};
    for (int64_t j = 0; j < count; ++j) {
        maximum[j] = x[j];
    }
    for (int64_t i = 0; i < a.size; ++i) {
        const float* line = x + i * a.inner;
        for (int64_t j = 0; j < count; ++j) {
            nan[j] = line[j] != line[j] ? 1.0F : nan[j];
            maximum[j] = line[j] > maximum[j] ? line[j] : maximum[j];
        }
    }
    for (int64_t j = 0; j < count; ++j) {
        maximum[j] = nan[j] != 0.0F ? NAN : maximum[j];
    }
    // The exponentials go to y on the way, for softmax to scale in the last pass.
    float shifted[kColumns];
    for (int64_t i = 0; i < a.size; ++i) {
        const float* line = x + i * a.inner;
        float* out = a.log ? shifted : y + i * a.inner;
        for (int64_t j = 0; j < count; ++j) {
            out[j] = line[j] - maximum[j];
        }
        vector_math::apply(vector_math::Function::Exp, out, out, count);
        for (int64_t j = 0; j < count; ++j) {
            total[j] += double(out[j]);
        }
    }
    for (int64_t j = 0; j < count; ++j) {
        total[j] = a.log ? std::log(total[j]) : 1 / total[j];
    }
    for (int64_t i = 0; i < a.size; ++i) {
        const float* line = x + i * a.inner;
        float* out = y + i * a.inner;
        if (a.log) {
            for (int64_t j = 0; j < count; ++j) {
                out[j] = static_cast<float>((double(line[j]) - double(maximum[j])) - total[j]);
            }
        } else {
            for (int64_t j = 0; j < count; ++j) {
                out[j] = static_cast<float>(double(out[j]) * total[j]);
            }
        }
    }
}

template <RowMaximum kRowMaximum>
[[gnu::always_inline]] inline void cross_entropy_rows(const CrossEntropyF32& a, int64_t begin,
                                                      int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
        const float* x = a.logits + row * a.classes;
        const float maximum = kRowMaximum(x, a.classes);
        // An infinite maximum gives NaN, as the shared LogSumExp; (max - x) + log(total) keeps
        // the small loss of a confident row, which lse - x would round away.
        const double log_total =
            std::isinf(maximum) ? NAN : std::log(exponential_total(x, a.classes, maximum, nullptr));
        a.lse[row] = static_cast<float>(double(maximum) + log_total);
        const int64_t target = a.targets[row];
        a.losses[row] = target >= 0 && target < a.classes
                            ? static_cast<float>((double(maximum) - double(x[target])) + log_total)
                            : NAN;
    }
}

// grad = g * (exp(x - lse) - (c == target)), the exponentials a chunk at a time.
[[gnu::always_inline]] inline void cross_entropy_backward_rows(const CrossEntropyBackwardF32& a,
                                                               int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
        const float g = a.grad_losses[row * a.grad_stride];
        const float row_lse = a.lse[row];
        const float* x = a.logits + row * a.classes;
        float* grad = a.grad_logits + row * a.classes;
        for (int64_t start = 0; start < a.classes; start += kChunk) {
            const int64_t count = std::min(kChunk, a.classes - start);
            float* out = grad + start;
            for (int64_t i = 0; i < count; ++i) {
                out[i] = x[start + i] - row_lse;
            }
            vector_math::apply(vector_math::Function::Exp, out, out, count);
            for (int64_t i = 0; i < count; ++i) {
                out[i] = g * out[i];
            }
        }
        const int64_t target = a.targets[row];
        if (target >= 0 && target < a.classes) {
            const double exponential = std::exp(x[target] - row_lse);
            grad[target] = static_cast<float>(double(g) * (exponential - 1.0));
        }
    }
}

// One call's work: which family, and its buffers.
struct RowJob {
    const SoftmaxF32* softmax = nullptr;
    const CrossEntropyF32* forward = nullptr;
    const CrossEntropyBackwardF32* backward = nullptr;
};

template <RowMaximum kRowMaximum>
[[gnu::always_inline]] inline void job_items(const RowJob& job, int64_t begin, int64_t end) {
    if (job.forward != nullptr) {
        cross_entropy_rows<kRowMaximum>(*job.forward, begin, end);
        return;
    }
    if (job.backward != nullptr) {
        cross_entropy_backward_rows(*job.backward, begin, end);
        return;
    }
    const SoftmaxF32& a = *job.softmax;
    if (a.inner == 1) {
        softmax_rows<kRowMaximum>(a, begin, end);
        return;
    }
    const int64_t blocks = (a.inner + kColumns - 1) / kColumns;
    for (int64_t item = begin; item < end; ++item) {
        const int64_t first = item % blocks * kColumns;
        softmax_columns(a, item / blocks, first, std::min(kColumns, a.inner - first));
    }
}

[[gnu::target("avx512f")]] void job_items_avx512(const RowJob& job, int64_t begin, int64_t end) {
    job_items<row_maximum_avx512>(job, begin, end);
}

[[gnu::target("avx2,fma")]] void job_items_avx2(const RowJob& job, int64_t begin, int64_t end) {
    job_items<row_maximum_avx2>(job, begin, end);
}

void job_items_baseline(const RowJob& job, int64_t begin, int64_t end) {
    job_items<row_maximum_baseline>(job, begin, end);
}

// items of item_cost elements each, over the plugin's threads when worth it.
void run(const RowJob& job, int64_t items, int64_t item_cost) {
    const int64_t min_parallel = std::max<int64_t>(
        2, (kLaunchMinElements + item_cost - 1) / std::max<int64_t>(1, item_cost));
    const vector_math::Isa isa = vector_math::chosen_isa();
    parallel_ranges(items, min_parallel, [&](int64_t begin, int64_t end) {
        switch (isa) {
            case vector_math::Isa::Avx512: return job_items_avx512(job, begin, end);
            case vector_math::Isa::Avx2: return job_items_avx2(job, begin, end);
            default: return job_items_baseline(job, begin, end);
        }
    });
}

}  // namespace

void softmax_f32(const SoftmaxF32& a) {
    RowJob job;
    job.softmax = &a;
    const int64_t items = a.inner == 1 ? a.outer : a.outer * ((a.inner + kColumns - 1) / kColumns);
    run(job, items, 4 * a.size * std::min(a.inner, kColumns));
}

void cross_entropy_f32(const CrossEntropyF32& a) {
    RowJob job;
    job.forward = &a;
    run(job, a.rows, 2 * a.classes);
}

void cross_entropy_backward_f32(const CrossEntropyBackwardF32& a) {
    RowJob job;
    job.backward = &a;
    run(job, a.rows, 2 * a.classes);
}

}  // namespace kael::cpu
