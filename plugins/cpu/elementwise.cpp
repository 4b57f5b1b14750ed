#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "convert_low_precision.h"
#include "cpu_kernels.h"
#include "elementwise_math.h"
#include "elementwise_tiles.h"
#include "elementwise_wide_f32.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/element.h"
#include "unary_tables.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

using kernels::load_element;
using kernels::Storage;
using kernels::store_element;
using tiles::for_each_tile;
using tiles::kTile;
using tiles::TileWalk;
using tiles::transposing_dims;
using wide_f32::contiguous_f32_wide;
using wide_f32::kWideF32;
using wide_f32::kWideF32ToBool;

constexpr int64_t kMinParallelElements = int64_t{1} << 16;

// Walks elements [begin, end) of the layout as runs along the innermost dimension. An N-d
// counter carries between runs, so there is one division per call, not one per element. Whole
// runs that follow each other along the next dimension go to span together (rows of them, that
// dimension's strides in outer), so short runs pay the dispatch once per block: x + k of a
// [64, 128, 128] x and a [1, 128, 1] k is 8192 runs of 128, where the walk took a third.
template <typename Span>
void for_each_span(const kael_element_layout& layout, int64_t begin, int64_t end, Span&& span) {
    const int operands = layout.operands;
    std::byte* pointers[KAEL_MAX_OPERANDS];
    int64_t inner_strides[KAEL_MAX_OPERANDS] = {};
    for (int op = 0; op < operands; ++op) {
        pointers[op] = static_cast<std::byte*>(layout.base[op]);
    }
    if (layout.dims == 0) {
        span(pointers, inner_strides, int64_t{1}, int64_t{1}, inner_strides);
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
    int64_t outer_strides[KAEL_MAX_OPERANDS] = {};
    for (int op = 0; op < operands; ++op) {
        inner_strides[op] = layout.strides[op][inner];
        outer_strides[op] = inner > 0 ? layout.strides[op][inner - 1] : 0;
    }
    int64_t position = begin;
    while (position < end) {
        const int64_t run = std::min(layout.shape[inner] - coord[inner], end - position);
        int64_t rows = 1;
        if (inner > 0 && run == layout.shape[inner]) {
            rows = std::min((end - position) / run, layout.shape[inner - 1] - coord[inner - 1]);
        }
        span(pointers, inner_strides, run, rows, outer_strides);
        position += run * rows;
        if (position >= end) {
            break;
        }
        if (rows > 1) {  // to the last row's start; it then carries as a single run does
            coord[inner - 1] += rows - 1;
            for (int op = 0; op < operands; ++op) {
                pointers[op] += (rows - 1) * outer_strides[op];
            }
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

// A contiguous output whose inputs are contiguous or one repeated value each (a scalar or a
// broadcast dim: where(mask, 0.0, x), x * 2, x - x.amax(-1, keepdim=True)); repeats: which.
template <typename Out, typename... Ins, size_t... Input>
bool flat_or_repeated(const int64_t* strides, const bool* repeats, std::index_sequence<Input...>) {
    return strides[0] == int64_t{sizeof(Storage<Out>)} &&
           ((strides[Input + 1] == int64_t{sizeof(Storage<Ins>)} || repeats[Input]) && ...);
}

// One run that the wide f32 loops did not take (inner_rows tries them first): pow's vector
// loop, the contiguous loop, repeated inputs spelled out in chunks, or the strided loop.
template <typename Out, typename... Ins, typename F, size_t... Input>
void inner_loop(std::byte* const* pointers, const int64_t* strides, int64_t count,
                const F& function, std::index_sequence<Input...> inputs) {
    const bool contiguous = strides[0] == int64_t{sizeof(Storage<Out>)} &&
                            ((strides[Input + 1] == int64_t{sizeof(Storage<Ins>)}) && ...);
    std::byte* const out = pointers[0];
    const bool repeats[] = {strides[Input + 1] == 0 ...};
    const bool flat = flat_or_repeated<Out, Ins...>(strides, repeats, inputs);
    if constexpr (std::is_same_v<F, kernels::Power<float>>) {
        // libmvec's powf a vector at a time; the functor calls libm's per element (0.3-0.7 of
        // PyTorch's speed). Repeated operands reach here spelled out by the chunk path below.
        if (contiguous) {
            vector_math::power(reinterpret_cast<const float*>(pointers[1]),
                               reinterpret_cast<const float*>(pointers[2]),
                               reinterpret_cast<float*>(out), count);
            return;
        }
    }
    if (contiguous) {
        // Constant strides let the compiler vectorize this loop.
        for (int64_t i = 0; i < count; ++i) {
            store_element<Out>(out + i * int64_t{sizeof(Storage<Out>)},
                               function(load_element<Ins>(pointers[Input + 1] +
                                                          i * int64_t{sizeof(Storage<Ins>)})...));
        }
        return;
    }
    // Other functors: the repeated inputs are spelled out in an L1 buffer once, then the run
    // goes through the contiguous loop a chunk at a time.
    constexpr int64_t kChunk = 256;
    // Runs as short as a row broadcast against its reduced max (x - x.amax(-1, keepdim=True),
    // 128 elements) take this path too: the scalar loop below ran them at 0.3 of PyTorch's speed.
    if (flat && count >= 16) {
        alignas(64) std::byte repeated[sizeof...(Ins)][kChunk * sizeof(std::int64_t)];
        const int64_t flat_strides[] = {int64_t{sizeof(Storage<Out>)},
                                        int64_t{sizeof(Storage<Ins>)}...};
        const int64_t spelled = std::min(kChunk, count);
        (
            [&] {
                if (repeats[Input]) {  // a typed fill: vector stores, not a copy each
                    Storage<Ins> value;
                    std::memcpy(&value, pointers[Input + 1], sizeof value);
                    std::fill_n(reinterpret_cast<Storage<Ins>*>(repeated[Input]), spelled, value);
                }
            }(),
            ...);
        for (int64_t done = 0; done < count; done += kChunk) {
            std::byte* const chunk[] = {
                out + done * int64_t{sizeof(Storage<Out>)},
                (repeats[Input] ? repeated[Input]
                                : pointers[Input + 1] + done * int64_t{sizeof(Storage<Ins>)})...};
            inner_loop<Out, Ins...>(chunk, flat_strides, std::min(kChunk, count - done), function,
                                    std::index_sequence<Input...>{});
        }
        return;
    }
    for (int64_t i = 0; i < count; ++i) {
        store_element<Out>(
            out + i * strides[0],
            function(load_element<Ins>(pointers[Input + 1] + i * strides[Input + 1])...));
    }
}

// `rows` runs, each `outer` bytes after the last: the wide f32 loops take them all in one call
// (their test holds for every row alike), the others go to inner_loop a run at a time.
template <typename Out, typename... Ins, typename F, size_t... Input>
void inner_rows(std::byte* const* pointers, const int64_t* strides, int64_t count, int64_t rows,
                const int64_t* outer, const F& function, std::index_sequence<Input...> inputs) {
    if constexpr (kWideF32<F> || kWideF32ToBool<F>) {
        const bool repeats[] = {strides[Input + 1] == 0 ...};
        if (count >= 16 && flat_or_repeated<Out, Ins...>(strides, repeats, inputs) &&
            contiguous_f32_wide<F, Input...>(pointers, count, rows, outer, function, repeats)) {
            return;
        }
    }
    std::byte* run[] = {pointers[0], pointers[Input + 1]...};
    for (int64_t row = 0; row < rows; ++row) {
        inner_loop<Out, Ins...>(run, strides, count, function, inputs);
        run[0] += outer[0];
        ((run[Input + 1] += outer[Input + 1]), ...);
    }
}

struct LayoutRunner {
    const kael_element_layout& layout;

    template <typename Out, typename... Ins, typename F>
    void run(const F& function) const {
        const auto rows = [&](std::byte* const* pointers, const int64_t* strides, int64_t count,
                              int64_t row_count, const int64_t* outer) {
            inner_rows<Out, Ins...>(pointers, strides, count, row_count, outer, function,
                                    std::index_sequence_for<Ins...>{});
        };
        constexpr int64_t kItemSizes[] = {sizeof(Storage<Out>), sizeof(Storage<Ins>)...};
        if (const TileWalk tiles = transposing_dims(layout, kItemSizes); tiles.inner >= 0) {
            const int64_t count = layout.count / layout.shape[tiles.inner] /
                                  layout.shape[tiles.across] *
                                  ((layout.shape[tiles.across] + kTile - 1) / kTile) *
                                  ((layout.shape[tiles.inner] + kTile - 1) / kTile);
            parallel_ranges(count, kMinParallelElements / (kTile * kTile),
                            [&](int64_t begin, int64_t end) {
                                for_each_tile(layout, tiles, kItemSizes, begin, end, rows);
                            });
            return;
        }
        const auto walk = [&](int64_t begin, int64_t end) {
            for_each_span(layout, begin, end, rows);
        };
        parallel_ranges(layout.count, kMinParallelElements, walk);
    }
};

}  // namespace

kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value) {
    return plugin::guarded("cpu.fill", [&] {
        check_device(device);
        kernels::tasks::check_fill_call(target, count, value);
        const auto fill_with = [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            const T element = kernels::tasks::fill_value<T>(*value);
            Storage<T> stored{};
            store_element<T>(&stored, element);
            std::fill_n(static_cast<Storage<T>*>(target), count, stored);
        };
        if (kernels::is_narrow_int(dtype)) {
            kernels::with_narrow_int_dtype(dtype, fill_with);
        } else {
            kernels::with_storage_dtype(dtype, fill_with);
        }
    });
}

kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout) {
    return plugin::guarded("cpu.convert", [&] {
        check_device(device);
        kernels::check_element_layout(layout);
        if (run_low_precision_convert(out_dtype, in_dtype, *layout)) {
            return;
        }
        LayoutRunner runner{*layout};
        kernels::dispatch_convert<true, true>(out_dtype, in_dtype, layout->operands, runner);
    });
}

namespace {

constexpr int64_t kLowChunk = 8192;  // f32 scratch per operand: 32 KiB, all of them in L2

void run_f32(kael_element_op op, const kael_element_layout& layout,
             const kael_element_params* params) {
    if (!run_vector_math(op, KAEL_DTYPE_F32, KAEL_DTYPE_F32, layout) &&
        !run_activation_backward(op, KAEL_DTYPE_F32, KAEL_DTYPE_F32, layout)) {
        LayoutRunner runner{layout};
        kernels::dispatch_elementwise(op, KAEL_DTYPE_F32, KAEL_DTYPE_F32, layout.operands, params,
                                      runner);
    }
}

// The f32 kernel over values in place: the results unary_tables.cpp rounds into its tables.
void f32_in_place(kael_element_op op, float* values, int64_t count) {
    kael_element_layout layout{};
    layout.struct_size = sizeof layout;
    layout.dims = 1;
    layout.operands = 2;
    layout.count = count;
    layout.shape[0] = count;
    layout.strides[0][0] = layout.strides[1][0] = 4;
    layout.base[0] = layout.base[1] = values;
    run_f32(op, layout, nullptr);
}

// A bf16/f16 op over one contiguous run (inputs contiguous or broadcast) as PyTorch's CPU
// kernels compute it: chunks converted to f32 in L2-sized scratch (vector conversions), the f32
// kernel (vector math), the result rounded back once; each thread takes whole chunks; + - * /
// of two contiguous operands in registers. Others
// (strided, bool-writing, mixed dtypes) return false, declined, and the core widens them.
bool run_low_precision_chunks(kael_element_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                              const kael_element_layout& layout,
                              const kael_element_params* params) {
    // Masks are bool: only ops whose every operand has in_dtype come here.
    if (out_dtype != in_dtype || !kernels::inputs_share_dtype(op) || layout.dims != 1 ||
        layout.operands > 4 || layout.strides[0][0] != 2) {
        return false;
    }
    for (int operand = 1; operand < layout.operands; ++operand) {
        if (layout.strides[operand][0] != 2 && layout.strides[operand][0] != 0) {
            return false;
        }
    }
    const int64_t chunks = (layout.count + kLowChunk - 1) / kLowChunk;
    const auto at = [&](int operand, int64_t first) {
        return static_cast<std::byte*>(layout.base[operand]) + first * 2;
    };
    if (layout.operands == 2 && layout.strides[1][0] == 2 &&
        sign_low_precision(op, in_dtype, layout.base[1], layout.base[0], 0)) {
        // relu, neg, abs: on the bits, no f32 at all
        parallel_ranges(chunks, kMinParallelElements / kLowChunk, [&](int64_t begin, int64_t end) {
            const int64_t first = begin * kLowChunk;
            const int64_t count = std::min(end * kLowChunk, layout.count) - first;
            sign_low_precision(op, in_dtype, at(1, first), at(0, first), count);
        });
        return true;
    }
    const std::uint16_t* table = layout.operands == 2 && layout.strides[1][0] == 2
                                     ? unary_table(op, in_dtype, layout.count, &f32_in_place)
                                     : nullptr;
    if (table != nullptr) {  // exp, tanh, gelu, ...: one gather an element
        parallel_ranges(chunks, kMinParallelElements / kLowChunk, [&](int64_t begin, int64_t end) {
            const int64_t first = begin * kLowChunk;
            const int64_t count = std::min(end * kLowChunk, layout.count) - first;
            look_up(table, at(1, first), at(0, first), count);
        });
        return true;
    }
    const bool fused = layout.operands == 3 && layout.strides[1][0] == 2 &&
                       layout.strides[2][0] == 2 &&
                       binary_low_precision(op, in_dtype, layout.base[1], layout.base[2],
                                            layout.base[0], 0);  // whether it has this op
    parallel_ranges(chunks, kMinParallelElements / kLowChunk, [&](int64_t begin, int64_t end) {
        if (fused) {  // + - * / of two contiguous operands: in registers, no scratch
            const int64_t first = begin * kLowChunk;
            const int64_t count = std::min(end * kLowChunk, layout.count) - first;
            binary_low_precision(op, in_dtype, at(1, first), at(2, first), at(0, first), count);
            return;
        }
        alignas(64) float scratch[4][kLowChunk];
        kael_element_layout wide = layout;
        for (int64_t chunk = begin; chunk < end; ++chunk) {
            const int64_t first = chunk * kLowChunk;
            const int64_t count = std::min(kLowChunk, layout.count - first);
            wide.count = count;
            wide.shape[0] = count;
            for (int operand = 0; operand < layout.operands; ++operand) {
                const bool broadcast = layout.strides[operand][0] == 0;
                wide.strides[operand][0] = broadcast ? 0 : 4;
                wide.base[operand] = scratch[operand];
                if (operand > 0) {
                    const auto* from = static_cast<const std::byte*>(layout.base[operand]) +
                                       (broadcast ? 0 : first * 2);
                    convert_contiguous(KAEL_DTYPE_F32, in_dtype, from, scratch[operand],
                                       broadcast ? 1 : count);
                }
            }
            run_f32(op, wide, params);
            convert_contiguous(out_dtype, KAEL_DTYPE_F32, scratch[0],
                               static_cast<std::byte*>(layout.base[0]) + first * 2, count);
        }
    });
    return true;
}

}  // namespace

kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params) {
    return plugin::guarded("cpu.elementwise", [&] {
        check_device(device);
        kernels::check_element_layout(layout);
        if (run_vector_math(op, out_dtype, in_dtype, *layout) ||
            run_activation_backward(op, out_dtype, in_dtype, *layout)) {
            return;
        }
        if (kernels::is_low_precision(in_dtype)) {  // f32 and the rest never pay this check
            kernels::check_elementwise_call(op, out_dtype, in_dtype, layout->operands, params);
            if (run_low_precision_chunks(op, out_dtype, in_dtype, *layout, params)) {
                return;
            }
        }
        LayoutRunner runner{*layout};
        kernels::dispatch_elementwise(op, out_dtype, in_dtype, layout->operands, params, runner);
    });
}

}  // namespace kael::cpu
