// The scan slot: cumsum and cumprod along i of outer x size x inner, in the layout the
// tensor has. Rows (inner == 1) scan eight side by side; columns (inner > 1)
// scan a tile of columns at a time down the rows, their accumulators in L1, so memory streams
// in order and the column loop vectorizes.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/sequence.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

using kernels::load_element;
using kernels::Storage;

constexpr int64_t kTile = 256;  // columns per item
constexpr int64_t kMinParallelElements = int64_t{1} << 15;

// Floats accumulate in double and write their own dtype; integers and bool wrap in int64.
template <typename In>
using Accumulator = std::conditional_t<kernels::is_floating_v<In>, double, int64_t>;
template <typename In>
using Written = std::conditional_t<kernels::is_floating_v<In>, In, int64_t>;

template <bool kMultiply, typename Acc>
[[gnu::always_inline]] inline Acc combine(Acc a, Acc b) {
    if constexpr (std::is_same_v<Acc, double>) {
        return kMultiply ? a * b : a + b;
    } else {
        return kMultiply ? kernels::wrapping_multiply(a, b) : kernels::wrapping_add(a, b);
    }
}

template <bool kMultiply, typename In>
[[gnu::always_inline]] inline void scan_tile(const Storage<In>* in, Written<In>* out,
                                             int64_t size, int64_t inner, int64_t width) {
    Accumulator<In> sums[kTile];
    for (int64_t j = 0; j < width; ++j) {
        sums[j] = static_cast<Accumulator<In>>(load_element<In>(in + j));
        out[j] = static_cast<Written<In>>(sums[j]);
    }
    for (int64_t i = 1; i < size; ++i) {
        const Storage<In>* row = in + i * inner;
        Written<In>* target = out + i * inner;
        for (int64_t j = 0; j < width; ++j) {
            sums[j] = combine<kMultiply>(sums[j],
                                         static_cast<Accumulator<In>>(load_element<In>(row + j)));
            target[j] = static_cast<Written<In>>(sums[j]);
        }
    }
}

template <bool kMultiply, typename In>
[[gnu::target("avx512f")]] void scan_tile_avx512(const Storage<In>* in, Written<In>* out,
                                                 int64_t size, int64_t inner, int64_t width) {
    scan_tile<kMultiply, In>(in, out, size, inner, width);
}

template <bool kMultiply, typename In>
[[gnu::target("avx2")]] void scan_tile_avx2(const Storage<In>* in, Written<In>* out, int64_t size,
                                           int64_t inner, int64_t width) {
    scan_tile<kMultiply, In>(in, out, size, inner, width);
}

template <bool kMultiply, typename In>
void scan_tile_widest(const Storage<In>* in, Written<In>* out, int64_t size, int64_t inner,
                      int64_t width) {
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512:
            return scan_tile_avx512<kMultiply, In>(in, out, size, inner, width);
        case vector_math::Isa::Avx2:
            return scan_tile_avx2<kMultiply, In>(in, out, size, inner, width);
        default: return scan_tile<kMultiply, In>(in, out, size, inner, width);
    }
}

// Rows (inner == 1) kRows at a time, side by side: independent chains instead of one whose every
// step waits for the last multiply (or a trip through memory, as a one-column tile took).
constexpr int64_t kRows = 8;

template <bool kMultiply, typename In, int64_t kCount>
[[gnu::always_inline]] inline void scan_rows(const Storage<In>* in, Written<In>* out,
                                             int64_t size) {
    Accumulator<In> sums[kCount];
    for (int64_t r = 0; r < kCount; ++r) {
        sums[r] = static_cast<Accumulator<In>>(load_element<In>(in + r * size));
        out[r * size] = static_cast<Written<In>>(sums[r]);
    }
    for (int64_t i = 1; i < size; ++i) {
        for (int64_t r = 0; r < kCount; ++r) {
            sums[r] = combine<kMultiply>(
                sums[r], static_cast<Accumulator<In>>(load_element<In>(in + r * size + i)));
            out[r * size + i] = static_cast<Written<In>>(sums[r]);
        }
    }
}

template <bool kMultiply, typename In>
void scan(const void* data, void* results, int64_t outer, int64_t size, int64_t inner) {
    const auto* in = static_cast<const Storage<In>*>(data);
    auto* out = static_cast<Written<In>*>(results);
    if (inner == 1) {
        const int64_t groups = (outer + kRows - 1) / kRows;
        const bool large = outer * size >= kMinParallelElements;
        parallel_ranges(groups, large ? 2 : groups + 1, [&](int64_t begin, int64_t end) {
            for (int64_t group = begin; group < end; ++group) {
                const int64_t first = group * kRows;
                if (first + kRows <= outer) {
                    scan_rows<kMultiply, In, kRows>(in + first * size, out + first * size, size);
                    continue;
                }
                for (int64_t row = first; row < outer; ++row) {
                    scan_rows<kMultiply, In, 1>(in + row * size, out + row * size, size);
                }
            }
        });
        return;
    }
    const int64_t tiles = (inner + kTile - 1) / kTile;
    const int64_t items = outer * tiles;
    const bool large = outer * size * inner >= kMinParallelElements;
    parallel_ranges(items, large ? 2 : items + 1, [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
            const int64_t o = item / tiles;
            const int64_t first = item % tiles * kTile;
            const int64_t offset = o * size * inner + first;
            scan_tile_widest<kMultiply, In>(in + offset, out + offset, size, inner,
                                            std::min(kTile, inner - first));
        }
    });
}

}  // namespace

kael_status scan(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                 void* out, const void* data, int64_t outer, int64_t size, int64_t inner) {
    if (op == KAEL_REDUCE_SUM && inner == 1 && outer < kRows) {
        return cumsum(device, out_dtype, in_dtype, out, data, size, outer);  // long rows' chains
    }
    return plugin::guarded("cpu.scan", [&] {
        check_device(device);
        kernels::tasks::visit_scan_call(op, out_dtype, in_dtype, out, data, outer, size, inner,
                                        [&]<bool kMultiply, typename In>() {
            if (kMultiply && inner == 1 && long_floating_rows(in_dtype, size, outer)) {
                return cumprod_long_rows(in_dtype, out, data, size, outer);  // as cumsum's chains
            }
            scan<kMultiply, In>(data, out, outer, size, inner);
        });
    });
}

}  // namespace kael::cpu
