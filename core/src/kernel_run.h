#pragma once
// How the kernel_calls*.cpp files reach a plugin: run() calls the device's slot, or the cpu
// plugin over host copies (counted) when that plugin lacks it, after unaliasing inputs that
// share memory with an output.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "backend.h"
#include "kael/tensor.h"

namespace kael::detail {

// Host copies of device storages for one fallback call: tensors over one storage (dq, dk, dv
// in one buffer; an output and its in-place input) share one copy, which is written back once.
class HostMirrors {
public:
    // A cpu tensor with tensor's view over the host copy of its whole storage.
    Tensor mirror(const Tensor& tensor);
    // Copies each mirrored storage of these tensors back over the original, once each.
    void write_back(std::span<const Tensor> originals) const;

private:
    std::vector<std::pair<Storage*, std::shared_ptr<Storage>>> copies_;
};

// How an input may share memory with an output: elementwise kernels may read each element where
// they then write it; other kernels read inputs while outputs are written anywhere.
enum class Aliasing { SameElements, None };

// A fresh copy of input when it shares memory with an output in a way the kernel cannot handle,
// so every device (and the backwards-running emulator) computes what sequential code would;
// nothing when input can be used as it is.
std::optional<Tensor> unaliased(const Tensor& input, std::span<const Tensor> outputs,
                                Aliasing allowed);

// bfloat16 and float16, and the narrow integers (low_precision_calls.cpp). Only the convert and
// fill slots get them, of plugins that set KAEL_DTYPE_FLAG_LOW_PRECISION (bf16, f16) or
// KAEL_DTYPE_FLAG_NARROW_INT (i32, i16, i8, u8); otherwise, or when the plugin declines, the cpu
// plugin runs the call over host copies. Every other call with them runs in their compute dtype
// (f32, i64): each such operand becomes a wide twin on its device (through convert), the call
// runs over the twins (falling back as any call), and the outputs' twins are narrowed back,
// once, as PyTorch rounds what it computes in f32 and wraps its integer arithmetic.
// The KAEL_DTYPE_FLAG_* bits a plugin needs to take these operands as stored; 0: none is narrow.
std::uint32_t stored_dtype_flags(std::span<const Tensor> outputs, std::span<const Tensor> inputs);
// Whether the plugin's dtype_flags has every bit of flags (KAEL_DTYPE_FLAG_*).
bool has_dtype_flags(const kael_plugin* table, std::uint32_t flags);
bool computes_low_precision(const kael_plugin* table);
// Twins in compute_dtype() of the narrow tensors (the others as they are). keep_values false:
// outputs the slot writes whole without reading (their twins start empty).
std::vector<Tensor> widened(std::span<const Tensor> tensors, bool keep_values = true);
void narrow_into(std::span<const Tensor> outputs, std::span<const Tensor> twins);
// A dtype a call names beside its operands (elementwise's input dtype), as the plugin must see it:
// its compute dtype when no operand has it any more (the call was widened).
DType as_called(DType dtype, std::span<const Tensor> operands);
// Widen: in f32 twins; WidenWriteOnly: the same, for slots that write every element of their
// outputs and read none (elementwise, reduce, matmul), whose output twins are not filled first;
// Native: passed as they are (fill, convert).
enum class LowPrecision { Widen, WidenWriteOnly, Native };

// How one slot takes low-precision operands: as they are where the plugin's dtype_flags has
// native_flag (0: never), else as `otherwise` says; a plugin that then declines the call gets
// it widened, not sent to the cpu plugin.
struct LowPrecisionUse {
    LowPrecision otherwise;
    std::uint32_t native_flag = 0;
    LowPrecisionUse(LowPrecision mode, std::uint32_t flag = 0)  // NOLINT: implicit by design
        : otherwise(mode), native_flag(flag) {}
};

// Runs call(backend, device index, outputs, inputs) on the tensors' device, or on the cpu plugin
// over host mirrors when the device's plugin lacks the slot or returns KAEL_STATUS_UNSUPPORTED;
// outputs are written back after a fallback. A template, not std::function: this runs for every op,
// ~400 times per decoded token.
template <typename HasSlot, typename Call>
void run(const char* slot, std::span<const Tensor> outputs, std::span<const Tensor> given_inputs,
         HasSlot has_slot, const Call& call, Aliasing allowed = Aliasing::None,
         LowPrecisionUse low_precision = LowPrecision::Widen) {
    // The inputs are copied only when one must be unaliased (rare).
    std::vector<Tensor> unaliased_inputs;
    for (std::size_t i = 0; i < given_inputs.size(); ++i) {
        if (std::optional<Tensor> copy = unaliased(given_inputs[i], outputs, allowed)) {
            if (unaliased_inputs.empty()) {
                unaliased_inputs.assign(given_inputs.begin(), given_inputs.end());
            }
            unaliased_inputs[i] = std::move(*copy);
        }
    }
    const std::span<const Tensor> inputs =
        unaliased_inputs.empty() ? given_inputs : std::span<const Tensor>(unaliased_inputs);
    const Device device = outputs.front().device();
    // The plugin that allocated the output serves the call (what backend_for(device) returns,
    // without the registry lookup).
    const Backend& backend = outputs.front().impl().storage->backend();
    // Every write into a tensor passes here, so autograd's saved tensors see every in-place op
    // (on any view of the storage), including ones run without grad such as optimizer steps.
    for (const Tensor& output : outputs) {
        output.impl().storage->bump_version();
    }
    const std::uint32_t stored_flags = stored_dtype_flags(outputs, inputs);
    const bool low = stored_flags != 0;
    const auto run_widened = [&] {
        const std::vector<Tensor> wide_outputs =
            widened(outputs, low_precision.otherwise == LowPrecision::Widen);
        run(slot, std::span<const Tensor>(wide_outputs), widened(inputs), has_slot, call);
        narrow_into(outputs, wide_outputs);
    };
    // The native_flag families take bf16/f16 only: narrow integers are always widened there.
    const bool native_by_flag = stored_flags == KAEL_DTYPE_FLAG_LOW_PRECISION &&
                                low_precision.native_flag != 0 &&
                                has_dtype_flags(backend.table(), low_precision.native_flag);
    if (low && low_precision.otherwise != LowPrecision::Native && !native_by_flag) {
        return run_widened();
    }
    if (has_slot(backend.table()) &&
        (!low || native_by_flag || has_dtype_flags(backend.table(), stored_flags))) {
        try {
            call(backend, device.index, outputs, inputs);
            return;
        } catch (const UnsupportedByPlugin&) {
            // The plugin has the slot but not this op, dtype or layout: the cpu plugin runs it,
            // counted as a missing slot is (the slot must not have written anything).
            if (native_by_flag) {
                return run_widened();
            }
            if (&backend == &cpu_backend()) {
                throw;
            }
        }
    } else if (native_by_flag) {
        return run_widened();
    }
    const Backend& host = cpu_backend();
    if (!has_slot(host.table())) {
        throw_missing_on_cpu(host, slot);
    }
    HostMirrors mirrors;
    std::vector<Tensor> host_outputs;
    std::vector<Tensor> host_inputs;
    for (const Tensor& output : outputs) {
        host_outputs.push_back(mirrors.mirror(output));
    }
    for (const Tensor& input : inputs) {
        host_inputs.push_back(mirrors.mirror(input));
    }
    count_fallback(backend, slot);
    call(host, 0, std::span<const Tensor>(host_outputs), std::span<const Tensor>(host_inputs));
    mirrors.write_back(outputs);
}

// run() for outputs or inputs written as braced lists ({out}, {a, b}) or vectors.
template <typename HasSlot, typename Call>
void run(const char* slot, std::initializer_list<Tensor> outputs, std::span<const Tensor> inputs,
         HasSlot has_slot, const Call& call, Aliasing allowed = Aliasing::None,
         LowPrecisionUse low_precision = LowPrecision::Widen) {
    run(slot, std::span<const Tensor>(outputs.begin(), outputs.size()), inputs, has_slot, call,
        allowed, low_precision);
}
template <typename HasSlot, typename Call>
void run(const char* slot, std::initializer_list<Tensor> outputs, const std::vector<Tensor>& inputs,
         HasSlot has_slot, const Call& call, Aliasing allowed = Aliasing::None,
         LowPrecisionUse low_precision = LowPrecision::Widen) {
    run(slot, std::span<const Tensor>(outputs.begin(), outputs.size()),
        std::span<const Tensor>(inputs), has_slot, call, allowed, low_precision);
}
template <typename HasSlot, typename Call>
void run(const char* slot, std::span<const Tensor> outputs, const std::vector<Tensor>& inputs,
         HasSlot has_slot, const Call& call, Aliasing allowed = Aliasing::None) {
    run(slot, outputs, std::span<const Tensor>(inputs), has_slot, call, allowed);
}

#define KAEL_SLOT_CHECK(slot) [](const kael_plugin* table) { return KAEL_HAS_SLOT(table, slot); }

// The ABI minor an op arrived in, from the op tables' since column; 0 for an invalid op, which
// the plugin then refuses.
inline std::uint32_t since_minor(kael_element_op op) {
    switch (op) {
#define KAEL_ELEMENT_OP_SINCE(op, value, name, inputs, in, out, params, since) \
    case KAEL_OP_##op: return since;
        KAEL_ELEMENT_OPS(KAEL_ELEMENT_OP_SINCE)
#undef KAEL_ELEMENT_OP_SINCE
        default: return 0;
    }
}
inline std::uint32_t reduce_since_minor(kael_reduce_op op) {
    switch (op) {
#define KAEL_REDUCE_OP_SINCE(op, value, name, in, out, empty, since) \
    case KAEL_REDUCE_##op: return since;
        KAEL_REDUCE_OPS(KAEL_REDUCE_OP_SINCE)
#undef KAEL_REDUCE_OP_SINCE
        default: return 0;
    }
}

// A plugin serves op when it has the slot and knows the op: one built before the op arrived
// (an older minor without variance) falls back to the cpu plugin (counted) rather than get an unknown value.
template <typename HasSlot>
auto knows_reduce_op(kael_reduce_op op, HasSlot has_slot) {
    return [op, has_slot](const kael_plugin* table) {
        return has_slot(table) && table->abi_minor >= reduce_since_minor(op);
    };
}

}  // namespace kael::detail
