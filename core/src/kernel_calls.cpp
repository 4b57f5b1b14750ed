#include "kernel_calls.h"

#include <algorithm>

#include <initializer_list>
#include <optional>
#include <span>

#include "backend.h"
#include "kael/autograd.h"
#include "kael/ops_linalg.h"
#include "kael/tensor_iterator.h"
#include "kernel_run.h"
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

void check_same_device(std::span<const Tensor> tensors, const char* op) {
    for (const Tensor& tensor : tensors) {
        if (tensor.device() != tensors.front().device()) {
            const Device& first = tensors.front().device();
            const Device& other = tensor.device();
            // Name types when they differ ("cpu and cuda"), indices when only they do.
            const bool same_type = first.type_id() == other.type_id();
            throw DeviceError(std::string(op) +
                              ": expected all tensors to be on the same device, but found " +
                              (same_type ? first.str() : first.type()) + " and " +
                              (same_type ? other.str() : other.type()));
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
        // Host-addressable memory is read directly, once its own device's queued work is done.
        from.synchronize(source_device.index);
        to.copy_to_device(target_device.index, target, source, bytes);
    } else if (to.host_addressable()) {
        to.synchronize(target_device.index);
        from.copy_to_host(source_device.index, target, source, bytes);
    } else {
        std::vector<std::byte> staging(static_cast<std::size_t>(bytes));
        from.copy_to_host(source_device.index, staging.data(), source, bytes);
        to.copy_to_device(target_device.index, target, staging.data(), bytes);
    }
}

Tensor HostMirrors::mirror(const Tensor& tensor) {
    Storage* const storage = tensor.impl().storage.get();
    auto found = std::find_if(copies_.begin(), copies_.end(),
                              [storage](const auto& copy) { return copy.first == storage; });
    if (found == copies_.end()) {
        auto copy = std::make_shared<Storage>(storage->nbytes(), kCPU);
        transfer(copy->data(), kCPU, storage->data(), storage->device(), storage->nbytes());
        found = copies_.emplace(copies_.end(), storage, std::move(copy));
    }
    auto impl = std::make_shared<TensorImpl>(tensor.impl());
    impl->storage = found->second;
    return Tensor(std::move(impl));
}

void HostMirrors::write_back(std::span<const Tensor> originals) const {
    std::vector<const Storage*> written;
    for (const Tensor& original : originals) {
        Storage* const storage = original.impl().storage.get();
        if (std::find(written.begin(), written.end(), storage) != written.end()) {
            continue;
        }
        written.push_back(storage);
        for (const auto& [mirrored, copy] : copies_) {
            if (mirrored == storage) {
                transfer(storage->data(), storage->device(), copy->data(), kCPU,
                         storage->nbytes());
            }
        }
    }
}

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

void fill(const Tensor& out, const kael_element_params& value) {
    if (out.numel() == 0) {
        return;
    }
    run("fill", std::span<const Tensor>(&out, 1), std::span<const Tensor>(), KAEL_SLOT_CHECK(fill),
        [&](const Backend& backend, int device, const auto& outs, const auto&) {
            backend.check(backend.table()->fill(device, abi(outs[0].dtype()),
                                                outs[0].device_data(), outs[0].numel(), &value),
                          "fill");
        },
        Aliasing::None, LowPrecision::Native);
}

namespace {

// Runs launch(out, inputs) over pieces of at most KAEL_MAX_DIMS merged dimensions: beyond that
// the outermost dimension is walked here, one slice per call.
template <typename Launch>
void split_for_layout(const Tensor& out, std::span<const Tensor> inputs, const Launch& launch) {
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
    // Plugins convert a narrow integer only to itself or a compute dtype: other pairs go through
    // i64 (exact for every integer) or f32 (which a bf16/f16 side rounds through anyway).
    const DType to = out.dtype();
    const DType from = input.dtype();
    if (to != from && (is_narrow_int(to) || is_narrow_int(from)) &&
        compute_dtype(to) != to && compute_dtype(from) != from) {
        const NoGradGuard no_grad;
        const Tensor middle = empty(input.shape(), compute_dtype(is_narrow_int(to) ? from : to),
                                    input.device());
        convert(middle, input);
        convert(out, middle);
        return;
    }
    split_for_layout(out, std::span<const Tensor>(&input, 1), [](const Tensor& piece,
                                                                 std::span<const Tensor> sources) {
        run("convert", std::span<const Tensor>(&piece, 1), sources, KAEL_SLOT_CHECK(convert),
            [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
                const kael_element_layout layout = element_layout(outs[0], ins.first(1));
                backend.check(backend.table()->convert(device, abi(outs[0].dtype()),
                                                       abi(ins[0].dtype()), &layout),
                              "convert");
            },
            Aliasing::SameElements, LowPrecision::Native);
    });
}

void elementwise(kael_element_op op, const Tensor& out, std::span<const Tensor> inputs,
                 DType in_dtype, const kael_element_params& params) {
    if (out.numel() == 0) {
        return;
    }
    split_for_layout(out, inputs, [&](const Tensor& piece, std::span<const Tensor> sources) {
        // An op reaches only plugins built since it arrived (gelu backward: 1.2); older ones
        // fall back.
        const auto knows_op = [op](const kael_plugin* table) {
            return KAEL_HAS_SLOT(table, elementwise) && table->abi_minor >= since_minor(op);
        };
        run("elementwise", std::span<const Tensor>(&piece, 1), sources, knows_op,
            [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
                const kael_element_layout layout = element_layout(outs[0], ins);
                backend.check(backend.table()->elementwise(device, op, abi(outs[0].dtype()),
                                                           abi(as_called(in_dtype, ins)), &layout,
                                                           &params),
                              "elementwise");
            },
            Aliasing::SameElements,
            LowPrecisionUse{LowPrecision::WidenWriteOnly,
                            KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE});
    });
}


void reduce(kael_reduce_op op, const Tensor& out, const Tensor& input, std::int64_t chunk_size,
            std::int64_t rows) {
    if (rows == 0) {
        return;
    }
    run(
        "reduce", {out}, {input}, knows_reduce_op(op, KAEL_SLOT_CHECK(reduce)),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->reduce(device, op, abi(outs[0].dtype()),
                                                  abi(ins[0].dtype()), outs[0].device_data(),
                                                  ins[0].device_data(), chunk_size, rows),
                          "reduce");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, reduce_low_precision_flags(out, input)});
}

std::uint32_t reduce_low_precision_flags(const Tensor& out, const Tensor& in) {
    if (is_low_precision(out.dtype()) && in.dtype() == DType::F32) {
        return KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE | KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS;
    }
    return KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE;
}

namespace {

static_assert(static_cast<int>(MatmulPrecision::High) == KAEL_MATMUL_PRECISION_HIGH &&
              static_cast<int>(MatmulPrecision::Medium) == KAEL_MATMUL_PRECISION_MEDIUM);

// The sizes as the plugin sees them: an f32 product with the process's matmul precision; a
// bf16/f16 one widened to f32 may use TF32, which holds their mantissas exactly.
kael_matmul_sizes with_precision(kael_matmul_sizes sizes, DType dtype) {
    sizes.struct_size = sizeof(sizes);
    sizes.precision = dtype == DType::F32 ? static_cast<std::int32_t>(float32_matmul_precision())
                      : is_low_precision(dtype) ? KAEL_MATMUL_PRECISION_HIGH
                                                : KAEL_MATMUL_PRECISION_HIGHEST;
    sizes.reserved = 0;
    return sizes;
}

// Low-precision products go to plugins that multiply them natively, else run in f32 twins.
const LowPrecisionUse kMatmulLow{LowPrecision::WidenWriteOnly,
                                 KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL};

}  // namespace

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, const kael_matmul_sizes& sizes) {
    if (out.numel() == 0) {
        return;
    }
    run("matmul", {out}, {a, b}, KAEL_SLOT_CHECK(matmul),
        [&, called = with_precision(sizes, out.dtype())](const Backend& backend, int device,
                                                         const auto& outs, const auto& ins) {
            backend.check(backend.table()->matmul(device, abi(outs[0].dtype()),
                                                  ins[0].device_data(), ins[1].device_data(),
                                                  outs[0].device_data(), &called),
                          "matmul");
        },
        Aliasing::None, kMatmulLow);
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
        [&, called = with_precision(sizes, out.dtype())](const Backend& backend, int device,
                                                         const auto& outs, const auto& ins) {
            backend.check(backend.table()->matmul_bias(device, abi(outs[0].dtype()),
                                                       ins[0].device_data(), ins[1].device_data(),
                                                       ins[2].device_data(), outs[0].device_data(),
                                                       &called),
                          "matmul_bias");
        },
        Aliasing::None, kMatmulLow);
}

void matmul_epilogue(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                     const Tensor& residual, const kael_matmul_sizes& sizes,
                     std::int32_t activation) {
    if (out.numel() == 0) {
        return;
    }
    if (!KAEL_HAS_SLOT(backend_for(out.device()).table(), matmul_epilogue)) {
        if (bias.defined()) {
            matmul_bias(out, a, b, bias, sizes);
        } else {
            matmul(out, a, b, sizes);
        }
        if (activation == KAEL_ACTIVATION_GELU_TANH) {
            elementwise(KAEL_OP_GELU_TANH, out, {out}, out.dtype(), no_params());
        }
        if (residual.defined()) {
            elementwise(KAEL_OP_PLUS, out, {out, residual}, out.dtype(), no_params());
        }
        return;
    }
    std::vector<Tensor> inputs{a, b};
    for (const Tensor* optional : {&bias, &residual}) {
        if (optional->defined()) {
            inputs.push_back(*optional);
        }
    }
    run("matmul_epilogue", {out}, inputs, KAEL_SLOT_CHECK(matmul_epilogue),
        [&, called = with_precision(sizes, out.dtype())](const Backend& backend, int device,
                                                         const auto& outs, const auto& ins) {
            const void* bias_data = bias.defined() ? ins[2].device_data() : nullptr;
            const void* residual_data =
                residual.defined() ? ins[bias.defined() ? 3 : 2].device_data() : nullptr;
            backend.check(
                backend.table()->matmul_epilogue(device, abi(outs[0].dtype()), ins[0].device_data(),
                                                 ins[1].device_data(), bias_data, residual_data,
                                                 outs[0].device_data(), &called, activation),
                "matmul_epilogue");
        },
        Aliasing::None, kMatmulLow);
}

}  // namespace kael::detail
