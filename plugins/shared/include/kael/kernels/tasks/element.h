#pragma once
// Elementwise tasks: one work item per element of a strided layout, through the shared functors
// and the shared (op, dtype) dispatch. Fill writes one value into contiguous memory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// Addresses of every operand of element `element`: coordinates innermost first, byte offsets in
// 64-bit arithmetic (a device has no previous element to carry a counter from).
KAEL_HD inline void locate(const kael_element_layout& layout, std::int64_t element,
                           std::byte** pointers) {
    std::int64_t offsets[KAEL_MAX_OPERANDS] = {};
    std::int64_t remaining = element;
    for (int dim = layout.dims - 1; dim >= 0; --dim) {
        const std::int64_t position = remaining % layout.shape[dim];
        remaining /= layout.shape[dim];
        for (int operand = 0; operand < layout.operands; ++operand) {
            offsets[operand] += position * layout.strides[operand][dim];
        }
    }
    for (int operand = 0; operand < layout.operands; ++operand) {
        pointers[operand] = static_cast<std::byte*>(layout.base[operand]) + offsets[operand];
    }
}

// operand 0 (Out) = function(operand 1 (Ins[0]), operand 2 (Ins[1]), ...).
template <typename Out, typename F, typename... Ins>
struct Element {
    kael_element_layout layout;
    F function;

    KAEL_HD void operator()(std::int64_t item) const {
        apply(item, std::index_sequence_for<Ins...>{});
    }

    template <std::size_t... Input>
    KAEL_HD void apply(std::int64_t item, std::index_sequence<Input...> /*inputs*/) const {
        std::byte* pointers[KAEL_MAX_OPERANDS];
        locate(layout, item, pointers);
        store_element<Out>(pointers[0], function(load_element<Ins>(pointers[Input + 1])...));
    }
};

template <typename T>
struct Fill {
    Storage<T>* target;
    T value;

    KAEL_HD void operator()(std::int64_t item) const { store_element<T>(target + item, value); }
};

// The runner element_dispatch.h expects: one Element task per call, one item per element.
template <typename Launcher>
struct ElementRunner {
    kael_element_layout layout;

    template <typename Out, typename... Ins, typename F>
    void run(const F& function) const {
        Launcher::for_each(layout.count, Element<Out, F, Ins...>{layout, function});
    }
};

// The fill slot's checks, for every plugin (the cpu plugin fills with its own loop).
inline void check_fill_call(void* target, std::int64_t count, const kael_element_params* value) {
    if (count < 0) {
        plugin::invalid("negative fill count " + std::to_string(count));
    }
    if (value == nullptr || value->struct_size < KAEL_ELEMENT_PARAMS_SIZE_1_0) {
        plugin::invalid("fill value is null or its struct_size too small");
    }
    if (count > 0 && target == nullptr) {
        plugin::invalid("fill target is null");
    }
}

// The fill slot's value as T: a low-precision dtype rounds the f32 value.
template <typename T>
T fill_value(const kael_element_params& value) {
    if constexpr (is_low_precision_v<T>) {
        return from_float<T>(element_param<float>(value, 0));
    } else {
        return element_param<T>(value, 0);
    }
}

// kLowPrecision: the plugin also fills bfloat16 and float16; kNarrowInt: int32, int16, int8
// and uint8 (else it declines them).
template <typename Launcher, bool kLowPrecision = false, bool kNarrowInt = false>
void launch_fill(kael_dtype dtype, void* target, std::int64_t count,
                 const kael_element_params* value) {
    check_fill_call(target, count, value);
    const auto fill = [&](auto tag) {
        using T = TagType<decltype(tag)>;
        Launcher::for_each(count, Fill<T>{static_cast<Storage<T>*>(target), fill_value<T>(*value)});
    };
    if constexpr (kNarrowInt) {
        if (is_narrow_int(dtype)) {
            return with_narrow_int_dtype(dtype, fill);
        }
    }
    with_dtype_if<kLowPrecision>(dtype, fill);
}

// kLowPrecision: the plugin also converts to and from bfloat16 and float16; kNarrowInt: int32,
// int16, int8 and uint8.
template <typename Launcher, bool kLowPrecision = false, bool kNarrowInt = false>
void launch_convert(kael_dtype out_dtype, kael_dtype in_dtype, const kael_element_layout* layout) {
    check_element_layout(layout);
    ElementRunner<Launcher> runner{*layout};
    dispatch_convert<kLowPrecision, kNarrowInt>(out_dtype, in_dtype, layout->operands, runner);
}

// kLowPrecision: the plugin computes bf16 and f16 elementwise ops (dispatch_elementwise).
template <typename Launcher, bool kLowPrecision = false>
void launch_elementwise(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                        const kael_element_layout* layout, const kael_element_params* params) {
    check_element_layout(layout);
    ElementRunner<Launcher> runner{*layout};
    dispatch_elementwise<kLowPrecision>(op, out_dtype, in_dtype, layout->operands, params, runner);
}

}  // namespace kael::kernels::tasks
