// Attention on the host. With a BLAS, one head at a time as GEMMs over a block of query rows'
// scores (the softmax in between, sums in double), which is what makes a CPU fast here; without
// one, or for sizes a BLAS int cannot address, the shared reference bodies
// (kael/kernels/tasks/attention.h) with items split over the worker threads.
#include "kael/kernels/tasks/attention.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "blas_loader.h"
#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

namespace tasks = kernels::tasks;
using tasks::AttentionShape;

constexpr int64_t kScoreBlock = int64_t{1} << 20;  // score elements per block of query rows

template <typename T>
GemmFunction<T> gemm_for() {
    if constexpr (std::is_same_v<T, float>) {
        return blas().sgemm;
    } else {
        return blas().dgemm;
    }
}

// The BLAS path needs int sizes and leading dimensions of at least head_dim.
bool blas_fits(const AttentionShape& s) {
    const auto fits = [&](const std::int64_t* strides, std::int64_t tokens) {
        return tokens <= 1 || (strides[2] >= s.head_dim && strides[2] <= INT_MAX);
    };
    return std::max({s.queries, s.keys, s.head_dim}) <= INT_MAX && fits(s.q, s.queries) &&
           fits(s.out, s.queries) && fits(s.k, s.keys) && fits(s.v, s.keys);
}

int leading(const std::int64_t* strides, std::int64_t head_dim) {
    return static_cast<int>(std::max(strides[2], head_dim));
}

// One head's rows [first, first + rows): probabilities into scores (row stride keys), from the
// scaled dot products there. The forward writes lse (saved_lse null), the backward reads it.
template <typename T>
void softmax_rows(const AttentionShape& s, T* scores, std::int64_t first, std::int64_t rows,
                  const T* saved_lse, T* lse) {
    const bool write_lse = saved_lse == nullptr;
    for (std::int64_t r = 0; r < rows; ++r) {
        T* row = scores + r * s.keys;
        const std::int64_t visible = s.visible_keys(first + r);
        double top = -HUGE_VAL;
        for (std::int64_t j = 0; j < visible; ++j) {
            top = std::max(top, static_cast<double>(row[j]));
        }
        const double shift = write_lse ? top : static_cast<double>(saved_lse[first + r]);
        double total = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
            const double p = std::exp(static_cast<double>(row[j]) - shift);
            row[j] = static_cast<T>(p);
            total += p;
        }
        std::fill(row + visible, row + s.keys, T{0});
        if (write_lse) {
            lse[first + r] = static_cast<T>(top + std::log(total));
            const T inverse = visible == 0 ? std::numeric_limits<T>::quiet_NaN()
                                           : static_cast<T>(1.0 / total);
            std::for_each(row, row + s.keys, [inverse](T& p) { p *= inverse; });
        }
    }
}

template <typename T>
void forward_heads(const AttentionShape& s, T* out, T* lse, const T* q, const T* k, const T* v) {
    const GemmFunction<T> gemm = gemm_for<T>();
    const std::int64_t block = std::clamp<std::int64_t>(kScoreBlock / s.keys, 1, s.queries);
    std::vector<T> scores(static_cast<size_t>(block * s.keys));
    const int dims = static_cast<int>(s.head_dim);
    const int keys = static_cast<int>(s.keys);
    for (std::int64_t bh = 0; bh < s.batch * s.heads; ++bh) {
        const T* k_head = k + AttentionShape::at(s.k, bh, s.heads, 0);
        const T* v_head = v + AttentionShape::at(s.v, bh, s.heads, 0);
        for (std::int64_t first = 0; first < s.queries; first += block) {
            const auto rows = static_cast<int>(std::min(block, s.queries - first));
            gemm(kCblasRowMajor, kCblasNoTrans, kCblasTrans, rows, keys, dims, static_cast<T>(s.scale),
                 q + AttentionShape::at(s.q, bh, s.heads, first), leading(s.q, dims), k_head,
                 leading(s.k, dims), T{0}, scores.data(), keys);
            softmax_rows<T>(s, scores.data(), first, rows, nullptr, lse + bh * s.queries);
            gemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, rows, dims, keys, T{1},
                 scores.data(), keys, v_head, leading(s.v, dims), T{0},
                 out + AttentionShape::at(s.out, bh, s.heads, first), leading(s.out, dims));
        }
    }
}

// grad_v = P^T dO, grad_k = scale dS^T Q and grad_q = scale dS K with dS = P (dP - D), dP =
// dO V^T, per head and block of query rows (grad_k and grad_v accumulate over the blocks).
template <typename T>
void backward_heads(const AttentionShape& s, T* grad_q, T* grad_k, T* grad_v, const T* grad_out,
                    const T* q, const T* k, const T* v, const T* out, const T* lse) {
    const GemmFunction<T> gemm = gemm_for<T>();
    const std::int64_t block = std::clamp<std::int64_t>(kScoreBlock / s.keys, 1, s.queries);
    std::vector<T> p(static_cast<size_t>(block * s.keys));
    std::vector<T> ds(p.size());
    const int dims = static_cast<int>(s.head_dim);
    const int keys = static_cast<int>(s.keys);
    const int ldq = leading(s.q, dims);
    const int ldk = leading(s.k, dims);
    const int ldv = leading(s.v, dims);
    const int ldo = leading(s.out, dims);
    const auto scale = static_cast<T>(s.scale);
    for (std::int64_t bh = 0; bh < s.batch * s.heads; ++bh) {
        const T* k_head = k + AttentionShape::at(s.k, bh, s.heads, 0);
        const T* v_head = v + AttentionShape::at(s.v, bh, s.heads, 0);
        T* grad_k_head = grad_k + AttentionShape::at(s.k, bh, s.heads, 0);
        T* grad_v_head = grad_v + AttentionShape::at(s.v, bh, s.heads, 0);
        for (std::int64_t first = 0; first < s.queries; first += block) {
            const auto rows = static_cast<int>(std::min(block, s.queries - first));
            const T* q_rows = q + AttentionShape::at(s.q, bh, s.heads, first);
            const T* g_rows = grad_out + AttentionShape::at(s.out, bh, s.heads, first);
            const T* o_rows = out + AttentionShape::at(s.out, bh, s.heads, first);
            const T beta = first == 0 ? T{0} : T{1};
            gemm(kCblasRowMajor, kCblasNoTrans, kCblasTrans, rows, keys, dims, scale, q_rows, ldq,
                 k_head, ldk, T{0}, p.data(), keys);
            softmax_rows<T>(s, p.data(), first, rows, lse + bh * s.queries, nullptr);
            gemm(kCblasRowMajor, kCblasNoTrans, kCblasTrans, rows, keys, dims, T{1}, g_rows, ldo,
                 v_head, ldv, T{0}, ds.data(), keys);
            for (int r = 0; r < rows; ++r) {
                const double dot =
                    tasks::dot_in_double(g_rows + r * s.out[2], o_rows + r * s.out[2], dims);
                const std::int64_t visible = s.visible_keys(first + r);
                for (std::int64_t j = 0; j < keys; ++j) {
                    const std::size_t at = static_cast<std::size_t>(r) * keys + j;
                    ds[at] = j < visible ? static_cast<T>(p[at] * (ds[at] - dot)) : T{0};
                }
            }
            gemm(kCblasRowMajor, kCblasTrans, kCblasNoTrans, keys, dims, rows, T{1}, p.data(),
                 keys, g_rows, ldo, beta, grad_v_head, ldv);
            gemm(kCblasRowMajor, kCblasTrans, kCblasNoTrans, keys, dims, rows, scale, ds.data(),
                 keys, q_rows, ldq, beta, grad_k_head, ldk);
            gemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, rows, dims, keys, scale, ds.data(),
                 keys, k_head, ldk, T{0}, grad_q + AttentionShape::at(s.q, bh, s.heads, first),
                 ldq);
        }
    }
}

// Runs body with T = float or double when a BLAS serves the call; false otherwise.
template <typename Body>
bool with_blas(kael_dtype dtype, const AttentionShape& shape, Body&& body) {
    if (!blas_fits(shape) || shape.batch * shape.heads * shape.queries == 0) {
        return false;
    }
    if (dtype == KAEL_DTYPE_F32 && blas().sgemm != nullptr) {
        body(float{});
        return true;
    }
    if (dtype == KAEL_DTYPE_F64 && blas().dgemm != nullptr) {
        body(double{});
        return true;
    }
    return false;
}

}  // namespace

kael_status attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                      const void* k, const void* v, const kael_attention_layout* layout) {
    return plugin::guarded("cpu.attention", [&] {
        check_device(device);
        const AttentionShape shape = tasks::attention_shape("attention", dtype, layout);
        // A cache's filled length varies by batch: the per-row reference reads only those keys.
        const bool done = shape.key_lengths == nullptr && out != nullptr && lse != nullptr &&
                          q != nullptr && k != nullptr && v != nullptr &&
                          with_blas(dtype, shape, [&](auto zero) {
                              using T = decltype(zero);
                              forward_heads(shape, static_cast<T*>(out), static_cast<T*>(lse),
                                            static_cast<const T*>(q), static_cast<const T*>(k),
                                            static_cast<const T*>(v));
                          });
        if (!done) {
            tasks::launch_attention<Launcher>(dtype, out, lse, q, k, v, layout);
        }
    });
}

kael_status attention_backward(int32_t device, kael_dtype dtype, void* grad_q, void* grad_k,
                               void* grad_v, const void* grad_out, const void* q, const void* k,
                               const void* v, const void* out, const void* lse,
                               const kael_attention_layout* layout) {
    return plugin::guarded("cpu.attention_backward", [&] {
        check_device(device);
        const AttentionShape shape = tasks::attention_shape("attention_backward", dtype, layout);
        const bool given = grad_q != nullptr && grad_k != nullptr && grad_v != nullptr &&
                           grad_out != nullptr && q != nullptr && k != nullptr && v != nullptr &&
                           out != nullptr && lse != nullptr;
        const bool done = given && with_blas(dtype, shape, [&](auto zero) {
            using T = decltype(zero);
            backward_heads(shape, static_cast<T*>(grad_q), static_cast<T*>(grad_k),
                           static_cast<T*>(grad_v), static_cast<const T*>(grad_out),
                           static_cast<const T*>(q), static_cast<const T*>(k),
                           static_cast<const T*>(v), static_cast<const T*>(out),
                           static_cast<const T*>(lse));
        });
        if (!done) {
            tasks::launch_attention_backward<Launcher>(dtype, grad_q, grad_k, grad_v, grad_out,
                                                       q, k, v, out, lse, layout);
        }
    });
}

}  // namespace kael::cpu
