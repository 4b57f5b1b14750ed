#include "kernel_calls.h"

#include <initializer_list>
#include <optional>
#include <span>

#include "backend.h"
#include "kael/autograd.h"
#include "kael/tensor_iterator.h"
#include "memory_overlap.h"

namespace kael::detail {

kael_element_params no_params() {
    kael_element_params params{};
    params.struct_size = sizeof(params);
    return params;
}

kael_element_params real_params(double first, double second) {
    kael_element_params params = no_params();
    params.reals[0] = first;
    params.reals[1] = second;
    return params;
}

kael_element_params integer_params(std::int64_t first, std::int64_t second) {
    kael_element_params params = no_params();
    params.integers[0] = first;
    params.integers[1] = second;
    return params;
}

void check_same_device(const std::vector<Tensor>& tensors, const char* op) {
    for (const Tensor& tensor : tensors) {
        if (tensor.device() != tensors.front().device()) {
            const Device& first = tensors.front().device();
            const Device& other = tensor.device();
            // Name types when they differ ("cpu and cuda"), indices when only they do.
            const bool same_type = first.type == other.type;
            throw DeviceError(std::string(op) +
                              ": expected all tensors to be on the same device, but found " +
                              (same_type ? first.str() : to_string(first.type)) + " and " +
                              (same_type ? other.str() : to_string(other.type)));
        }
    }
}

void transfer(void* target, const Device& target_device, const void* source,
              const Device& source_device, std::int64_t bytes) {
    if (bytes == 0) {
        return;
    }
    const Backend& to = backend_for(target_device);
    const Backend& from = backend_for(source_device);
    if (target_device == source_device) {
        to.copy_within(target_device.index, target, source, bytes);
    } else if (from.host_addressable()) {
        to.copy_to_device(target_device.index, target, source, bytes);
    } else if (to.host_addressable()) {
        from.copy_to_host(source_device.index, target, source, bytes);
    } else {
        std::vector<std::byte> staging(static_cast<std::size_t>(bytes));
        from.copy_to_host(source_device.index, staging.data(), source, bytes);
        to.copy_to_device(target_device.index, target, staging.data(), bytes);
    }
}

namespace {

// A cpu tensor over a host copy of the tensor's whole storage, with the same view.
Tensor host_mirror(const Tensor& tensor) {
    const Storage& storage = *tensor.impl().storage;
    auto impl = std::make_shared<TensorImpl>(tensor.impl());
    impl->storage = std::make_shared<Storage>(storage.nbytes(), kCPU);
    transfer(impl->storage->data(), kCPU, storage.data(), storage.device(), storage.nbytes());
    return Tensor(impl);
}

void write_back(const Tensor& mirror, const Tensor& original) {
    const Storage& storage = *original.impl().storage;
    transfer(storage.data(), storage.device(), mirror.impl().storage->data(), kCPU,
             storage.nbytes());
}

// How an input may share memory with an output: elementwise kernels may read each element where
// they then write it; other kernels read inputs while outputs are written anywhere.
enum class Aliasing { SameElements, None };

// A fresh copy of input when it shares memory with an output in a way the kernel cannot handle,
// so every device (and the backwards-running emulator) computes what sequential code would;
// nothing when input can be used as it is.
std::optional<Tensor> unaliased(const Tensor& input, std::span<const Tensor> outputs,
                                Aliasing allowed) {
    for (const Tensor& output : outputs) {
        if (may_overlap(output, input) &&
            !(allowed == Aliasing::SameElements && same_elements(output, input))) {
            const NoGradGuard no_grad;
            Tensor copy = empty(input.shape(), input.dtype(), input.device());
            convert(copy, input);
            return copy;
        }
    }
    return std::nullopt;
}

// Runs call(backend, device index, outputs, inputs) on the tensors' device, or on the cpu plugin
// over host mirrors when the device's plugin lacks the slot; outputs are written back after a
// fallback. A template, not std::function: this runs for every op, ~400 times per decoded token.
template <typename HasSlot, typename Call>
void run(const char* slot, std::span<const Tensor> outputs,
         const std::vector<Tensor>& given_inputs, HasSlot has_slot, const Call& call,
         Aliasing allowed = Aliasing::None) {
    // The inputs are copied only when one must be unaliased (rare).
    std::vector<Tensor> unaliased_inputs;
    for (std::size_t i = 0; i < given_inputs.size(); ++i) {
        if (std::optional<Tensor> copy = unaliased(given_inputs[i], outputs, allowed)) {
            if (unaliased_inputs.empty()) {
                unaliased_inputs = given_inputs;
            }
            unaliased_inputs[i] = std::move(*copy);
        }
    }
    const std::vector<Tensor>& inputs = unaliased_inputs.empty() ? given_inputs : unaliased_inputs;
    const Device device = outputs.front().device();
    // The plugin that allocated the output serves the call (what backend_for(device) returns,
    // without the registry lookup).
    const Backend& backend = outputs.front().impl().storage->backend();
    // Every write into a tensor passes here, so autograd's saved tensors see every in-place op
    // (on any view of the storage), including ones run without grad such as optimizer steps.
    for (const Tensor& output : outputs) {
        output.impl().storage->bump_version();
    }
    if (has_slot(backend.table())) {
        call(backend, device.index, outputs, inputs);
        return;
    }
    const Backend& host = cpu_backend();
    if (!has_slot(host.table())) {
        throw TypeError(std::string("no plugin implements '") + slot + "' (not even cpu)");
    }
    std::vector<Tensor> host_outputs;
    std::vector<Tensor> host_inputs;
    for (const Tensor& output : outputs) {
        host_outputs.push_back(host_mirror(output));
    }
    for (const Tensor& input : inputs) {
        host_inputs.push_back(host_mirror(input));
    }
    count_fallback(backend, slot);
    call(host, 0, std::span<const Tensor>(host_outputs), host_inputs);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        write_back(host_outputs[i], outputs[i]);
    }
}

// run() for outputs written as a braced list ({out}), without a vector.
template <typename HasSlot, typename Call>
void run(const char* slot, std::initializer_list<Tensor> outputs,
         const std::vector<Tensor>& inputs, HasSlot has_slot, const Call& call,
         Aliasing allowed = Aliasing::None) {
    run(slot, std::span<const Tensor>(outputs.begin(), outputs.size()), inputs, has_slot, call,
        allowed);
}

#define KAEL_SLOT_CHECK(slot) [](const kael_plugin* table) { return KAEL_HAS_SLOT(table, slot); }

}  // namespace

void fill(const Tensor& out, const kael_element_params& value) {
    if (out.numel() == 0) {
        return;
    }
    run("fill", {out}, {}, KAEL_SLOT_CHECK(fill),
        [&](const Backend& backend, int device, const auto& outs, const auto&) {
            backend.check(backend.table()->fill(device, abi(outs[0].dtype()),
                                                outs[0].device_data(), outs[0].numel(), &value),
                          "fill");
        });
}

namespace {

// Runs launch(out, inputs) over pieces of at most KAEL_MAX_DIMS merged dimensions: beyond that
// the outermost dimension is walked here, one slice per call.
template <typename Launch>
void split_for_layout(const Tensor& out, const std::vector<Tensor>& inputs, const Launch& launch) {
    // Merging never adds dims, so only tensors of rank above the limit need counting.
    if (out.dim() <= KAEL_MAX_DIMS || element_layout_dims(out, inputs) <= KAEL_MAX_DIMS) {
        launch(out, inputs);
        return;
    }
    const NoGradGuard no_grad;
    std::vector<Tensor> expanded;
    for (const Tensor& input : inputs) {
        expanded.push_back(input.expand(out.shape()));
    }
    std::int64_t outer = 0;
    while (out.shape()[outer] == 1) {
        ++outer;
    }
    for (std::int64_t i = 0; i < out.shape()[outer]; ++i) {
        std::vector<Tensor> slices;
        for (const Tensor& input : expanded) {
            slices.push_back(input.select(outer, i));
        }
        split_for_layout(out.select(outer, i), slices, launch);
    }
}

}  // namespace

void convert(const Tensor& out, const Tensor& input) {
    check_same_device({out, input}, "convert");
    if (out.numel() == 0) {
        return;
    }
    split_for_layout(out, {input}, [](const Tensor& piece, const std::vector<Tensor>& sources) {
        run("convert", {piece}, sources, KAEL_SLOT_CHECK(convert),
            [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
                const kael_element_layout layout = element_layout(outs[0], {ins[0]});
                backend.check(backend.table()->convert(device, abi(outs[0].dtype()),
                                                       abi(ins[0].dtype()), &layout),
                              "convert");
            },
            Aliasing::SameElements);
    });
}

void elementwise(kael_element_op op, const Tensor& out, const std::vector<Tensor>& inputs,
                 DType in_dtype, const kael_element_params& params) {
    if (out.numel() == 0) {
        return;
    }
    split_for_layout(out, inputs, [&](const Tensor& piece, const std::vector<Tensor>& sources) {
        // Ops appended in ABI 1.2 reach only plugins that know them; older ones fall back.
        const auto knows_op = [op](const kael_plugin* table) {
            return KAEL_HAS_SLOT(table, elementwise) &&
                   (op < KAEL_OP_GELU_EXACT_BACKWARD || table->abi_minor >= 2);
        };
        run("elementwise", {piece}, sources, knows_op,
            [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
                const kael_element_layout layout = element_layout(outs[0], ins);
                backend.check(backend.table()->elementwise(device, op, abi(outs[0].dtype()),
                                                           abi(in_dtype), &layout, &params),
                              "elementwise");
            },
            Aliasing::SameElements);
    });
}

// A plugin serves op when it has the slot and knows the op: variance arrived in ABI 1.2, so
// older plugins fall back to the cpu plugin (counted) rather than receive an unknown value.
namespace {
template <typename HasSlot>
auto knows_reduce_op(kael_reduce_op op, HasSlot has_slot) {
    return [op, has_slot](const kael_plugin* table) {
        return has_slot(table) && (op < KAEL_REDUCE_VARIANCE || table->abi_minor >= 2);
    };
}
}  // namespace

void reduce(kael_reduce_op op, const Tensor& out, const Tensor& input, std::int64_t chunk_size,
            std::int64_t rows) {
    if (rows == 0) {
        return;
    }
    run("reduce", {out}, {input}, knows_reduce_op(op, KAEL_SLOT_CHECK(reduce)),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->reduce(device, op, abi(outs[0].dtype()),
                                                  abi(ins[0].dtype()), outs[0].device_data(),
                                                  ins[0].device_data(), chunk_size, rows),
                          "reduce");
        });
}

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, const kael_matmul_sizes& sizes) {
    if (out.numel() == 0) {
        return;
    }
    run("matmul", {out}, {a, b}, KAEL_SLOT_CHECK(matmul),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->matmul(device, abi(outs[0].dtype()),
                                                  ins[0].device_data(), ins[1].device_data(),
                                                  outs[0].device_data(), &sizes),
                          "matmul");
        });
}

void matmul_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                 const kael_matmul_sizes& sizes) {
    if (out.numel() == 0) {
        return;
    }
    if (!KAEL_HAS_SLOT(backend_for(out.device()).table(), matmul_bias)) {
        matmul(out, a, b, sizes);
        elementwise(KAEL_OP_PLUS, out, {out, bias}, out.dtype(), no_params());
        return;
    }
    run("matmul_bias", {out}, {a, b, bias}, KAEL_SLOT_CHECK(matmul_bias),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->matmul_bias(device, abi(outs[0].dtype()),
                                                       ins[0].device_data(), ins[1].device_data(),
                                                       ins[2].device_data(), outs[0].device_data(),
                                                       &sizes),
                          "matmul_bias");
        });
}

void gather(const Tensor& out, const Tensor& data, const Tensor& index,
            const kael_index_layout& layout) {
    if (out.numel() == 0) {
        return;
    }
    run("gather", {out}, {data, index}, KAEL_SLOT_CHECK(gather),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->gather(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              ins[0].device_data(),
                              static_cast<const std::int64_t*>(ins[1].device_data()), &layout),
                          "gather");
        });
}

void scatter_add(const Tensor& data, const Tensor& index, const Tensor& source,
                 const kael_index_layout& layout) {
    if (index.numel() == 0) {
        return;
    }
    run("scatter_add", {data}, {index, source}, KAEL_SLOT_CHECK(scatter_add),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->scatter_add(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              static_cast<const std::int64_t*>(ins[0].device_data()),
                              ins[1].device_data(), &layout),
                          "scatter_add");
        });
}

void check_indices(const Tensor& index, std::int64_t low, std::int64_t high, std::int64_t axis,
                   const char* op, const char* what) {
    if (index.numel() == 0) {
        return;
    }
    const NoGradGuard no_grad;
    const Tensor contiguous = index.contiguous();
    const auto call = [&](const Backend& backend, int device, const Tensor& indices) {
        backend.check(backend.table()->check_indices(
                          device, static_cast<const std::int64_t*>(indices.device_data()),
                          indices.numel(), low, high, axis, op, what),
                      "check_indices");
    };
    const Backend& backend = backend_for(contiguous.device());
    if (KAEL_HAS_SLOT(backend.table(), check_indices)) {
        call(backend, contiguous.device().index, contiguous);
        return;
    }
    const Backend& host = cpu_backend();
    if (!KAEL_HAS_SLOT(host.table(), check_indices)) {
        throw TypeError("no plugin implements 'check_indices' (not even cpu)");
    }
    count_fallback(backend, "check_indices");
    call(host, 0, contiguous.to(kCPU));
}

void sort(const Tensor& values, const Tensor& indices, const Tensor& input,
          std::int64_t chunk_size, std::int64_t rows, bool descending) {
    if (chunk_size == 0 || rows == 0) {
        return;
    }
    run("sort", {values, indices}, {input}, KAEL_SLOT_CHECK(sort),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->sort(
                              device, abi(ins[0].dtype()), outs[0].device_data(),
                              static_cast<std::int64_t*>(outs[1].device_data()),
                              ins[0].device_data(), chunk_size, rows, descending ? 1 : 0),
                          "sort");
        });
}

void topk(const Tensor& values, const Tensor& indices, const Tensor& input,
          std::int64_t chunk_size, std::int64_t rows, std::int64_t k, bool largest) {
    if (k == 0 || rows == 0) {
        return;
    }
    run("topk", {values, indices}, {input}, KAEL_SLOT_CHECK(topk),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->topk(
                              device, abi(ins[0].dtype()), outs[0].device_data(),
                              static_cast<std::int64_t*>(outs[1].device_data()),
                              ins[0].device_data(), chunk_size, rows, k, largest ? 1 : 0),
                          "topk");
        });
}

void cumsum(const Tensor& out, const Tensor& input, std::int64_t chunk_size, std::int64_t rows) {
    if (chunk_size == 0 || rows == 0) {
        return;
    }
    run("cumsum", {out}, {input}, KAEL_SLOT_CHECK(cumsum),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->cumsum(device, abi(outs[0].dtype()),
                                                  abi(ins[0].dtype()), outs[0].device_data(),
                                                  ins[0].device_data(), chunk_size, rows),
                          "cumsum");
        });
}

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

}  // namespace

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
        });
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
                              device, abi(grad_out.dtype()), data_at(outs, out[0]),
                              data_at(outs, out[1]), data_at(outs, out[2]),
                              data_at(ins, in[0]), data_at(ins, in[1]), data_at(ins, in[2]),
                              data_at(ins, in[3]), data_at(ins, in[4]), rows, columns),
                          "layer_norm_backward");
        });
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
        });
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
        });
}

void adam(const Tensor& param, const Tensor& m, const Tensor& v, const Tensor& grad,
          const kael_adam_params& params) {
    if (param.numel() == 0) {
        return;
    }
    run("adam", {param, m, v}, {grad}, KAEL_SLOT_CHECK(adam),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->adam(device, abi(outs[0].dtype()), outs[0].device_data(),
                                                outs[1].device_data(), outs[2].device_data(),
                                                ins[0].device_data(), outs[0].numel(), &params),
                          "adam");
        });
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
    run("reduce_dims", {out}, {block}, knows_reduce_op(op, KAEL_SLOT_CHECK(reduce_dims)),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->reduce_dims(device, op, abi(outs[0].dtype()),
                                                       abi(ins[0].dtype()), outs[0].device_data(),
                                                       ins[0].device_data(), outer, size, inner),
                          "reduce_dims");
        });
}

void attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k,
               const Tensor& v, double scale, bool causal) {
    if (out.numel() == 0) {
        return;
    }
    run("attention", {out, lse}, {q, k, v}, KAEL_SLOT_CHECK(attention),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            const kael_attention_layout layout =
                attention_layout(ins[0], ins[1], ins[2], outs[0], scale, causal);
            backend.check(backend.table()->attention(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              outs[1].device_data(), ins[0].device_data(), ins[1].device_data(),
                              ins[2].device_data(), &layout),
                          "attention");
        });
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
        });
}

}  // namespace kael::detail
