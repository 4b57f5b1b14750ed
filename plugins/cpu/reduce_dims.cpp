// Reductions along the middle of outer x size x inner with the shared reducers and the shared
// tree (kael/kernels/tasks/reduce_dims.h), read row by row: an item folds one kBlock-long piece
// of i for a tile of columns into per-column states, so memory streams in order instead of one
// strided walk per output. inner == 1 is the reduce slot's case.
#include "kael/kernels/tasks/reduce_dims.h"

#include <algorithm>
#include <memory>
#include <type_traits>

#include "cpu_kernels.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

namespace tasks = kernels::tasks;
using kernels::load_element;
using kernels::Storage;
using kernels::store_element;

constexpr int64_t kTile = 512;  // columns per item: their states stay in L1 while rows stream
constexpr int64_t kMinParallelElements = int64_t{1} << 16;

// states[j] = rows [begin, end) (begin < end) of column j of slab folded in order, j < width.
template <typename R, typename In>
[[gnu::always_inline]] inline void fold_rows(const Storage<In>* slab, int64_t inner, int64_t begin,
                                             int64_t end, int64_t width,
                                             typename R::State* states) {
    const Storage<In>* row = slab + begin * inner;
    for (int64_t j = 0; j < width; ++j) {
        states[j] = R::first(load_element<In>(row + j), begin);
    }
    for (int64_t i = begin + 1; i < end; ++i) {
        row = slab + i * inner;
        for (int64_t j = 0; j < width; ++j) {
            states[j] = R::step(states[j], load_element<In>(row + j), i);
        }
    }
}

// The same fold compiled for AVX-512 and AVX2 as well, for the f32 reducers whose column loop
// vectorizes (sum, max, min): picked by the vector ISA the plugin uses (vector_math::isa, which
// KAEL_CPU_VECTOR_ISA lowers). A NaN-aware select is several instructions a lane, and the
// baseline has four lanes.
template <typename R, typename In>
[[gnu::target("avx512f")]] void fold_rows_avx512(const Storage<In>* slab, int64_t inner,
                                                 int64_t begin, int64_t end, int64_t width,
                                                 typename R::State* states) {
    fold_rows<R, In>(slab, inner, begin, end, width, states);
}

template <typename R, typename In>
[[gnu::target("avx2")]] void fold_rows_avx2(const Storage<In>* slab, int64_t inner, int64_t begin,
                                            int64_t end, int64_t width,
                                            typename R::State* states) {
    fold_rows<R, In>(slab, inner, begin, end, width, states);
}

template <typename R, typename In>
constexpr bool widened() {
    return std::is_same_v<In, float> &&
           (std::is_same_v<R, tasks::Extreme<float, true>> ||
            std::is_same_v<R, tasks::Extreme<float, false>> ||
            std::is_same_v<R, tasks::Accumulate<float, false>>);
}

template <typename R, typename In>
void fold_rows_widest(const Storage<In>* slab, int64_t inner, int64_t begin, int64_t end,
                      int64_t width, typename R::State* states) {
    if constexpr (widened<R, In>()) {
        const vector_math::Isa isa = vector_math::chosen_isa();
        if (isa == vector_math::Isa::Avx512) {
            return fold_rows_avx512<R, In>(slab, inner, begin, end, width, states);
        }
        if (isa == vector_math::Isa::Avx2) {
            return fold_rows_avx2<R, In>(slab, inner, begin, end, width, states);
        }
    }
    fold_rows<R, In>(slab, inner, begin, end, width, states);
}

// size > 0 and inner > 1.
template <typename R, typename In>
void reduce_columns(void* results, const void* data, int64_t outer, int64_t size, int64_t inner) {
    using State = typename R::State;
    using Out = typename R::Out;
    const auto* input = static_cast<const Storage<In>*>(data);
    auto* out = static_cast<Storage<Out>*>(results);
    const int64_t blocks = tasks::ceil_div(size, tasks::kBlock);
    const int64_t tiles = tasks::ceil_div(inner, kTile);
    const int64_t items = outer * tiles * blocks;
    const bool large = outer * size * inner >= kMinParallelElements;
    // Arrays, not vectors: State may be bool.
    const auto partials =
        std::make_unique<State[]>(static_cast<size_t>(blocks > 1 ? outer * inner * blocks : 0));
    parallel_ranges(items, large ? 2 : items + 1, [&](int64_t begin, int64_t end) {
        const auto states = std::make_unique<State[]>(static_cast<size_t>(kTile));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t block = item % blocks;
            const int64_t first_column = (item / blocks) % tiles * kTile;
            const int64_t o = item / (blocks * tiles);
            const int64_t width = std::min(kTile, inner - first_column);
            const int64_t row_begin = block * tasks::kBlock;
            const int64_t row_end = std::min(size, row_begin + tasks::kBlock);
            const auto* slab = input + o * size * inner + first_column;
            fold_rows_widest<R, In>(slab, inner, row_begin, row_end, width, states.get());
            const int64_t first_output = o * inner + first_column;
            for (int64_t j = 0; j < width; ++j) {
                if (blocks == 1) {
                    store_element<Out>(out + first_output + j, R::finish(states[j]));
                } else {
                    partials[(first_output + j) * blocks + block] = states[j];
                }
            }
        }
    });
    if (blocks == 1) {
        return;
    }
    const int64_t outputs = outer * inner;
    parallel_ranges(outputs, large ? 2 : outputs + 1, [&](int64_t begin, int64_t end) {
        for (int64_t output = begin; output < end; ++output) {
            State* own = partials.get() + output * blocks;
            store_element<Out>(out + output,
                               R::finish(tasks::merge_pairs_in_place<R>(own, blocks)));
        }
    });
}

}  // namespace

kael_status reduce_dims(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, void* results, const void* data, int64_t outer,
                        int64_t size, int64_t inner) {
    if (inner == 1) {
        return reduce(device, op, out_dtype, in_dtype, results, data, size, outer);
    }
    return plugin::guarded("cpu.reduce_dims", [&] {
        check_device(device);
        tasks::check_reduce_dims_sizes(op, outer, size, inner);
        tasks::check_reduce_call(op, out_dtype, in_dtype, results, data, size, outer * inner);
        if (outer * inner == 0) {
            return;
        }
        tasks::with_reducer(op, in_dtype, [&](auto tag) {
            using Tag = decltype(tag);
            using R = typename Tag::Reducer;
            if (size == 0) {  // only reducers with an identity get here
                if constexpr (R::kHasIdentity) {
                    auto* out = static_cast<Storage<typename R::Out>*>(results);
                    for (int64_t output = 0; output < outer * inner; ++output) {
                        store_element<typename R::Out>(out + output, R::finish(R::identity()));
                    }
                }
                return;
            }
            reduce_columns<R, typename Tag::Input>(results, data, outer, size, inner);
        });
    });
}

}  // namespace kael::cpu
