#pragma once
// Row reductions with the cpu plugin's summation order, so device results equal cpu results bit
// for bit: a row of at most kBlock elements is folded in order by one item (ReduceRows); a longer
// row is folded block by block (ReduceBlocks), each block in order from its first element, and
// the partials merged pairwise (MergePairs: target[i] = source[2i] + source[2i + 1], the odd last
// one copied) until one is left (StoreResult). The tree depends only on kBlock.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/tasks/launch.h"
#include "kael/kernels/tasks/log_sum_exp.h"

namespace kael::kernels::tasks {

inline constexpr std::int64_t kBlock = 4096;

// A reducer starts a block with first, folds with step, merges adjacent partials (earlier, later)
// with merge and turns the final state into the output with finish.
template <typename In, bool Multiply>
struct Accumulate {
    using State = std::conditional_t<is_floating_v<In>, double, std::int64_t>;
    using Out = std::conditional_t<is_floating_v<In>, In, std::int64_t>;
    static constexpr bool kHasIdentity = true;
    KAEL_HD static State identity() { return Multiply ? State(1) : State(0); }
    KAEL_HD static State first(In value, std::int64_t /*index*/) {
        return static_cast<State>(value);
    }
    KAEL_HD static State merge(State a, State b) {
        if constexpr (is_floating_v<In>) {
            return Multiply ? a * b : a + b;
        } else {
            return Multiply ? wrapping_multiply(a, b) : wrapping_add(a, b);
        }
    }
    KAEL_HD static State step(State state, In value, std::int64_t index) {
        return merge(state, first(value, index));
    }
    KAEL_HD static Out finish(State state) { return static_cast<Out>(state); }
};

template <typename In, bool Largest>
struct Extreme {
    using State = In;
    using Out = In;
    static constexpr bool kHasIdentity = false;
    KAEL_HD static State first(In value, std::int64_t /*index*/) { return value; }
    KAEL_HD static State merge(State a, State b) {
        return Largest ? nan_aware_max(a, b) : nan_aware_min(a, b);
    }
    KAEL_HD static State step(State state, In value, std::int64_t /*index*/) {
        return merge(state, value);
    }
    KAEL_HD static Out finish(State state) { return state; }
};

template <typename In>
struct Position {
    In value;
    std::int64_t index;
};

// Partials carry (value, index) so merging keeps the first occurrence; the first NaN wins.
template <typename In, bool Largest>
struct ArgExtreme {
    using State = Position<In>;
    using Out = std::int64_t;
    static constexpr bool kHasIdentity = false;
    KAEL_HD static State first(In value, std::int64_t index) { return {value, index}; }
    KAEL_HD static State merge(State earlier, State later) {
        if (is_nan(earlier.value)) {
            return earlier;
        }
        if (is_nan(later.value)) {
            return later;
        }
        const bool better = Largest ? later.value > earlier.value : later.value < earlier.value;
        return better ? later : earlier;
    }
    KAEL_HD static State step(State state, In value, std::int64_t index) {
        return merge(state, {value, index});
    }
    KAEL_HD static Out finish(State state) { return state.index; }
};

// The Euclidean norm: squares summed in double, the root taken once at the end.
template <typename In>
struct EuclideanNorm {
    using State = double;
    using Out = In;
    static constexpr bool kHasIdentity = true;
    KAEL_HD static State identity() { return 0.0; }
    KAEL_HD static State first(In value, std::int64_t /*index*/) {
        const double x = static_cast<double>(value);
        return x * x;
    }
    KAEL_HD static State merge(State a, State b) { return a + b; }
    KAEL_HD static State step(State state, In value, std::int64_t index) {
        return state + first(value, index);
    }
    KAEL_HD static Out finish(State state) { return static_cast<Out>(math::sqrt(state)); }
};

// Welford's running (count, mean, M2) in double; Chan's formula merges two partials. A state of
// count 0 is the identity and merges exactly (skipped, so inf * 0 cannot make NaN).
struct Moments {
    double count;
    double mean;
    double m2;  // sum of squared deviations from mean
};

template <typename In>
struct Variance {
    using State = Moments;
    using Out = double;
    static constexpr bool kHasIdentity = true;
    KAEL_HD static State identity() { return {0.0, 0.0, 0.0}; }
    KAEL_HD static State first(In value, std::int64_t /*index*/) {
        const double x = static_cast<double>(value);
        return {1.0, x, x - x};  // 0, or NaN for an infinity or a NaN, as a Welford step gives
    }
    KAEL_HD static State step(State state, In value, std::int64_t /*index*/) {
        const double x = static_cast<double>(value);
        state.count += 1.0;
        const double delta = x - state.mean;
        state.mean += delta / state.count;
        state.m2 += delta * (x - state.mean);
        return state;
    }
    KAEL_HD static State merge(State a, State b) {
        if (a.count == 0.0) {
            return b;
        }
        if (b.count == 0.0) {
            return a;
        }
        const double count = a.count + b.count;
        const double delta = b.mean - a.mean;
        const double share = b.count / count;
        return {count, a.mean + delta * share, a.m2 + b.m2 + delta * delta * a.count * share};
    }
    KAEL_HD static Out finish(State state) { return state.m2 / state.count; }  // 0 / 0: NaN
};

// A division-free way to fold many elements into one Moments state (the cuda lanes use it):
// sums of deviations from a shift, which should be one of the elements, so an offset stays out
// of the squares; result() is the Moments state of what was added.
struct ShiftedSums {
    double shift;
    double count = 0.0;
    double sum = 0.0;      // of x - shift
    double squares = 0.0;  // of (x - shift)^2
    KAEL_HD explicit ShiftedSums(double shift_value) : shift(shift_value) {}
    KAEL_HD void add(double x) {
        const double deviation = x - shift;
        count += 1.0;
        sum += deviation;
        squares += deviation * deviation;
    }
    KAEL_HD Moments result() const {
        if (count == 0.0) {
            return {0.0, 0.0, 0.0};
        }
        const double offset = sum / count;
        const double m2 = squares - sum * offset;
        return {count, shift + offset, m2 < 0.0 ? 0.0 : m2};  // rounding; NaN stays NaN
    }
};

// Folds row[begin, end) (begin < end) in order; indices are positions within the row.
template <typename R, typename In>
KAEL_HD typename R::State fold(const Storage<In>* row, std::int64_t begin, std::int64_t end) {
    typename R::State state = R::first(load_element<In>(row + begin), begin);
    for (std::int64_t i = begin + 1; i < end; ++i) {
        state = R::step(state, load_element<In>(row + i), i);
    }
    return state;
}

// One item per row of at most kBlock elements; an empty row gives the identity.
template <typename R, typename In>
struct ReduceRows {
    const Storage<In>* data;
    Storage<typename R::Out>* results;
    std::int64_t chunk_size;

    KAEL_HD void operator()(std::int64_t row) const {
        using Out = typename R::Out;
        if constexpr (R::kHasIdentity) {
            if (chunk_size == 0) {
                store_element<Out>(results + row, R::finish(R::identity()));
                return;
            }
        }
        store_element<Out>(results + row,
                           R::finish(fold<R, In>(data + row * chunk_size, 0, chunk_size)));
    }
};

// One item per kBlock-element block of every long row: partials[row * blocks + block].
template <typename R, typename In>
struct ReduceBlocks {
    const Storage<In>* data;
    typename R::State* partials;
    std::int64_t chunk_size;
    std::int64_t blocks;  // per row

    KAEL_HD void operator()(std::int64_t item) const {
        const std::int64_t row = item / blocks;
        const std::int64_t begin = (item % blocks) * kBlock;
        partials[item] =
            fold<R, In>(data + row * chunk_size, begin, min_of(chunk_size, begin + kBlock));
    }
};

// The MergePairs tree run in place over one row's `width` partials by a single thread (the cpu
// plugin's order, equal to the devices' level-by-level merge); returns the final state.
// Partials is a pointer or a vector (std::vector<bool> has no pointer, hence indexing).
template <typename R, typename Partials>
typename R::State merge_pairs_in_place(Partials& partials, std::int64_t width) {
    while (width > 1) {
        const std::int64_t half = width / 2;
        for (std::int64_t i = 0; i < half; ++i) {
            partials[i] = R::merge(partials[2 * i], partials[2 * i + 1]);
        }
        if (width % 2 != 0) {
            partials[half] = partials[width - 1];
        }
        width = half + width % 2;
    }
    return partials[0];
}

// One item per output partial of one merge level of every row; rows are `stride` apart in both
// buffers, and source and target never alias (a backwards or parallel order must not matter).
template <typename R>
struct MergePairs {
    const typename R::State* source;
    typename R::State* target;
    std::int64_t width;  // partials per row in source
    std::int64_t stride;

    KAEL_HD void operator()(std::int64_t item) const {
        const std::int64_t next_width = (width + 1) / 2;
        const std::int64_t row = item / next_width;
        const std::int64_t pair = item % next_width;
        const typename R::State* row_source = source + row * stride;
        target[row * stride + pair] = 2 * pair + 1 < width
                                          ? R::merge(row_source[2 * pair], row_source[2 * pair + 1])
                                          : row_source[2 * pair];
    }
};

template <typename R>
struct StoreResult {
    const typename R::State* partials;
    Storage<typename R::Out>* results;
    std::int64_t stride;

    KAEL_HD void operator()(std::int64_t row) const {
        store_element<typename R::Out>(results + row, R::finish(partials[row * stride]));
    }
};

template <typename Launcher, typename R, typename In>
void reduce_rows(void* results, const void* data, std::int64_t chunk_size, std::int64_t row_count) {
    using State = typename R::State;
    const auto* input = static_cast<const Storage<In>*>(data);
    auto* output = static_cast<Storage<typename R::Out>*>(results);
    if (chunk_size <= kBlock) {
        Launcher::for_each(row_count, ReduceRows<R, In>{input, output, chunk_size});
        return;
    }
    const std::int64_t blocks = ceil_div(chunk_size, kBlock);
    const Scratch<Launcher, State> first(row_count * blocks);
    const Scratch<Launcher, State> second(row_count * blocks);
    Launcher::for_each(row_count * blocks,
                       ReduceBlocks<R, In>{input, first.get(), chunk_size, blocks});
    State* source = first.get();
    State* target = second.get();
    for (std::int64_t width = blocks; width > 1; width = (width + 1) / 2) {
        Launcher::for_each(row_count * ((width + 1) / 2),
                           MergePairs<R>{source, target, width, blocks});
        State* const merged = target;
        target = source;
        source = merged;
    }
    Launcher::for_each(row_count, StoreResult<R>{source, output, blocks});
}

// One row of plugin_api.h's reduce op table, KAEL_REDUCE_OPS; indexed by op (the header checks
// that each row's value is its position).
struct ReduceOpInfo {
    const char* name;
    int input_class;  // KAEL_OP_INPUTS_*
    int writes;       // KAEL_REDUCE_WRITES_*
    bool empty_has_value;
};
#define KAEL_REDUCE_OP_INFO(op, value, name, in, out, empty, since) \
    {name, KAEL_OP_INPUTS_##in, KAEL_REDUCE_WRITES_##out, empty != 0},
inline constexpr ReduceOpInfo kReduceOps[KAEL_REDUCE_COUNT] = {
    KAEL_REDUCE_OPS(KAEL_REDUCE_OP_INFO)};
#undef KAEL_REDUCE_OP_INFO

inline const char* reduce_op_name(kael_reduce_op op) {
    return op >= 0 && op < KAEL_REDUCE_COUNT ? kReduceOps[op].name : "unknown reduction";
}

// op must be valid.
inline kael_dtype reduce_out_dtype(kael_reduce_op op, kael_dtype in_dtype) {
    const bool floating = in_dtype == KAEL_DTYPE_F32 || in_dtype == KAEL_DTYPE_F64;
    switch (kReduceOps[op].writes) {
        case KAEL_REDUCE_WRITES_WIDE: return floating ? in_dtype : KAEL_DTYPE_I64;
        case KAEL_REDUCE_WRITES_SAME: return in_dtype;
        case KAEL_REDUCE_WRITES_F64: return KAEL_DTYPE_F64;
        default: return KAEL_DTYPE_I64;
    }
}

// Validates a reduce or reduce_dims call (outputs results from reduced runs of `size`) as the cpu
// plugin does; name is the op's name for messages.
inline void check_reduce_call(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                              const void* results, const void* data, std::int64_t size,
                              std::int64_t outputs) {
    if (op < 0 || op >= KAEL_REDUCE_COUNT) {
        plugin::invalid("invalid reduce op " + std::to_string(op));
    }
    const std::string name = reduce_op_name(op);
    if (!valid_dtype(in_dtype) || !valid_dtype(out_dtype)) {
        plugin::invalid(name + ": invalid dtype");
    }
    if (!takes_dtype(kReduceOps[op].input_class, in_dtype)) {
        plugin::unsupported(name + " of " + plugin::dtype_name(in_dtype));
    }
    const kael_dtype expected = reduce_out_dtype(op, in_dtype);
    if (out_dtype != expected) {
        plugin::invalid(name + " of " + plugin::dtype_name(in_dtype) + " writes " +
                        plugin::dtype_name(expected) + ", not " + plugin::dtype_name(out_dtype));
    }
    check_rows(name.c_str(), size, outputs);
    if (outputs > 0 && (results == nullptr || (size > 0 && data == nullptr))) {
        plugin::invalid(name + ": null results or data");
    }
    if (outputs > 0 && size == 0 && !kReduceOps[op].empty_has_value) {
        plugin::invalid(name + " of an empty row has no value");
    }
}

// The reduce_indexed slot's checks; true for max (ARGMAX), false for min (ARGMIN).
inline bool check_reduce_indexed_call(kael_reduce_op op, kael_dtype dtype, const void* values,
                                      const std::int64_t* indices, const void* data,
                                      std::int64_t outer, std::int64_t size,
                                      std::int64_t inner) {
    if (op != KAEL_REDUCE_ARGMAX && op != KAEL_REDUCE_ARGMIN) {
        plugin::unsupported("reduce_indexed takes argmax or argmin, not op " +
                            std::to_string(op));
    }
    if (!valid_dtype(dtype)) {
        plugin::invalid("reduce_indexed: invalid dtype");
    }
    if (outer < 0 || size < 0 || inner < 0) {
        plugin::invalid("reduce_indexed: negative outer, size or inner");
    }
    if (outer * inner > 0 && size == 0) {
        plugin::invalid("reduce_indexed: max/min of an empty row has no value");
    }
    if (outer * inner > 0 && (values == nullptr || indices == nullptr || data == nullptr)) {
        plugin::invalid("reduce_indexed: null values, indices or data");
    }
    return op == KAEL_REDUCE_ARGMAX;
}

template <typename R, typename In>
struct ReducerTag {
    using Reducer = R;
    using Input = In;
};

// Calls visit(ReducerTag<R, In>{}) with the reducer of op over in_dtype (op already checked).
template <typename Visit>
void with_reducer(kael_reduce_op op, kael_dtype in_dtype, Visit&& visit) {
    with_dtype(in_dtype, [&](auto tag) {
        using In = TagType<decltype(tag)>;
        switch (op) {
            case KAEL_REDUCE_SUM: return visit(ReducerTag<Accumulate<In, false>, In>{});
            case KAEL_REDUCE_PROD: return visit(ReducerTag<Accumulate<In, true>, In>{});
            case KAEL_REDUCE_MAX: return visit(ReducerTag<Extreme<In, true>, In>{});
            case KAEL_REDUCE_MIN: return visit(ReducerTag<Extreme<In, false>, In>{});
            case KAEL_REDUCE_ARGMAX: return visit(ReducerTag<ArgExtreme<In, true>, In>{});
            case KAEL_REDUCE_VARIANCE:
                // Floats only (check_reduce_call refuses the rest): two instantiations.
                if constexpr (is_floating_v<In>) {
                    return visit(ReducerTag<Variance<In>, In>{});
                }
                plugin::unsupported(std::string("variance of ") + plugin::dtype_name(in_dtype));
            case KAEL_REDUCE_NORM2:
                if constexpr (is_floating_v<In>) {
                    return visit(ReducerTag<EuclideanNorm<In>, In>{});
                }
                plugin::unsupported(std::string("norm2 of ") + plugin::dtype_name(in_dtype));
            case KAEL_REDUCE_LOGSUMEXP:
                if constexpr (is_floating_v<In>) {
                    return visit(ReducerTag<LogSumExp<In>, In>{});
                }
                plugin::unsupported(std::string("logsumexp of ") + plugin::dtype_name(in_dtype));
            default: return visit(ReducerTag<ArgExtreme<In, false>, In>{});
        }
    });
}

// The reduce slot: validates like the cpu plugin, then reduces every row.
template <typename Launcher>
void launch_reduce(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype, void* results,
                   const void* data, std::int64_t chunk_size, std::int64_t output_count) {
    check_reduce_call(op, out_dtype, in_dtype, results, data, chunk_size, output_count);
    if (output_count == 0) {
        return;
    }
    with_reducer(op, in_dtype, [&](auto tag) {
        using Tag = decltype(tag);
        reduce_rows<Launcher, typename Tag::Reducer, typename Tag::Input>(results, data, chunk_size,
                                                                          output_count);
    });
}

}  // namespace kael::kernels::tasks
