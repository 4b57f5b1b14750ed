#pragma once
// Row reductions with the cpu plugin's summation order, so device results equal cpu results bit
// for bit: a row of at most kBlock elements is folded in order by one item (ReduceRows); a longer
// row is folded block by block (ReduceBlocks), each block in order from its first element, and
// the partials merged pairwise (MergePairs: target[i] = source[2i] + source[2i + 1], the odd last
// one copied) until one is left (StoreResult). The tree depends only on kBlock. f32 sums and
// products fold paired terms (kPaired), in the same blocks.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/tasks/launch.h"
#include "kael/kernels/tasks/log_sum_exp.h"
#include "kael/kernels/tasks/reduce_checks.h"

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
    // A paired term (kPaired below): one operation in In, then the widening.
    KAEL_HD static State pair(In low, In high) {
        return static_cast<State>(Multiply ? low * high : low + high);
    }
    KAEL_HD static State lone(In value) { return static_cast<State>(value); }
};

// kael's f32 sums and products pair elements before they widen. In each 64-element group of a
// reduced run, counted from the run's first element, element k of the first half meets element
// k + 32 in one f32 operation (R::pair); an element whose partner lies past the run's end stands
// alone (R::lone). The terms widen to double and fold. The pairs depend only on indices, so every
// device rounds the same ones; the cpu then widens half as many values (its bound).
inline constexpr std::int64_t kPairGroup = 64;
inline constexpr std::int64_t kPairHalf = kPairGroup / 2;
static_assert(kBlock % kPairGroup == 0, "blocks start on a group");

template <typename R>
inline constexpr bool kPaired = false;
template <bool Multiply>
inline constexpr bool kPaired<Accumulate<float, Multiply>> = true;

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

// The paired terms (kPaired) of run[i * stride] for i in [begin, end) (begin < end, a multiple
// of kPairGroup), folded in order of their first element.
template <typename R, typename In>
KAEL_HD typename R::State fold_paired(const Storage<In>* run, std::int64_t stride,
                                      std::int64_t begin, std::int64_t end) {
    typename R::State state{};
    for (std::int64_t group = begin; group < end; group += kPairGroup) {
        const std::int64_t half_end = min_of(end, group + kPairHalf);
        for (std::int64_t k = group; k < half_end; ++k) {
            const In low = load_element<In>(run + k * stride);
            const typename R::State term =
                k + kPairHalf < end ? R::pair(low, load_element<In>(run + (k + kPairHalf) * stride))
                                    : R::lone(low);
            state = k == begin ? term : R::merge(state, term);
        }
    }
    return state;
}

// Folds row[begin, end) (begin < end) in order; indices are positions within the row. Paired
// reducers fold their terms instead (begin then a multiple of kPairGroup).
template <typename R, typename In>
KAEL_HD typename R::State fold(const Storage<In>* row, std::int64_t begin, std::int64_t end) {
    if constexpr (kPaired<R>) {
        return fold_paired<R, In>(row, 1, begin, end);
    }
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

template <typename R, typename In>
struct ReducerTag {
    using Reducer = R;
    using Input = In;
};

// Calls visit(ReducerTag<R, In>{}) with the reducer of op over In (op already checked): for a
// type fixed at compile time (the bf16/f16 reductions fold as float), no other In is compiled.
template <typename In, typename Visit>
void with_reducer_of(kael_reduce_op op, kael_dtype in_dtype, Visit&& visit) {
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
}

// Calls visit(ReducerTag<R, In>{}) with the reducer of op over in_dtype (op already checked).
template <typename Visit>
void with_reducer(kael_reduce_op op, kael_dtype in_dtype, Visit&& visit) {
    with_dtype(in_dtype,
               [&](auto tag) { with_reducer_of<TagType<decltype(tag)>>(op, in_dtype, visit); });
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
