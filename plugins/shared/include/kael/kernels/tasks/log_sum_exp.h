#pragma once
// The logsumexp reducer: one online (max, sum of exp(x - max)) state per row, in the input's
// dtype as PyTorch accumulates it, so a row is read once instead of the five passes of
// amax, subtract, exp, sum and log. States merge in any grouping, so the result composes over
// several runs of memory (the logsumexp of logsumexps is the logsumexp of the whole).
#include <cstdint>
#include <cmath>

#include "kael/kernels/element_math.h"

namespace kael::kernels::tasks {

template <typename In>
struct ExpSum {
    In max;  // -inf while nothing but -inf was seen
    In sum;  // of exp(x - max); 0 while max is -inf
};

template <typename In>
struct LogSumExp {
    using State = ExpSum<In>;
    using Out = In;
    static constexpr bool kHasIdentity = true;
    KAEL_HD static In lowest() { return -static_cast<In>(INFINITY); }
    KAEL_HD static State identity() { return {lowest(), In(0)}; }
    KAEL_HD static State first(In value, std::int64_t /*index*/) {
        return value == lowest() ? identity() : State{value, In(1)};
    }
    // Equal maxima add their sums without exp(inf - inf), so two +inf give +inf; a NaN makes
    // the sum NaN (it is never larger than the max, so it stays there).
    KAEL_HD static State merge(State a, State b) {
        if (b.max > a.max) {
            const State t = a;
            a = b;
            b = t;
        }
        if (b.max == lowest() && b.sum == In(0)) {
            return a;
        }
        if (b.max == a.max) {
            return {a.max, a.sum + b.sum};
        }
        return {a.max, a.sum + b.sum * math::exp(b.max - a.max)};
    }
    KAEL_HD static State step(State state, In value, std::int64_t /*index*/) {
        if (value == lowest()) {
            return state;  // exp(-inf) adds nothing
        }
        if (value > state.max) {
            // state.sum is 0 while max is -inf, and exp(-inf) is 0: no special case.
            return {value, state.sum * math::exp(state.max - value) + In(1)};
        }
        if (value == state.max) {
            return {state.max, state.sum + In(1)};  // also +inf after +inf
        }
        return {state.max, state.sum + math::exp(value - state.max)};  // NaN: sum turns NaN
    }
    KAEL_HD static Out finish(State state) {
        return state.sum == In(0) ? lowest() : state.max + math::log(state.sum);
    }
};

}  // namespace kael::kernels::tasks
