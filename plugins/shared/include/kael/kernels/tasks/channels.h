#pragma once
// Per-channel statistics and maps over [outer, channels, inner] (KAEL_EXTENSION_CHANNELS) as
// device tasks, for host launchers (cpu, emulated): one item per (channel, piece of the outer
// rows) sums its runs into double partials, one item per channel adds them in piece order, so
// the results do not depend on threads; the affine map is one item per row of inner values.
// The moments are shifted sums: every value of a channel less the channel's first value, so the
// pieces add without a merge formula and a large mean does not swamp a small spread.
#include <cstdint>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/tasks/launch.h"
#include "kael/plugin_extensions.h"

namespace kael::kernels::tasks {

// The per-channel buffers' type: double for f64 data, float otherwise (the ABI's stat dtype).
template <typename S>
using ChannelStat = std::conditional_t<std::is_same_v<S, double>, double, float>;

struct ChannelLayout {
    std::int64_t outer;
    std::int64_t channels;
    std::int64_t inner;
    std::int64_t pieces;  // of the outer rows, per channel
    std::int64_t per;     // outer rows a piece
    KAEL_HD std::int64_t run(std::int64_t n, std::int64_t c) const {
        return (n * channels + c) * inner;
    }
};

// Pieces of about 2^14 values, so a call has items for every thread and partials stay few.
inline ChannelLayout channel_layout(std::int64_t outer, std::int64_t channels, std::int64_t inner) {
    constexpr std::int64_t kPieceValues = std::int64_t{1} << 14;
    const std::int64_t wanted = ceil_div(outer * inner, kPieceValues);
    const std::int64_t pieces = wanted < 1 ? 1 : (wanted > outer ? outer : wanted);
    const std::int64_t per = ceil_div(outer, pieces);
    return {outer, channels, inner, ceil_div(outer, per), per};
}

// The lanes a run folds into (kChannelLanes doubles each for sums and products).
inline constexpr int kChannelLanes = 8;

// How runs of values fold into the lanes: `rows` runs of `inner` values, `stride` apart; d =
// value - center, and the grad g where kGrad (grads laid out as values); the sums of g and of
// g * d. A plugin may bring its own (the cpu plugin's, compiled for its vector width) through
// ChannelTasks' Fold.
struct SharedChannelFold {
    // The lanes live in locals while the runs fold (through the pointers, a compiler must
    // assume they alias the values and keeps the loop scalar).
    template <typename S, bool kGrad>
    KAEL_HD static void run(const S* values, const S* grads, double center, std::int64_t rows,
                            std::int64_t inner, std::int64_t stride, double* sums,
                            double* products) {
        constexpr int kLanes = kChannelLanes;
        double s[kLanes] = {};
        double p[kLanes] = {};
        for (std::int64_t r = 0; r < rows; ++r) {
            const S* v = values + r * stride;
            const S* g_row = kGrad ? grads + r * stride : nullptr;
            std::int64_t j = 0;
            for (; j + kLanes <= inner; j += kLanes) {
                for (int lane = 0; lane < kLanes; ++lane) {
                    const double d = convert_value<double>(v[j + lane]) - center;
                    const double g = kGrad ? convert_value<double>(g_row[j + lane]) : d;
                    s[lane] += g;
                    p[lane] += g * d;
                }
            }
            for (int lane = 0; j < inner; ++j, ++lane) {
                const double d = convert_value<double>(v[j]) - center;
                const double g = kGrad ? convert_value<double>(g_row[j]) : d;
                s[lane] += g;
                p[lane] += g * d;
            }
        }
        for (int lane = 0; lane < kLanes; ++lane) {
            sums[lane] = s[lane];
            products[lane] = p[lane];
        }
    }

    // out[j] = data[j] * a + b (+ other[j] * o) for j < count, in the stat type C: ChannelAffine's
    // run (a plugin's own may be wider, with the same operations in the same order).
    template <typename S, typename C>
    KAEL_HD static void affine(const S* data, C a, C b, const S* other, C o, S* out,
                               std::int64_t count) {
        if (other != nullptr) {
            for (std::int64_t j = 0; j < count; ++j) {
                out[j] = convert_value<S>(convert_value<C>(data[j]) * a + b +
                                          convert_value<C>(other[j]) * o);
            }
        } else {
            for (std::int64_t j = 0; j < count; ++j) {
                out[j] = convert_value<S>(convert_value<C>(data[j]) * a + b);
            }
        }
    }
};

// Partials [channels * pieces][2] of channel item / pieces over its piece's rows. Moments (grad
// null): the sums of d and d * d, d = value - the channel's first value. Backward sums: of grad
// and grad * (value - mean[c]).
template <typename S, typename Fold = SharedChannelFold>
struct ChannelPartials {
    const S* data;
    const S* grad;
    const ChannelStat<S>* mean;
    double* partials;
    ChannelLayout layout;

    [[nodiscard]] std::int64_t cost() const {
        return layout.per * layout.inner * (grad != nullptr ? 2 : 1);
    }
    static constexpr int kLanes = kChannelLanes;

    KAEL_HD void operator()(std::int64_t item) const {
        const std::int64_t c = item / layout.pieces;
        const std::int64_t first = item % layout.pieces * layout.per;
        const std::int64_t last = min_of(layout.outer, first + layout.per);
        const double center = grad != nullptr ? static_cast<double>(mean[c])
                                              : convert_value<double>(data[layout.run(0, c)]);
        double sums[kLanes];
        double products[kLanes];
        const std::int64_t at = layout.run(first, c);
        const std::int64_t stride = layout.channels * layout.inner;
        if (grad != nullptr) {
            Fold::template run<S, true>(data + at, grad + at, center, last - first, layout.inner,
                                        stride, sums, products);
        } else {
            Fold::template run<S, false>(data + at, nullptr, center, last - first, layout.inner,
                                         stride, sums, products);
        }
        for (int width = kLanes / 2; width >= 1; width /= 2) {
            for (int lane = 0; lane < width; ++lane) {
                sums[lane] += sums[lane + width];
                products[lane] += products[lane + width];
            }
        }
        partials[2 * item] = sums[0];
        partials[2 * item + 1] = products[0];
    }
};

// One channel's partials added in piece order, then finished: moments into mean and variance
// (M2 / max(count - correction, 0)), backward sums stored as they are.
template <typename S>
struct ChannelFinish {
    const S* data;
    const double* partials;
    ChannelStat<S>* first_out;   // mean, or sum_grad
    ChannelStat<S>* second_out;  // variance, or sum_grad_centered
    double correction;
    bool moments;
    ChannelLayout layout;

    [[nodiscard]] std::int64_t cost() const { return 2 * layout.pieces; }
    KAEL_HD void operator()(std::int64_t c) const {
        double sum = 0;
        double product = 0;
        for (std::int64_t k = 0; k < layout.pieces; ++k) {
            sum += partials[2 * (c * layout.pieces + k)];
            product += partials[2 * (c * layout.pieces + k) + 1];
        }
        if (!moments) {
            first_out[c] = static_cast<ChannelStat<S>>(sum);
            second_out[c] = static_cast<ChannelStat<S>>(product);
            return;
        }
        const double count = static_cast<double>(layout.outer * layout.inner);
        const double offset = sum / count;
        const double m2 = product - sum * offset;
        const double dof = count - correction > 0 ? count - correction : 0.0;
        first_out[c] =
            static_cast<ChannelStat<S>>(convert_value<double>(data[layout.run(0, c)]) + offset);
        second_out[c] = static_cast<ChannelStat<S>>((m2 < 0 ? 0.0 : m2) / dof);  // NaN stays
    }
};

// out = data * scale[c] + shift[c] (+ other * other_scale[c]), one row of inner values an item,
// computed in the stat type by Fold::affine.
template <typename S, typename Fold = SharedChannelFold>
struct ChannelAffine {
    const S* data;
    const ChannelStat<S>* scale;
    const ChannelStat<S>* shift;
    const S* other;
    const ChannelStat<S>* other_scale;
    S* out;
    ChannelLayout layout;

    [[nodiscard]] std::int64_t cost() const { return layout.inner * (other != nullptr ? 2 : 1); }
    KAEL_HD void operator()(std::int64_t row) const {
        const std::int64_t c = row % layout.channels;
        const std::int64_t begin = row * layout.inner;
        Fold::affine(data + begin, scale[c], shift[c], other != nullptr ? other + begin : nullptr,
                     other != nullptr ? other_scale[c] : ChannelStat<S>{}, out + begin,
                     layout.inner);
    }
};

// The float dtypes and sizes every entry takes (outer * inner > 0, channels > 0).
template <typename Visit>
void with_channels_dtype(const char* entry, kael_dtype dtype, std::int64_t outer,
                         std::int64_t channels, std::int64_t inner, Visit&& visit) {
    if (outer < 0 || channels < 1 || inner < 0 || outer * inner < 1) {
        plugin::invalid(std::string(entry) +
                        ": expected outer * inner > 0 and channels > 0, got outer " +
                        std::to_string(outer) + ", channels " + std::to_string(channels) +
                        ", inner " + std::to_string(inner));
    }
    with_float_storage_dtype(entry, dtype, visit);
}

// The kael_channels table of a plugin whose Launcher runs these tasks; kSelect makes the call's
// device current (or checks it), Fold folds a run (SharedChannelFold's interface).
template <typename Launcher, void (*kSelect)(std::int32_t), typename Fold = SharedChannelFold>
struct ChannelTasks {
    // Moments (grad null) or backward sums into the two per-channel outputs.
    template <typename S>
    static void sums(const ChannelLayout& layout, const S* data, const S* grad,
                     const ChannelStat<S>* mean, double correction, void* first, void* second) {
        const std::int64_t items = layout.channels * layout.pieces;
        const Scratch<Launcher, double> partials(2 * items);
        Launcher::for_each(items,
                           ChannelPartials<S, Fold>{data, grad, mean, partials.get(), layout});
        Launcher::for_each(layout.channels, ChannelFinish<S>{data, partials.get(),
                                                             static_cast<ChannelStat<S>*>(first),
                                                             static_cast<ChannelStat<S>*>(second),
                                                             correction, grad == nullptr, layout});
    }
    static kael_status moments(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels,
                               int64_t inner, const void* data, double correction, void* mean,
                               void* variance) {
        return plugin::guarded("moments", [&] {
            kSelect(device);
            with_channels_dtype("moments", dtype, outer, channels, inner, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                sums<S>(channel_layout(outer, channels, inner), static_cast<const S*>(data),
                        nullptr, nullptr, correction, mean, variance);
            });
        });
    }
    static kael_status backward_sums(int32_t device, kael_dtype dtype, int64_t outer,
                                     int64_t channels, int64_t inner, const void* data,
                                     const void* grad, const void* mean, void* sum_grad,
                                     void* sum_grad_centered) {
        return plugin::guarded("backward_sums", [&] {
            kSelect(device);
            with_channels_dtype("backward_sums", dtype, outer, channels, inner, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                sums<S>(channel_layout(outer, channels, inner), static_cast<const S*>(data),
                        static_cast<const S*>(grad), static_cast<const ChannelStat<S>*>(mean), 0.0,
                        sum_grad, sum_grad_centered);
            });
        });
    }
    static kael_status affine(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels,
                              int64_t inner, const void* data, const void* scale, const void* shift,
                              const void* other, const void* other_scale, void* out) {
        return plugin::guarded("affine", [&] {
            kSelect(device);
            with_channels_dtype("affine", dtype, outer, channels, inner, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                using C = ChannelStat<S>;
                Launcher::for_each(outer * channels,
                                   ChannelAffine<S, Fold>{
                                       static_cast<const S*>(data), static_cast<const C*>(scale),
                                       static_cast<const C*>(shift), static_cast<const S*>(other),
                                       static_cast<const C*>(other_scale), static_cast<S*>(out),
                                       channel_layout(outer, channels, inner)});
            });
        });
    }
    static const kael_channels* table() {
        static const kael_channels made = {sizeof(kael_channels), moments, backward_sums, affine};
        return &made;
    }
};

}  // namespace kael::kernels::tasks
