#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "cpu_kernels.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

using kernels::load_element;
using kernels::Storage;
using kernels::store_element;

constexpr int64_t kMinParallelElements = int64_t{1} << 16;

// Walks elements [begin, end) of the layout as runs along the innermost dimension. An N-d
// counter carries between runs, so there is one division per call, not one per element.
template <typename Span>
void for_each_span(const kael_element_layout& layout, int64_t begin, int64_t end, Span&& span) {
    const int operands = layout.operands;
    std::byte* pointers[KAEL_MAX_OPERANDS];
    int64_t inner_strides[KAEL_MAX_OPERANDS] = {};
    for (int op = 0; op < operands; ++op) {
        pointers[op] = static_cast<std::byte*>(layout.base[op]);
    }
    if (layout.dims == 0) {
        span(pointers, inner_strides, int64_t{1});
        return;
    }
    const int inner = layout.dims - 1;
    int64_t coord[KAEL_MAX_DIMS] = {};
    int64_t remaining = begin;
    for (int dim = inner; dim >= 0; --dim) {
        coord[dim] = remaining % layout.shape[dim];
        remaining /= layout.shape[dim];
        for (int op = 0; op < operands; ++op) {
            pointers[op] += coord[dim] * layout.strides[op][dim];
        }
    }
    for (int op = 0; op < operands; ++op) {
        inner_strides[op] = layout.strides[op][inner];
    }
    int64_t position = begin;
    while (position < end) {
        const int64_t run = std::min(layout.shape[inner] - coord[inner], end - position);
        span(pointers, inner_strides, run);
        position += run;
        if (position >= end) {
            break;
        }
        coord[inner] += run;
        for (int op = 0; op < operands; ++op) {
            pointers[op] += run * inner_strides[op];
        }
        for (int dim = inner; dim > 0 && coord[dim] == layout.shape[dim]; --dim) {
            coord[dim] = 0;
            ++coord[dim - 1];
            for (int op = 0; op < operands; ++op) {
                pointers[op] +=
                    layout.strides[op][dim - 1] - layout.shape[dim] * layout.strides[op][dim];
            }
        }
    }
}

template <typename Out, typename... Ins, typename F, size_t... Input>
void inner_loop(std::byte* const* pointers, const int64_t* strides, int64_t count,
                const F& function, std::index_sequence<Input...>) {
    const bool contiguous = strides[0] == int64_t{sizeof(Storage<Out>)} &&
                            ((strides[Input + 1] == int64_t{sizeof(Storage<Ins>)}) && ...);
    std::byte* const out = pointers[0];
    if (contiguous) {
        // Constant strides let the compiler vectorize this loop.
        for (int64_t i = 0; i < count; ++i) {
            store_element<Out>(out + i * int64_t{sizeof(Storage<Out>)},
                               function(load_element<Ins>(pointers[Input + 1] +
                                                          i * int64_t{sizeof(Storage<Ins>)})...));
        }
        return;
    }
    for (int64_t i = 0; i < count; ++i) {
        store_element<Out>(
            out + i * strides[0],
            function(load_element<Ins>(pointers[Input + 1] + i * strides[Input + 1])...));
    }
}

struct LayoutRunner {
    const kael_element_layout& layout;

    template <typename Out, typename... Ins, typename F>
    void run(const F& function) const {
        const auto walk = [&](int64_t begin, int64_t end) {
            for_each_span(layout, begin, end,
                          [&](std::byte* const* pointers, const int64_t* strides, int64_t count) {
                              inner_loop<Out, Ins...>(pointers, strides, count, function,
                                                      std::index_sequence_for<Ins...>{});
                          });
        };
        parallel_ranges(layout.count, kMinParallelElements, walk);
    }
};

}  // namespace

kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value) {
    return plugin::guarded("cpu.fill", [&] {
        check_device(device);
        if (count < 0) {
            plugin::invalid("negative fill count " + std::to_string(count));
        }
        if (value == nullptr || value->struct_size < sizeof(kael_element_params)) {
            plugin::invalid("fill value is null or its struct_size too small");
        }
        if (count > 0 && target == nullptr) {
            plugin::invalid("fill target is null");
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            const T element = kernels::element_param<T>(*value, 0);
            Storage<T> stored{};
            store_element<T>(&stored, element);
            std::fill_n(static_cast<Storage<T>*>(target), count, stored);
        });
    });
}

kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout) {
    return plugin::guarded("cpu.convert", [&] {
        check_device(device);
        kernels::check_element_layout(layout);
        LayoutRunner runner{*layout};
        kernels::dispatch_convert(out_dtype, in_dtype, layout->operands, runner);
    });
}

kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params) {
    return plugin::guarded("cpu.elementwise", [&] {
        check_device(device);
        kernels::check_element_layout(layout);
        LayoutRunner runner{*layout};
        kernels::dispatch_elementwise(op, out_dtype, in_dtype, layout->operands, params, runner);
    });
}

}  // namespace kael::cpu
