// The fused kernels' calls (row ops, reductions over any dims, attention, adam): each
// through run(), so a plugin without the slot is served by the cpu plugin, counted.
#include <algorithm>
#include <set>
#include <span>
#include <vector>

#include "kael/device_graph.h"
#include "kernel_calls.h"
#include "kernel_run.h"
#include "memory_overlap.h"

namespace kael::detail {

namespace {

// Defined tensors only, and where each of `wanted` went in that list (-1 when undefined).
std::vector<Tensor> defined_only(const std::vector<Tensor>& wanted, std::vector<int>& positions) {
    std::vector<Tensor> present;
    for (const Tensor& tensor : wanted) {
        positions.push_back(tensor.defined() ? static_cast<int>(present.size()) : -1);
        if (tensor.defined()) {
            present.push_back(tensor);
        }
    }
    return present;
}

void* data_at(std::span<const Tensor> tensors, int position) {
    return position < 0 ? nullptr : tensors[static_cast<std::size_t>(position)].device_data();
}

}  // namespace

kael_matmul_sizes linear_sizes(std::int64_t rows, std::int64_t inner, std::int64_t columns,
                               bool a_transposed, bool weight_transposed) {
    kael_matmul_sizes sizes{};
    sizes.struct_size = sizeof(sizes);
    sizes.batches = 1;
    sizes.rows = rows;
    sizes.inner = inner;
    sizes.columns = columns;
    sizes.a_transposed = a_transposed ? 1 : 0;
    sizes.b_transposed = weight_transposed ? 0 : 1;
    return sizes;
}

kael_attention_layout attention_layout(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const Tensor& out, double scale, bool causal) {
    kael_attention_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.batch = q.size(0);
    layout.heads = q.size(1);
    layout.queries = q.size(2);
    layout.keys = k.size(2);
    layout.head_dim = q.size(3);
    for (std::size_t i = 0; i < 3; ++i) {
        layout.q_strides[i] = q.strides()[i];
        layout.k_strides[i] = k.strides()[i];
        layout.v_strides[i] = v.strides()[i];
        layout.out_strides[i] = out.strides()[i];
    }
    layout.scale = scale;
    layout.causal = causal ? 1 : 0;
    return layout;
}

void layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                const Tensor& weight, const Tensor& bias, std::int64_t rows, std::int64_t columns,
                double eps) {
    if (rows == 0 || columns == 0) {
        return;
    }
    std::vector<int> in;
    const std::vector<Tensor> inputs = defined_only({x, weight, bias}, in);
    run("layer_norm", {out, mean, rstd}, inputs, KAEL_SLOT_CHECK(layer_norm),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->layer_norm(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              outs[1].device_data(), outs[2].device_data(), data_at(ins, in[0]),
                              data_at(ins, in[1]), data_at(ins, in[2]), rows, columns, eps),
                          "layer_norm");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS});
}

void layer_norm_backward(const Tensor& grad_x, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                         const Tensor& rstd, const Tensor& weight, std::int64_t rows,
                         std::int64_t columns) {
    std::vector<int> out;
    const std::vector<Tensor> outputs = defined_only({grad_x, grad_weight, grad_bias}, out);
    if (columns == 0 || outputs.empty()) {
        return;
    }
    std::vector<int> in;
    const std::vector<Tensor> inputs = defined_only({grad_out, x, mean, rstd, weight}, in);
    run("layer_norm_backward", outputs, inputs, KAEL_SLOT_CHECK(layer_norm_backward),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->layer_norm_backward(
                              device, abi(ins[in[0]].dtype()), data_at(outs, out[0]),
                              data_at(outs, out[1]), data_at(outs, out[2]),
                              data_at(ins, in[0]), data_at(ins, in[1]), data_at(ins, in[2]),
                              data_at(ins, in[3]), data_at(ins, in[4]), rows, columns),
                          "layer_norm_backward");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS});
}

void softmax(const Tensor& out, const Tensor& input, std::int64_t outer, std::int64_t size,
             std::int64_t inner, bool log) {
    if (out.numel() == 0) {
        return;
    }
    run("softmax", {out}, {input}, KAEL_SLOT_CHECK(softmax),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->softmax(device, abi(outs[0].dtype()),
                                                   outs[0].device_data(), ins[0].device_data(),
                                                   outer, size, inner, log ? 1 : 0),
                          log ? "log_softmax" : "softmax");
        });
}

void softmax_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out,
                      std::int64_t outer, std::int64_t size, std::int64_t inner, bool log) {
    if (grad_in.numel() == 0) {
        return;
    }
    run("softmax_backward", {grad_in}, {grad_out, out}, KAEL_SLOT_CHECK(softmax_backward),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->softmax_backward(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              ins[0].device_data(), ins[1].device_data(), outer, size, inner,
                              log ? 1 : 0),
                          log ? "log_softmax_backward" : "softmax_backward");
        });
}

void cross_entropy(const Tensor& losses, const Tensor& lse, const Tensor& logits,
                   const Tensor& targets) {
    if (losses.numel() == 0) {
        return;
    }
    run("cross_entropy", {losses, lse}, {logits, targets}, KAEL_SLOT_CHECK(cross_entropy),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->cross_entropy(
                              device, abi(ins[0].dtype()), outs[0].device_data(),
                              outs[1].device_data(), ins[0].device_data(),
                              static_cast<const std::int64_t*>(ins[1].device_data()),
                              ins[0].size(0), ins[0].size(1)),
                          "cross_entropy");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS});
}

void cross_entropy_backward(const Tensor& grad_logits, const Tensor& grad_losses,
                            const Tensor& logits, const Tensor& lse, const Tensor& targets) {
    if (grad_logits.numel() == 0) {
        return;
    }
    const std::int64_t grad_stride = grad_losses.numel() == logits.size(0) ? 1 : 0;
    run("cross_entropy_backward", {grad_logits}, {grad_losses, logits, lse, targets},
        KAEL_SLOT_CHECK(cross_entropy_backward),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->cross_entropy_backward(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              ins[0].device_data(), grad_stride, ins[1].device_data(),
                              ins[2].device_data(),
                              static_cast<const std::int64_t*>(ins[3].device_data()),
                              ins[1].size(0), ins[1].size(1)),
                          "cross_entropy_backward");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS});
}

bool reads_adam_factors(const Device& device) {
    const kael_plugin* table = backend_for(device).table();
    return KAEL_HAS_SLOT(table, adam) && table->abi_minor >= 15;
}

void adam(const Tensor& param, const Tensor& m, const Tensor& v, const Tensor& grad,
          const kael_adam_params& params, const Tensor& factors) {
    if (!factors.defined()) {
        check_not_recording("adam");  // the host's count would be replayed unchanged
    }
    if (param.numel() == 0) {
        return;
    }
    // factors is an input like grad, so a fallback to the cpu plugin copies it too.
    const std::vector<Tensor> inputs =
        factors.defined() ? std::vector<Tensor>{grad, factors} : std::vector<Tensor>{grad};
    run("adam", {param, m, v}, inputs, KAEL_SLOT_CHECK(adam),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            if (ins.size() > 1 && backend.table()->abi_minor < 15) {  // would ignore them
                throw UnsupportedByPlugin("adam with device_factors (ABI 1.15)");
            }
            kael_adam_params call = params;
            call.device_factors =
                ins.size() > 1 ? static_cast<const double*>(ins[1].device_data()) : nullptr;
            backend.check(backend.table()->adam(device, abi(outs[0].dtype()), outs[0].device_data(),
                                                outs[1].device_data(), outs[2].device_data(),
                                                ins[0].device_data(), outs[0].numel(), &call),
                          "adam");
        });
}

void adam_many(const std::vector<AdamTensors>& entries) {
    if (std::any_of(entries.begin(), entries.end(),
                    [](const AdamTensors& e) { return !e.factors.defined(); })) {
        check_not_recording("adam");
    }
    std::vector<bool> done(entries.size(), false);
    for (std::size_t first = 0; first < entries.size(); ++first) {
        if (done[first]) {
            continue;
        }
        // The entries that share this one's plugin, device and dtype, in order.
        const Tensor& lead = entries[first].param;
        const Backend& backend = lead.impl().storage->backend();
        std::vector<const AdamTensors*> group;
        for (std::size_t i = first; i < entries.size(); ++i) {
            const Tensor& param = entries[i].param;
            if (!done[i] && &param.impl().storage->backend() == &backend &&
                param.device() == lead.device() && param.dtype() == lead.dtype()) {
                done[i] = true;
                group.push_back(&entries[i]);
            }
        }
        // A grad that shares memory with what the step writes goes through adam(), whose run()
        // copies it away first.
        const auto aliased = [](const AdamTensors* e) {
            return may_overlap(e->param, e->grad) || may_overlap(e->m, e->grad) ||
                   may_overlap(e->v, e->grad);
        };
        // A parameter listed twice is stepped twice in order, never twice in one launch.
        std::set<const void*> seen;
        const auto repeated = [&](const AdamTensors* e) {
            return !seen.insert(e->param.device_data()).second;
        };
        // Low precision reaches only plugins that know it (adam() widens for the others).
        const bool low_unknown = is_low_precision(lead.dtype()) &&
                                 !computes_low_precision(backend.table());
        const bool factors_unknown =
            backend.table()->abi_minor < 15 &&
            std::any_of(group.begin(), group.end(),
                        [](const AdamTensors* e) { return e->factors.defined(); });
        if (!KAEL_HAS_SLOT(backend.table(), adam_many) || low_unknown || factors_unknown ||
            std::any_of(group.begin(), group.end(), aliased) ||
            std::any_of(group.begin(), group.end(), repeated)) {
            for (const AdamTensors* e : group) {
                adam(e->param, e->m, e->v, e->grad, e->params, e->factors);
            }
            continue;
        }
        std::vector<void*> params, ms, vs;
        std::vector<const void*> grads;
        std::vector<std::int64_t> sizes;
        std::vector<kael_adam_params> calls;
        calls.reserve(group.size());  // steps points into it
        std::vector<const kael_adam_params*> steps;
        for (const AdamTensors* e : group) {
            for (const Tensor* written : {&e->param, &e->m, &e->v}) {
                written->impl().storage->bump_version();  // as run() does for every output
            }
            params.push_back(e->param.device_data());
            ms.push_back(e->m.device_data());
            vs.push_back(e->v.device_data());
            grads.push_back(e->grad.device_data());
            sizes.push_back(e->param.numel());
            calls.push_back(e->params);
            calls.back().device_factors =
                e->factors.defined() ? static_cast<const double*>(e->factors.device_data())
                                     : nullptr;
            steps.push_back(&calls.back());
        }
        try {
            backend.check(backend.table()->adam_many(
                              lead.device().index, abi(lead.dtype()),
                              static_cast<std::int64_t>(group.size()), params.data(), ms.data(),
                              vs.data(), grads.data(), sizes.data(), steps.data()),
                          "adam_many");
        } catch (const UnsupportedByPlugin&) {
            for (const AdamTensors* e : group) {  // adam() per tensor, which may fall back too
                adam(e->param, e->m, e->v, e->grad, e->params, e->factors);
            }
        }
    }
}

void reduce_dims(kael_reduce_op op, const Tensor& out, const Tensor& block, std::int64_t outer,
                 std::int64_t size, std::int64_t inner) {
    if (outer * inner == 0) {
        return;
    }
    const kael_plugin* table = backend_for(out.device()).table();
    if (!KAEL_HAS_SLOT(table, reduce_dims)) {
        // An older plugin: move i innermost on the device, then reduce rows (or fall back).
        const Tensor rows =
            inner == 1 ? block
                       : block.view({outer, size, inner}).permute({0, 2, 1}).contiguous();
        reduce(op, out, rows, size, outer * inner);
        return;
    }
    run(
        "reduce_dims", {out}, {block}, knows_reduce_op(op, KAEL_SLOT_CHECK(reduce_dims)),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->reduce_dims(device, op, abi(outs[0].dtype()),
                                                       abi(ins[0].dtype()), outs[0].device_data(),
                                                       ins[0].device_data(), outer, size, inner),
                          "reduce_dims");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, reduce_low_precision_flags(out, block)});
}

bool serves_reduce_op(const Tensor& t, kael_reduce_op op) {
    return knows_reduce_op(op, KAEL_SLOT_CHECK(reduce_dims))(
        t.impl().storage->backend().table());
}

bool has_reduce_dims_finished(const Tensor& t) {
    return KAEL_HAS_SLOT(t.impl().storage->backend().table(), reduce_dims_finished);
}

void reduce_dims_finished(kael_reduce_op op, const Tensor& out, const Tensor& block,
                          std::int64_t outer, std::int64_t size, std::int64_t inner, double scale,
                          bool root) {
    if (outer * inner == 0) {
        return;
    }
    run("reduce_dims_finished", {out}, {block},
        knows_reduce_op(op, KAEL_SLOT_CHECK(reduce_dims_finished)),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->reduce_dims_finished(
                              device, op, abi(ins[0].dtype()), outs[0].device_data(),
                              ins[0].device_data(), outer, size, inner, scale, root ? 1 : 0),
                          "reduce_dims_finished");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::Widen, KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE});
}

bool has_reduce_indexed(const Tensor& t) {
    return KAEL_HAS_SLOT(t.impl().storage->backend().table(), reduce_indexed);
}

void reduce_indexed(kael_reduce_op op, const Tensor& values, const Tensor& indices,
                    const Tensor& block, std::int64_t outer, std::int64_t size,
                    std::int64_t inner) {
    if (outer * inner == 0) {
        return;
    }
    run(
        "reduce_indexed", {values, indices}, {block}, KAEL_SLOT_CHECK(reduce_indexed),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->reduce_indexed(
                              device, op, abi(ins[0].dtype()), outs[0].device_data(),
                              static_cast<std::int64_t*>(outs[1].device_data()),
                              ins[0].device_data(), outer, size, inner),
                          op == KAEL_REDUCE_ARGMAX ? "max" : "min");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_INDEXED});
}

void attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k,
               const Tensor& v, double scale, bool causal, const Tensor& key_lengths) {
    if (out.numel() == 0) {
        return;
    }
    const bool cached = key_lengths.defined();
    const auto serves = [cached](const kael_plugin* table) {
        return KAEL_HAS_SLOT(table, attention) && (!cached || table->abi_minor >= 3);
    };
    std::vector<Tensor> inputs{q, k, v};
    if (cached) {
        inputs.push_back(key_lengths);
    }
    run("attention", {out, lse}, inputs, serves,
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            kael_attention_layout layout =
                attention_layout(ins[0], ins[1], ins[2], outs[0], scale, causal);
            if (cached) {
                layout.key_lengths = static_cast<const std::int64_t*>(ins[3].device_data());
            }
            backend.check(backend.table()->attention(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              outs[1].device_data(), ins[0].device_data(), ins[1].device_data(),
                              ins[2].device_data(), &layout),
                          "attention");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_ATTENTION});
}

void attention_backward(const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v,
                        const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& out, const Tensor& lse, double scale, bool causal) {
    if (grad_k.numel() == 0) {
        return;
    }
    run("attention_backward", {grad_q, grad_k, grad_v}, {grad_out, q, k, v, out, lse},
        KAEL_SLOT_CHECK(attention_backward),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            const kael_attention_layout layout =
                attention_layout(ins[1], ins[2], ins[3], ins[4], scale, causal);
            backend.check(backend.table()->attention_backward(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              outs[1].device_data(), outs[2].device_data(),
                              ins[0].device_data(), ins[1].device_data(), ins[2].device_data(),
                              ins[3].device_data(), ins[4].device_data(), ins[5].device_data(),
                              &layout),
                          "attention_backward");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_ATTENTION});
}

}  // namespace kael::detail
