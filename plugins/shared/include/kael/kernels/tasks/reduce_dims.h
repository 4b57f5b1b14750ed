#pragma once
// Reductions along the middle of outer x size x inner (element (o, i, j) at (o * size + i) *
// inner + j) with reduce()'s tree: output r = o * inner + j folds i in order when size <=
// kBlock; a longer run is folded kBlock elements of i at a time into partials[r * blocks + b],
// merged pairwise as ReduceBlocks' are. Consecutive outputs read consecutive columns j.
#include <cstdint>
#include <string>

#include "kael/kernels/tasks/reduce.h"

namespace kael::kernels::tasks {

// Folds column[i * stride] for i in [begin, end) (begin < end) in order, or its paired terms
// (kPaired; begin a multiple of kPairGroup).
template <typename R, typename In>
KAEL_HD typename R::State fold_strided(const Storage<In>* column, std::int64_t stride,
                                       std::int64_t begin, std::int64_t end) {
    if constexpr (kPaired<R>) {
        return fold_paired<R, In>(column, stride, begin, end);
    }
    typename R::State state = R::first(load_element<In>(column + begin * stride), begin);
    for (std::int64_t i = begin + 1; i < end; ++i) {
        state = R::step(state, load_element<In>(column + i * stride), i);
    }
    return state;
}

// Where output r's column starts: (o * size) * inner + j.
KAEL_HD inline std::int64_t column_start(std::int64_t output, std::int64_t size,
                                         std::int64_t inner) {
    return (output / inner) * size * inner + output % inner;
}

// One item per output of runs of at most kBlock elements; an empty run gives the identity.
template <typename R, typename In>
struct ReduceColumns {
    const Storage<In>* data;
    Storage<typename R::Out>* results;
    std::int64_t size;
    std::int64_t inner;

    KAEL_HD void operator()(std::int64_t output) const {
        using Out = typename R::Out;
        if constexpr (R::kHasIdentity) {
            if (size == 0) {
                store_element<Out>(results + output, R::finish(R::identity()));
                return;
            }
        }
        const Storage<In>* column = data + column_start(output, size, inner);
        store_element<Out>(results + output,
                           R::finish(fold_strided<R, In>(column, inner, 0, size)));
    }
};

// One item per kBlock-long piece of every output's run: partials[output * blocks + block].
template <typename R, typename In>
struct ReduceColumnBlocks {
    const Storage<In>* data;
    typename R::State* partials;
    std::int64_t size;
    std::int64_t inner;
    std::int64_t blocks;  // per output

    KAEL_HD void operator()(std::int64_t item) const {
        const std::int64_t output = item / blocks;
        const std::int64_t begin = (item % blocks) * kBlock;
        partials[item] = fold_strided<R, In>(data + column_start(output, size, inner), inner, begin,
                                             min_of(size, begin + kBlock));
    }
};

template <typename Launcher, typename R, typename In>
void reduce_columns(void* results, const void* data, std::int64_t outer, std::int64_t size,
                    std::int64_t inner) {
    using State = typename R::State;
    const auto* input = static_cast<const Storage<In>*>(data);
    auto* output = static_cast<Storage<typename R::Out>*>(results);
    const std::int64_t outputs = outer * inner;
    if (size <= kBlock) {
        Launcher::for_each(outputs, ReduceColumns<R, In>{input, output, size, inner});
        return;
    }
    const std::int64_t blocks = ceil_div(size, kBlock);
    const Scratch<Launcher, State> first(outputs * blocks);
    const Scratch<Launcher, State> second(outputs * blocks);
    Launcher::for_each(outputs * blocks,
                       ReduceColumnBlocks<R, In>{input, first.get(), size, inner, blocks});
    State* source = first.get();
    State* target = second.get();
    for (std::int64_t width = blocks; width > 1; width = (width + 1) / 2) {
        Launcher::for_each(outputs * ((width + 1) / 2),
                           MergePairs<R>{source, target, width, blocks});
        State* const merged = target;
        target = source;
        source = merged;
    }
    Launcher::for_each(outputs, StoreResult<R>{source, output, blocks});
}

// outer * size * inner elements, each factor non-negative, the product without overflow.
inline void check_reduce_dims_sizes(kael_reduce_op op, std::int64_t outer, std::int64_t size,
                                    std::int64_t inner) {
    const std::string name = reduce_op_name(op);
    if (outer < 0 || size < 0 || inner < 0) {
        plugin::invalid(name + ": negative outer, size or inner");
    }
    constexpr std::int64_t kMax = INT64_MAX;
    if ((inner > 0 && outer > kMax / inner) ||
        (outer * inner > 0 && size > kMax / (outer * inner))) {
        plugin::invalid(name + ": outer x size x inner overflows int64");
    }
}

// The checks every reduce_dims slot starts with (sizes, then the call as reduce's); whether
// there is anything to write.
inline bool check_reduce_dims_call(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                                   const void* results, const void* data, std::int64_t outer,
                                   std::int64_t size, std::int64_t inner) {
    check_reduce_dims_sizes(op, outer, size, inner);
    check_reduce_call(op, out_dtype, in_dtype, results, data, size, outer * inner);
    return outer * inner > 0;
}

// The reduce_dims slot: validates like the cpu plugin, then reduces every output.
template <typename Launcher>
void launch_reduce_dims(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype, void* results,
                        const void* data, std::int64_t outer, std::int64_t size,
                        std::int64_t inner) {
    if (!check_reduce_dims_call(op, out_dtype, in_dtype, results, data, outer, size, inner)) {
        return;
    }
    with_reducer(op, in_dtype, [&](auto tag) {
        using Tag = decltype(tag);
        reduce_columns<Launcher, typename Tag::Reducer, typename Tag::Input>(results, data, outer,
                                                                             size, inner);
    });
}

}  // namespace kael::kernels::tasks
