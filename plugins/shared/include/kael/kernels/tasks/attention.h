#pragma once
// Scaled dot-product attention, the reference bodies: one work item per (batch, head, query)
// for the forward and grad_q, one per (batch, head, key) for grad_k and grad_v, so no two items
// write one element and no atomics are needed. Each item recomputes the scores it needs from
// q, k and the forward's lse; sums run in double, output dims kAttentionDimChunk at a time.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// Output dims one item accumulates per pass over the keys (a local array of doubles).
inline constexpr std::int64_t kAttentionDimChunk = 64;

// The layout copied by value into tasks, with the causal geometry.
struct AttentionShape {
    std::int64_t batch;
    std::int64_t heads;
    std::int64_t queries;
    std::int64_t keys;
    std::int64_t head_dim;
    std::int64_t q[3];
    std::int64_t k[3];
    std::int64_t v[3];
    std::int64_t out[3];
    double scale;
    bool causal;
    const std::int64_t* key_lengths = nullptr;  // per batch, or null: every key filled

    KAEL_HD static std::int64_t at(const std::int64_t* strides, std::int64_t bh,
                                   std::int64_t heads, std::int64_t token) {
        return (bh / heads) * strides[0] + (bh % heads) * strides[1] + token * strides[2];
    }
    // Keys [0, visible_keys(i)) are seen by query i: causal aligns the last query with the last
    // key (a KV cache), so with more queries than keys the first ones see none.
    KAEL_HD std::int64_t visible_keys(std::int64_t query) const {
        return visible_keys(query, keys);
    }
    // The same when only keys [0, filled) are there (a cache: filled_keys).
    KAEL_HD std::int64_t visible_keys(std::int64_t query, std::int64_t filled) const {
        if (!causal) {
            return filled;
        }
        const std::int64_t end = query + filled - queries + 1;
        return end < 0 ? 0 : (end > filled ? filled : end);
    }
    // The keys pair bh's batch has: key_lengths' count (clamped to [0, keys]), or all.
    KAEL_HD std::int64_t filled_keys(std::int64_t bh) const {
        if (key_lengths == nullptr) {
            return keys;
        }
        const std::int64_t count = key_lengths[bh / heads];
        return count < 0 ? 0 : (count > keys ? keys : count);
    }
    // Queries [first_query(j), queries) see key j.
    KAEL_HD std::int64_t first_query(std::int64_t key) const {
        if (!causal) {
            return 0;
        }
        const std::int64_t first = key - (keys - queries);
        return first < 0 ? 0 : first;
    }
};

template <typename T>
KAEL_HD double dot_in_double(const T* a, const T* b, std::int64_t count) {
    double total = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        total += static_cast<double>(a[i]) * static_cast<double>(b[i]);
    }
    return total;
}

template <typename T>
struct AttentionForwardRows {
    AttentionShape shape;
    T* out;
    T* lse;
    const T* q;
    const T* k;
    const T* v;

    KAEL_HD void operator()(std::int64_t item) const {
        const std::int64_t bh = item / shape.queries;
        const std::int64_t query = item % shape.queries;
        const std::int64_t heads = shape.heads;
        const std::int64_t dims = shape.head_dim;
        const T* q_row = q + AttentionShape::at(shape.q, bh, heads, query);
        const T* k_head = k + AttentionShape::at(shape.k, bh, heads, 0);
        const T* v_head = v + AttentionShape::at(shape.v, bh, heads, 0);
        T* out_row = out + AttentionShape::at(shape.out, bh, heads, query);
        const std::int64_t visible = shape.visible_keys(query, shape.filled_keys(bh));
        const auto score = [&](std::int64_t key) {
            return shape.scale * dot_in_double(q_row, k_head + key * shape.k[2], dims);
        };
        double top = -HUGE_VAL;
        for (std::int64_t key = 0; key < visible; ++key) {
            const double s = score(key);
            top = s > top ? s : top;
        }
        double total = 0;
        for (std::int64_t first = 0; first < dims; first += kAttentionDimChunk) {
            const std::int64_t count = min_of(kAttentionDimChunk, dims - first);
            double mixed[kAttentionDimChunk] = {};
            total = 0;
            for (std::int64_t key = 0; key < visible; ++key) {
                const double p = ::exp(score(key) - top);
                total += p;
                const T* v_row = v_head + key * shape.v[2] + first;
                for (std::int64_t e = 0; e < count; ++e) {
                    mixed[e] += p * static_cast<double>(v_row[e]);
                }
            }
            for (std::int64_t e = 0; e < count; ++e) {
                out_row[first + e] = static_cast<T>(mixed[e] / total);  // no keys: 0 / 0 = NaN
            }
        }
        lse[item] = static_cast<T>(top + ::log(total));
    }
};

// D_i = sum(grad_out_i * out_i) per query row, into double scratch.
template <typename T>
struct AttentionRowDots {
    AttentionShape shape;
    double* row_dots;
    const T* grad_out;
    const T* out;

    KAEL_HD void operator()(std::int64_t item) const {
        const std::int64_t offset = AttentionShape::at(shape.out, item / shape.queries,
                                                       shape.heads, item % shape.queries);
        row_dots[item] = dot_in_double(grad_out + offset, out + offset, shape.head_dim);
    }
};

// What the backward items share: the tensors and the recomputation of p_ij and dS_ij.
template <typename T>
struct AttentionGradients {
    AttentionShape shape;
    T* grad_q;
    T* grad_k;
    T* grad_v;
    const T* grad_out;
    const T* q;
    const T* k;
    const T* v;
    const T* lse;
    const double* row_dots;

    // p = softmax probability of (query, key); ds = p * (grad_out_i . v_j - D_i).
    KAEL_HD void probability(std::int64_t bh, std::int64_t query, std::int64_t key, double* p,
                             double* ds) const {
        const std::int64_t heads = shape.heads;
        const std::int64_t dims = shape.head_dim;
        const std::int64_t row = bh * shape.queries + query;
        const double s = shape.scale * dot_in_double(q + AttentionShape::at(shape.q, bh, heads, query),
                                                     k + AttentionShape::at(shape.k, bh, heads, key),
                                                     dims);
        *p = ::exp(s - static_cast<double>(lse[row]));
        const double dp = dot_in_double(grad_out + AttentionShape::at(shape.out, bh, heads, query),
                                        v + AttentionShape::at(shape.v, bh, heads, key), dims);
        *ds = *p * (dp - row_dots[row]);
    }
};

// grad_q_i = scale * sum_j dS_ij k_j.
template <typename T>
struct AttentionGradQueryRows {
    AttentionGradients<T> g;

    KAEL_HD void operator()(std::int64_t item) const {
        const AttentionShape& shape = g.shape;
        const std::int64_t bh = item / shape.queries;
        const std::int64_t query = item % shape.queries;
        const std::int64_t visible = shape.visible_keys(query);
        const T* k_head = g.k + AttentionShape::at(shape.k, bh, shape.heads, 0);
        T* grad_row = g.grad_q + AttentionShape::at(shape.q, bh, shape.heads, query);
        for (std::int64_t first = 0; first < shape.head_dim; first += kAttentionDimChunk) {
            const std::int64_t count = min_of(kAttentionDimChunk, shape.head_dim - first);
            double sum[kAttentionDimChunk] = {};
            for (std::int64_t key = 0; key < visible; ++key) {
                double p = 0;
                double ds = 0;
                g.probability(bh, query, key, &p, &ds);
                const T* k_row = k_head + key * shape.k[2] + first;
                for (std::int64_t e = 0; e < count; ++e) {
                    sum[e] += ds * static_cast<double>(k_row[e]);
                }
            }
            for (std::int64_t e = 0; e < count; ++e) {
                grad_row[first + e] = static_cast<T>(shape.scale * sum[e]);
            }
        }
    }
};

// grad_k_j = scale * sum_i dS_ij q_i and grad_v_j = sum_i p_ij grad_out_i.
template <typename T>
struct AttentionGradKeyRows {
    AttentionGradients<T> g;

    KAEL_HD void operator()(std::int64_t item) const {
        const AttentionShape& shape = g.shape;
        const std::int64_t bh = item / shape.keys;
        const std::int64_t key = item % shape.keys;
        const T* q_head = g.q + AttentionShape::at(shape.q, bh, shape.heads, 0);
        const T* grad_out_head = g.grad_out + AttentionShape::at(shape.out, bh, shape.heads, 0);
        T* grad_k_row = g.grad_k + AttentionShape::at(shape.k, bh, shape.heads, key);
        T* grad_v_row = g.grad_v + AttentionShape::at(shape.v, bh, shape.heads, key);
        for (std::int64_t first = 0; first < shape.head_dim; first += kAttentionDimChunk) {
            const std::int64_t count = min_of(kAttentionDimChunk, shape.head_dim - first);
            double sum_k[kAttentionDimChunk] = {};
            double sum_v[kAttentionDimChunk] = {};
            for (std::int64_t query = shape.first_query(key); query < shape.queries; ++query) {
                double p = 0;
                double ds = 0;
                g.probability(bh, query, key, &p, &ds);
                const T* q_row = q_head + query * shape.q[2] + first;
                const T* grad_out_row = grad_out_head + query * shape.out[2] + first;
                for (std::int64_t e = 0; e < count; ++e) {
                    sum_k[e] += ds * static_cast<double>(q_row[e]);
                    sum_v[e] += p * static_cast<double>(grad_out_row[e]);
                }
            }
            for (std::int64_t e = 0; e < count; ++e) {
                grad_k_row[first + e] = static_cast<T>(shape.scale * sum_k[e]);
                grad_v_row[first + e] = static_cast<T>(sum_v[e]);
            }
        }
    }
};

// Elements spanned by one strided [batch, heads, tokens, head_dim] operand (0 when empty).
inline std::int64_t attention_extent(const kael_attention_layout& layout,
                                     const std::int64_t* strides, std::int64_t tokens) {
    if (layout.batch == 0 || layout.heads == 0 || tokens == 0) {
        return 0;
    }
    return (layout.batch - 1) * strides[0] + (layout.heads - 1) * strides[1] +
           (tokens - 1) * strides[2] + layout.head_dim;
}

// Validates the call's layout and returns it as a task shape.
// low_precision: bf16 and f16 pass too (a plugin with KAEL_DTYPE_FLAG_LOW_PRECISION_ATTENTION).
inline AttentionShape attention_shape(const char* entry, kael_dtype dtype,
                                      const kael_attention_layout* layout,
                                      bool low_precision = false) {
    const std::string name(entry);
    // An older core passes the layout without key_lengths (its released size, _SIZE_1_2).
    if (layout == nullptr || layout->struct_size < KAEL_ATTENTION_LAYOUT_SIZE_1_2) {
        plugin::invalid(name + ": null or short attention layout");
    }
    const kael_attention_layout& l = *layout;
    if (l.batch < 0 || l.heads < 0 || l.queries < 0 || l.keys < 0 || l.head_dim < 1) {
        plugin::invalid(name + ": negative sizes or head_dim < 1");
    }
    if (l.queries > 0 && l.keys < 1) {
        plugin::invalid(name + ": queries without keys");
    }
    if ((l.causal != 0 && l.causal != 1) || !std::isfinite(l.scale)) {
        plugin::invalid(name + ": causal must be 0 or 1 and scale finite");
    }
    for (const std::int64_t* strides : {l.q_strides, l.k_strides, l.v_strides, l.out_strides}) {
        if (strides[0] < 0 || strides[1] < 0 || strides[2] < 0) {
            plugin::invalid(name + ": negative strides");
        }
    }
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64 && !(low_precision && low)) {
        plugin::unsupported(name + " of " + plugin::dtype_name(dtype));
    }
    AttentionShape shape{l.batch, l.heads, l.queries, l.keys, l.head_dim, {}, {}, {}, {},
                         l.scale, l.causal != 0};
    for (int i = 0; i < 3; ++i) {
        shape.q[i] = l.q_strides[i];
        shape.k[i] = l.k_strides[i];
        shape.v[i] = l.v_strides[i];
        shape.out[i] = l.out_strides[i];
    }
    if (l.struct_size >= offsetof(kael_attention_layout, key_lengths) + sizeof(l.key_lengths)) {
        shape.key_lengths = l.key_lengths;
    }
    if (shape.key_lengths != nullptr && name != "attention" && name != "cached_attention") {
        plugin::invalid(name + ": key_lengths are for the forward only");
    }
    return shape;
}

template <typename Launcher>
void launch_attention(kael_dtype dtype, void* out, void* lse, const void* q, const void* k,
                      const void* v, const kael_attention_layout* layout) {
    const AttentionShape shape = attention_shape("attention", dtype, layout);
    const std::int64_t rows = shape.batch * shape.heads * shape.queries;
    if (rows == 0) {
        return;
    }
    if (out == nullptr || lse == nullptr || q == nullptr || k == nullptr || v == nullptr) {
        plugin::invalid("attention: null buffer");
    }
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        Launcher::for_each(rows, AttentionForwardRows<T>{shape, static_cast<T*>(out),
                                                         static_cast<T*>(lse),
                                                         static_cast<const T*>(q),
                                                         static_cast<const T*>(k),
                                                         static_cast<const T*>(v)});
    };
    dtype == KAEL_DTYPE_F32 ? run(0.0F) : run(0.0);
}

template <typename Launcher>
void launch_attention_backward(kael_dtype dtype, void* grad_q, void* grad_k, void* grad_v,
                               const void* grad_out, const void* q, const void* k, const void* v,
                               const void* out, const void* lse,
                               const kael_attention_layout* layout) {
    const AttentionShape shape = attention_shape("attention_backward", dtype, layout);
    const std::int64_t query_rows = shape.batch * shape.heads * shape.queries;
    const std::int64_t key_rows = shape.batch * shape.heads * shape.keys;
    if (key_rows == 0) {
        return;  // no keys means no queries either: nothing to write
    }
    // Without queries only grad_k and grad_v (zeros) are written and only they, k and v exist.
    const bool query_buffers = grad_q != nullptr && grad_out != nullptr && q != nullptr &&
                               out != nullptr && lse != nullptr;
    if (grad_k == nullptr || grad_v == nullptr || k == nullptr || v == nullptr ||
        (query_rows > 0 && !query_buffers)) {
        plugin::invalid("attention_backward: null buffer");
    }
    const Scratch<Launcher, double> row_dots(query_rows > 0 ? query_rows : 1);
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        const AttentionGradients<T> g{shape,
                                      static_cast<T*>(grad_q),
                                      static_cast<T*>(grad_k),
                                      static_cast<T*>(grad_v),
                                      static_cast<const T*>(grad_out),
                                      static_cast<const T*>(q),
                                      static_cast<const T*>(k),
                                      static_cast<const T*>(v),
                                      static_cast<const T*>(lse),
                                      row_dots.get()};
        if (query_rows > 0) {
            Launcher::for_each(query_rows,
                               AttentionRowDots<T>{shape, row_dots.get(), g.grad_out,
                                                   static_cast<const T*>(out)});
            Launcher::for_each(query_rows, AttentionGradQueryRows<T>{g});
        }
        Launcher::for_each(key_rows, AttentionGradKeyRows<T>{g});
    };
    dtype == KAEL_DTYPE_F32 ? run(0.0F) : run(0.0);
}

}  // namespace kael::kernels::tasks
