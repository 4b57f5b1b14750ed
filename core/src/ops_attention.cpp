// scaled_dot_product_attention: one fused kernel each way (plugin slots attention and
// attention_backward). q, k and v are read through their strides, so heads split out of one
// qkv projection cost no copy, and the output lives in [B, T, H, D] memory, so merging the
// heads back afterwards is a view.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autograd/record.h"
#include "backend.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kernel_calls.h"
#include "memory_overlap.h"
#include "tensor_internal.h"

namespace kael {

namespace {

constexpr const char* kSdpa = "scaled_dot_product_attention";

void check_arguments(const Tensor& q, const Tensor& k, const Tensor& v, std::optional<double> scale,
                     const char* op = kSdpa) {
    if (!q.defined() || !k.defined() || !v.defined()) {
        throw ValueError(std::string(op) + ": query, key and value must be defined tensors");
    }
    detail::check_same_device({q, k, v}, op);
    if (!is_floating(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
        throw TypeError(
            std::string(op) + ": expected query, key and value of one floating dtype, got " +
            to_string(q.dtype()) + ", " + to_string(k.dtype()) + " and " + to_string(v.dtype()));
    }
    const bool shapes_match = q.dim() == 4 && k.dim() == 4 && v.dim() == 4 &&
                              k.size(0) == q.size(0) && v.size(0) == q.size(0) &&
                              k.size(1) == q.size(1) && v.size(1) == q.size(1) &&
                              v.size(2) == k.size(2) && k.size(3) == q.size(3) &&
                              v.size(3) == q.size(3);
    if (!shapes_match) {
        throw ValueError(std::string(op) +
                         ": expected query [B, H, Tq, D], key and value [B, H, Tk, D], got query " +
                         to_string(q.shape()) + ", key " + to_string(k.shape()) + " and value " +
                         to_string(v.shape()));
    }
    if (q.size(2) > 0 && k.size(2) == 0 && q.numel() > 0) {
        throw ValueError(std::string(op) + ": " + std::to_string(q.size(2)) +
                         " queries need at least one key, got key " + to_string(k.shape()));
    }
    if (scale && !std::isfinite(*scale)) {
        throw ValueError(std::string(op) + ": scale must be finite, got " + std::to_string(*scale));
    }
}

// Whether the kernels may read t, and write its gradient, through t's own strides: the last
// dimension contiguous and no two elements sharing memory (so no expanded dimension).
bool kernel_layout(const Tensor& t) {
    return (t.size(3) <= 1 || t.strides()[3] == 1) &&
           detail::non_overlapping(t.shape(), t.strides());
}

Tensor kernel_operand(const Tensor& t) { return kernel_layout(t) ? t : t.contiguous(); }

// Gradients laid out as q, k and v. Heads split out of one qkv projection are evenly spaced
// views of one storage: their gradients then share one buffer arranged the same way.
std::vector<Tensor> gradient_buffers(const Tensor& q, const Tensor& k, const Tensor& v) {
    const std::int64_t step = k.offset() - q.offset();
    const bool evenly_spaced = q.impl().storage == k.impl().storage &&
                               k.impl().storage == v.impl().storage && step > 0 &&
                               v.offset() - k.offset() == step && q.shape() == k.shape() &&
                               k.shape() == v.shape() && q.strides() == k.strides() &&
                               k.strides() == v.strides();
    if (evenly_spaced) {
        Shape shape = q.shape();
        Shape strides = q.strides();
        shape.push_back(3);
        strides.push_back(step);
        if (detail::non_overlapping(shape, strides)) {
            const Tensor all = detail::empty_with_strides(shape, strides, q.dtype(), q.device());
            return {all.select(4, 0), all.select(4, 1), all.select(4, 2)};
        }
    }
    std::vector<Tensor> buffers;
    for (const Tensor* t : {&q, &k, &v}) {
        buffers.push_back(detail::empty_with_strides(t->shape(), t->strides(), t->dtype(), t->device()));
    }
    return buffers;
}

// [B, H, T, D] over [B, T, H, D] memory.
Tensor empty_heads_last(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                        std::int64_t dims, DType dtype, const Device& device) {
    return empty({batch, tokens, heads, dims}, dtype, device).transpose(1, 2);
}

std::vector<Tensor> attention_gradients(const Tensor& grad, const Tensor& q, const Tensor& k,
                                        const Tensor& v, const Tensor& out, const Tensor& lse,
                                        double scale, bool causal) {
    Tensor grad_out = grad;
    if (grad.strides() != out.strides()) {
        grad_out = empty_heads_last(out.size(0), out.size(1), out.size(2), out.size(3),
                                    out.dtype(), out.device());
        grad_out.copy_(grad);
    }
    std::vector<Tensor> grads = gradient_buffers(q, k, v);
    if (k.numel() > 0) {
        detail::attention_backward(grads[0], grads[1], grads[2], grad_out, q, k, v, out, lse,
                                   scale, causal);
    }
    return grads;
}

// The gradients from differentiable ops (backward under create_graph): the probabilities are
// recomputed with the kernel's causal geometry (query i sees keys j <= i + keys - queries).
std::vector<Tensor> composed_gradients(const Tensor& grad, const Tensor& q, const Tensor& k,
                                       const Tensor& v, double scale, bool causal) {
    Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;
    Tensor visible;
    if (causal) {
        const std::int64_t queries = q.size(2);
        const std::int64_t keys = k.size(2);
        const Tensor rows = arange_int(0, queries, 1, DType::I64, q.device()).reshape({-1, 1});
        const Tensor columns = arange_int(0, keys, 1, DType::I64, q.device()).reshape({1, -1});
        visible = le(columns - rows, full_int({}, keys - queries, DType::I64, q.device()));
        scores = where(visible, scores, full({}, -INFINITY, scores.dtype(), q.device()));
    }
    Tensor probabilities = softmax(scores, -1);
    if (causal) {  // a query that sees no key has no output and no gradient
        probabilities = where(visible, probabilities, zeros({}, scores.dtype(), q.device()));
    }
    const Tensor grad_p = matmul(grad, v.transpose(-2, -1));
    const Tensor grad_s =
        probabilities * (grad_p - sum(grad_p * probabilities, Shape{-1}, true)) * scale;
    return {matmul(grad_s, k), matmul(grad_s.transpose(-2, -1), q),
            matmul(probabilities.transpose(-2, -1), grad)};
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    bool causal, std::optional<double> scale) {
    if (const auto cast = autocast::lower({query, key, value})) {
        const autocast::Applied applied;
        return scaled_dot_product_attention((*cast)[0], (*cast)[1], (*cast)[2], causal, scale);
    }
    check_arguments(query, key, value, scale);
    const std::int64_t dims = query.size(3);
    const double factor = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(dims));
    const autograd::Recording recording({query, key, value});
    Tensor out = empty_heads_last(query.size(0), query.size(1), query.size(2), dims,
                                  query.dtype(), query.device());
    if (out.numel() == 0) {
        // No output element; with queries but no head dims the key gradients are zero too.
        return recording.finish(out, "ScaledDotProductAttentionBackward",
                                [q = query.shape(), k = key.shape(), dtype = query.dtype(),
                                 device = query.device()](const Tensor&) {
                                    return std::vector<Tensor>{zeros(q, dtype, device),
                                                               zeros(k, dtype, device),
                                                               zeros(k, dtype, device)};
                                });
    }
    const Tensor q = kernel_operand(query);
    const Tensor k = kernel_operand(key);
    const Tensor v = kernel_operand(value);
    Tensor lse = empty({q.size(0), q.size(1), q.size(2)}, detail::stats_dtype(q.dtype()),
                       q.device());
    detail::attention(out, lse, q, k, v, factor, causal);
    // query, key and value as given (a kernel operand may be a copy made without grad): a
    // composed backward under create_graph must reach them.
    return recording.finish(
        out, "ScaledDotProductAttentionBackward",
        [q = autograd::saved(query), k = autograd::saved(key), v = autograd::saved(value),
         out = autograd::saved(out), lse = autograd::saved(lse), factor,
         causal](const Tensor& grad) {
            if (is_grad_enabled()) {
                return composed_gradients(grad, q.unpack(), k.unpack(), v.unpack(), factor,
                                          causal);
            }
            return attention_gradients(grad, kernel_operand(q.unpack()),
                                       kernel_operand(k.unpack()), kernel_operand(v.unpack()),
                                       out.unpack(), lse.unpack(), factor, causal);
        });
}

namespace {

// The cached attention ops' own checks: inference only, key_lengths i64 [B].
void check_cache_call(const std::vector<Tensor>& operands, const Tensor& query,
                      const Tensor& key_lengths, const char* op) {
    if (is_grad_enabled() && std::any_of(operands.begin(), operands.end(),
                                         [](const Tensor& t) { return t.requires_grad(); })) {
        throw ValueError(std::string(op) +
                         ": an inference kernel without a backward; call it "
                         "under NoGradGuard or on detached tensors");
    }
    if (!key_lengths.defined() || key_lengths.dtype() != DType::I64 || key_lengths.dim() != 1 ||
        key_lengths.size(0) != query.size(0)) {
        throw ValueError(std::string(op) + ": key_lengths must be i64 [" +
                         std::to_string(query.size(0)) + "], got " +
                         (key_lengths.defined() ? to_string(key_lengths.dtype()) + " " +
                                                      to_string(key_lengths.shape())
                                                : std::string("an undefined tensor")));
    }
}

}  // namespace

Tensor cached_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                        const Tensor& key_lengths, bool causal, std::optional<double> scale) {
    constexpr const char* op = "cached_attention";
    check_arguments(query, key, value, scale, op);
    check_cache_call({query, key, value}, query, key_lengths, op);
    detail::check_same_device({query, key_lengths}, op);
    detail::check_indices(key_lengths.contiguous(), 0, key.size(2) + 1, 0, op, "key length");
    return detail::cached_attention_unchecked(query, key, value, key_lengths, causal, scale);
}

Tensor cached_attention_appending(const Tensor& query, const Tensor& key, const Tensor& value,
                                  const Tensor& new_keys, const Tensor& new_values,
                                  const Tensor& key_lengths, bool causal,
                                  std::optional<double> scale) {
    constexpr const char* op = "cached_attention_appending";
    check_arguments(query, key, value, scale, op);
    for (const Tensor* given : {&new_keys, &new_values}) {
        if (!given->defined() || given->shape() != query.shape() || given->dtype() != key.dtype()) {
            throw ValueError(
                std::string(op) + ": new keys and values must be " + to_string(key.dtype()) + " " +
                to_string(query.shape()) + " as the queries, got " +
                (given->defined() ? to_string(given->dtype()) + " " + to_string(given->shape())
                                  : std::string("an undefined tensor")));
        }
    }
    check_cache_call({query, key, value, new_keys, new_values}, query, key_lengths, op);
    detail::check_same_device({query, key, value, new_keys, new_values, key_lengths}, op);
    detail::check_no_internal_overlap(key, op);
    detail::check_no_internal_overlap(value, op);
    const std::int64_t queries = query.size(2);
    const Tensor lengths = key_lengths.contiguous();
    detail::check_indices(lengths, queries, key.size(2) + 1, 0, op, "key length");
    if (std::optional<Tensor> out = detail::cached_attention_appending(
            query, key, value, new_keys, new_values, lengths, causal, scale)) {
        return *out;
    }
    const NoGradGuard no_grad;
    // Batch b's query i goes to slot lengths[b] - queries + i, every head and dim.
    const Tensor slots = (lengths.reshape({-1, 1, 1, 1}) - queries +
                          arange(0, static_cast<double>(queries), 1, DType::I64, query.device())
                              .reshape({1, 1, -1, 1}))
                             .expand(query.shape())
                             .contiguous();
    Tensor keys = key;
    Tensor values = value;
    scatter_(keys, 2, slots, new_keys);
    scatter_(values, 2, slots, new_values);
    return detail::cached_attention_unchecked(query, key, value, lengths, causal, scale);
}

namespace detail {

std::optional<Tensor> cached_attention_appending(const Tensor& query, const Tensor& key,
                                                 const Tensor& value, const Tensor& new_keys,
                                                 const Tensor& new_values,
                                                 const Tensor& key_lengths, bool causal,
                                                 std::optional<double> scale) {
    const kael_decoding* plugin = decoding_kernels(query.device());
    // The caches are written where they are: a layout the kernels cannot take composes.
    if (plugin == nullptr || plugin->cached_attention == nullptr || !kernel_layout(key) ||
        !kernel_layout(value) || !kernel_layout(new_keys) || !kernel_layout(new_values) ||
        new_keys.shape() != query.shape() || new_values.shape() != query.shape()) {
        return std::nullopt;
    }
    for (const Tensor* t : {&key, &value, &new_keys, &new_values}) {
        if (t->dtype() != query.dtype() || t->device() != query.device()) {
            return std::nullopt;
        }
    }
    const NoGradGuard no_grad;
    const double factor = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(3)));
    Tensor out = empty_heads_last(query.size(0), query.size(1), query.size(2), query.size(3),
                                  query.dtype(), query.device());
    const Tensor q = kernel_operand(query);
    Tensor lse =
        empty({q.size(0), q.size(1), q.size(2)}, detail::stats_dtype(q.dtype()), q.device());
    const Tensor lengths = key_lengths.contiguous();
    kael_attention_layout layout = attention_layout(q, key, value, out, factor, causal);
    layout.key_lengths = static_cast<const std::int64_t*>(lengths.device_data());
    kael_cache_append append{};
    append.struct_size = sizeof(append);
    append.keys = new_keys.device_data();
    append.values = new_values.device_data();
    for (std::size_t i = 0; i < 3; ++i) {
        append.key_strides[i] = new_keys.strides()[i];
        append.value_strides[i] = new_values.strides()[i];
    }
    for (const Tensor* written : {&key, &value}) {  // as every write: saved tensors see it
        written->impl().storage->bump_version();
    }
    const kael_status status = plugin->cached_attention(
        query.device().index, abi(query.dtype()), out.device_data(), lse.device_data(),
        q.device_data(), key.device_data(), value.device_data(), &layout, &append);
    if (!backend_for(query.device()).served(status, "cached_attention")) {
        return std::nullopt;
    }
    return out;
}

Tensor cached_attention_unchecked(const Tensor& query, const Tensor& key, const Tensor& value,
                                  const Tensor& key_lengths, bool causal,
                                  std::optional<double> scale) {
    const NoGradGuard no_grad;
    const double factor = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(3)));
    Tensor out = empty_heads_last(query.size(0), query.size(1), query.size(2), query.size(3),
                                  query.dtype(), query.device());
    const Tensor q = kernel_operand(query);
    Tensor lse = empty({q.size(0), q.size(1), q.size(2)}, detail::stats_dtype(q.dtype()),
                       q.device());
    detail::attention(out, lse, q, kernel_operand(key), kernel_operand(value), factor, causal,
                      key_lengths.contiguous());
    return out;
}

}  // namespace detail

}  // namespace kael
