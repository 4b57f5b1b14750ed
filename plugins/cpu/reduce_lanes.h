#pragma once
// One piece of a row folded in independent lanes (element i into lane (i - begin) % lanes), then
// the lanes merged in a fixed order: the loop has no chain from one element to the next, so it
// vectorizes at the ISA the plugin picked. Max, min, argmax, argmin and integer sums
// give what an in-order fold gives; float sums and products keep their double accumulator, so
// only the last bits of a double result depend on the lane order.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce.h"
#include "vector_math.h"

namespace kael::cpu::lanes {

namespace tasks = kernels::tasks;
using kernels::load_element;
using kernels::Storage;

// Four AVX-512 vectors of state (eight AVX2 ones): independent chains that hide the latency of
// each add or max; the lanes' merge, paid per row, stays short (halves into halves).
template <typename State>
inline constexpr int64_t kLanes = sizeof(State) >= 4 ? 128 / sizeof(State) : 64;

// argmax/argmin lanes carry an offset beside each value: half as many.
template <typename In>
inline constexpr int64_t kPositionLanes = sizeof(In) >= 2 ? 128 / sizeof(In) : 64;

template <typename R>
struct Kind {
    static constexpr int value = 0;  // no lane fold: the in-order one
};
template <typename In, bool Multiply>
struct Kind<tasks::Accumulate<In, Multiply>> {
    static constexpr int value = 1;
};
template <typename In>
struct Kind<tasks::EuclideanNorm<In>> {
    static constexpr int value = 1;
};
template <typename In, bool Largest>
struct Kind<tasks::Extreme<In, Largest>> {
    static constexpr int value = 3;
};
template <typename In, bool Largest>
struct Kind<tasks::ArgExtreme<In, Largest>> {
    static constexpr int value = 2;
};

template <typename R>
inline constexpr bool kHasLaneFold = Kind<R>::value != 0;

// The shortest piece worth folding in lanes: two rounds of them.
template <typename R, typename In>
inline constexpr int64_t kMinLength =
    2 * (Kind<R>::value == 2   ? kPositionLanes<In>
         : Kind<R>::value == 3 ? kLanes<In>
                               : kLanes<typename R::State>);

// The lanes' states merged halves into halves, a contiguous pattern that vectorizes too.
template <typename State, int64_t kWidth, typename Merge>
[[gnu::always_inline]] inline State merge_lanes(State* states, Merge merge) {
    for (int64_t width = kWidth / 2; width >= 1; width /= 2) {
        for (int64_t lane = 0; lane < width; ++lane) {
            states[lane] = merge(states[lane], states[lane + width]);
        }
    }
    return states[0];
}

// Lanes start from the piece's first lanes (a sum of -0.0 stays -0.0). end - begin >= lanes.
template <typename R, typename In>
[[gnu::always_inline]] inline typename R::State fold_states(const Storage<In>* row, int64_t begin,
                                                            int64_t end) {
    using State = typename R::State;
    constexpr int64_t kWidth = kLanes<State>;
    State states[kWidth];
    for (int64_t lane = 0; lane < kWidth; ++lane) {
        states[lane] = R::first(load_element<In>(row + begin + lane), begin + lane);
    }
    int64_t i = begin + kWidth;
    for (; i + kWidth <= end; i += kWidth) {
        for (int64_t lane = 0; lane < kWidth; ++lane) {
            states[lane] = R::merge(states[lane], R::first(load_element<In>(row + i + lane), 0));
        }
    }
    for (int64_t lane = 0; i < end; ++i, ++lane) {
        states[lane] = R::merge(states[lane], R::first(load_element<In>(row + i), 0));
    }
    return merge_lanes<State, kWidth>(states, [](State a, State b) { return R::merge(a, b); });
}

// max/min: a plain compare-and-select per lane (one max instruction) and, apart, whether a NaN
// was seen, which then is the result (NaN propagates, as the shared reducer's merge does).
template <typename R, typename In>
[[gnu::always_inline]] inline In fold_extremes(const Storage<In>* row, int64_t begin,
                                               int64_t end) {
    constexpr bool kLargest = std::is_same_v<R, tasks::Extreme<In, true>>;
    if constexpr (std::is_same_v<In, bool>) {  // | and & of the 0/1 bytes (any, all)
        constexpr int64_t kBytes = 64;
        std::uint8_t folded[kBytes];
        std::memcpy(folded, row + begin, kBytes);
        int64_t i = begin + kBytes;
        for (; i + kBytes <= end; i += kBytes) {
            for (int64_t lane = 0; lane < kBytes; ++lane) {
                folded[lane] = kLargest ? folded[lane] | row[i + lane] : folded[lane] & row[i + lane];
            }
        }
        for (int64_t lane = 0; i < end; ++i, ++lane) {
            folded[lane] = kLargest ? folded[lane] | row[i] : folded[lane] & row[i];
        }
        std::uint8_t result = folded[0];
        for (int64_t lane = 1; lane < kBytes; ++lane) {
            result = kLargest ? result | folded[lane] : result & folded[lane];
        }
        return result != 0;
    }
    constexpr int64_t kWidth = kLanes<In>;
    const auto better = [](In value, In best) { return kLargest ? value > best : value < best; };
    In best[kWidth];
    In nan[kWidth];  // a NaN once the lane saw one: a select of In's width vectorizes, a bool not
    for (int64_t lane = 0; lane < kWidth; ++lane) {
        best[lane] = load_element<In>(row + begin + lane);
        nan[lane] = best[lane];
    }
    const auto visit = [&](int64_t lane, In value) {
        best[lane] = better(value, best[lane]) ? value : best[lane];
        nan[lane] = kernels::is_nan(value) ? value : nan[lane];
    };
    int64_t i = begin + kWidth;
    for (; i + kWidth <= end; i += kWidth) {
        for (int64_t lane = 0; lane < kWidth; ++lane) {
            visit(lane, load_element<In>(row + i + lane));
        }
    }
    for (int64_t lane = 0; i < end; ++i, ++lane) {
        visit(lane, load_element<In>(row + i));
    }
    bool any_nan = false;
    for (int64_t lane = 0; lane < kWidth; ++lane) {
        any_nan = any_nan || kernels::is_nan(nan[lane]);
    }
    if (any_nan) {
        for (int64_t k = begin;; ++k) {  // the first NaN, as an in-order fold keeps it
            if (kernels::is_nan(load_element<In>(row + k))) {
                return load_element<In>(row + k);
            }
        }
    }
    return merge_lanes<In, kWidth>(best, [&](In a, In b) { return better(b, a) ? b : a; });
}

// argmax/argmin: per lane the best value and its offset, the first NaN winning and ties keeping
// the earlier element; lanes then merge by value, a tie or two NaNs going to the lower index.
template <typename R, typename In>
[[gnu::always_inline]] inline typename R::State fold_positions(const Storage<In>* row,
                                                               int64_t begin, int64_t end) {
    constexpr bool kLargest = std::is_same_v<R, tasks::ArgExtreme<In, true>>;
    using Offset = std::conditional_t<sizeof(In) <= 4, int32_t, int64_t>;
    const Storage<In>* piece = row + begin;
    const int64_t count = end - begin;
    constexpr int64_t kWidth = kPositionLanes<In>;
    In best[kWidth];
    Offset offset[kWidth];
    for (int64_t lane = 0; lane < kWidth; ++lane) {
        best[lane] = load_element<In>(piece + lane);
        offset[lane] = static_cast<Offset>(lane);
    }
    int64_t i = kWidth;
    const auto visit = [&](int64_t lane, int64_t at) {
        const In value = load_element<In>(piece + at);
        const bool better = kLargest ? value > best[lane] : value < best[lane];
        const bool take = better || (kernels::is_nan(value) && !kernels::is_nan(best[lane]));
        best[lane] = take ? value : best[lane];
        offset[lane] = take ? static_cast<Offset>(at) : offset[lane];
    };
    for (; i + kWidth <= count; i += kWidth) {
        for (int64_t lane = 0; lane < kWidth; ++lane) {
            visit(lane, i + lane);
        }
    }
    for (int64_t lane = 0; i < count; ++i, ++lane) {
        visit(lane, i);
    }
    int64_t winner = 0;
    for (int64_t lane = 1; lane < kWidth; ++lane) {
        const In a = best[winner];
        const In b = best[lane];
        const bool earlier = offset[lane] < offset[winner];
        bool take = false;
        if (kernels::is_nan(a) || kernels::is_nan(b)) {
            take = kernels::is_nan(b) && (!kernels::is_nan(a) || earlier);
        } else {
            take = (kLargest ? b > a : b < a) || (b == a && earlier);
        }
        winner = take ? lane : winner;
    }
    return {best[winner], begin + static_cast<int64_t>(offset[winner])};
}

// row[begin, end) with end - begin >= kMinLength<R, In>.
template <typename R, typename In>
[[gnu::always_inline]] inline typename R::State fold(const Storage<In>* row, int64_t begin,
                                                     int64_t end) {
    if constexpr (Kind<R>::value == 2) {
        return fold_positions<R, In>(row, begin, end);
    } else if constexpr (Kind<R>::value == 3) {
        return fold_extremes<R, In>(row, begin, end);
    } else {
        return fold_states<R, In>(row, begin, end);
    }
}

template <typename R, typename In>
[[gnu::target("avx512f")]] typename R::State fold_avx512(
    const Storage<In>* row, int64_t begin, int64_t end) {
    return fold<R, In>(row, begin, end);
}

template <typename R, typename In>
[[gnu::target("avx2,fma")]] typename R::State fold_avx2(const Storage<In>* row, int64_t begin,
                                                       int64_t end) {
    return fold<R, In>(row, begin, end);
}

// The lane fold at the widest ISA the plugin uses.
template <typename R, typename In>
typename R::State fold_widest(const Storage<In>* row, int64_t begin, int64_t end) {
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512: return fold_avx512<R, In>(row, begin, end);
        case vector_math::Isa::Avx2: return fold_avx2<R, In>(row, begin, end);
        default: return fold<R, In>(row, begin, end);
    }
}

}  // namespace kael::cpu::lanes
