// KAEL_EXTENSION_CHANNELS on the GPU: per-channel moments and backward sums as one pass of
// blocks over (channel, piece of the outer rows), each block's threads reading its rows in
// order (four values a load where the rows allow), then one thread per channel adding the
// pieces in order; the affine map as a flat elementwise pass. The sums are the shared tasks'
// (tasks/channels.h): double shifted sums that add without a merge formula.
#include <cstdint>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/int_divider.h"
#include "kael/kernels/tasks/channels.h"

namespace kael::cuda {

namespace {

namespace tasks = kernels::tasks;
using Divider = kernels::IntDivider<std::uint32_t>;
template <typename S>
using Stat = tasks::ChannelStat<S>;

constexpr int kThreads = 256;
constexpr int kPack = 4;  // values a load where inner % 4 == 0 and the buffers are aligned

template <typename S>
struct alignas(sizeof(S) * kPack) Pack {
    S v[kPack];
};

// Where a piece's flat position (packs of kPack when packed) lies: row n of the piece's channel
// and the offset in that row.
struct Walk {
    std::uint32_t channels;
    std::uint32_t units;  // per row (values, or packs)
    Divider per_row;
};

template <typename S, bool kPacked>
__device__ inline void add_unit(const S* data, const S* grad, double center, std::uint32_t at,
                                double& sum, double& product) {
    constexpr int kCount = kPacked ? kPack : 1;
    S values[kCount];
    S grads[kCount];
    if constexpr (kPacked) {
        const Pack<S> v = reinterpret_cast<const Pack<S>*>(data)[at];
        for (int k = 0; k < kPack; ++k) {
            values[k] = v.v[k];
        }
        if (grad != nullptr) {
            const Pack<S> g = reinterpret_cast<const Pack<S>*>(grad)[at];
            for (int k = 0; k < kPack; ++k) {
                grads[k] = g.v[k];
            }
        }
    } else {
        values[0] = data[at];
        if (grad != nullptr) {
            grads[0] = grad[at];
        }
    }
    for (int k = 0; k < kCount; ++k) {
        const double d = kernels::convert_value<double>(values[k]) - center;
        const double g = grad != nullptr ? kernels::convert_value<double>(grads[k]) : d;
        sum += g;
        product += g * d;
    }
}

// One item's values (item = channel * pieces + piece) into a thread's sums: the thread at `lane`
// of the `width` that share the item takes every width-th unit of its rows.
template <typename S, bool kPacked>
__device__ inline void fold_item(const S* data, const S* grad, const Stat<S>* mean,
                                 const Walk& walk, std::uint32_t item, std::uint32_t pieces,
                                 std::uint32_t per, std::uint32_t outer, std::uint32_t lane,
                                 std::uint32_t width, double& sum, double& product) {
    const std::uint32_t c = item / pieces;
    const std::uint32_t first = item % pieces * per;
    const std::uint32_t last = min(outer, first + per);
    const double center =
        grad != nullptr
            ? static_cast<double>(mean[c])
            : kernels::convert_value<double>(data[c * walk.units * (kPacked ? kPack : 1)]);
    const std::uint32_t count = (last - first) * walk.units;
    for (std::uint32_t i = lane; i < count; i += width) {
        const std::uint32_t row = walk.per_row.divide(i);
        const std::uint32_t n = first + row;
        const std::uint32_t at = (n * walk.channels + c) * walk.units + (i - row * walk.units);
        add_unit<S, kPacked>(data, grad, center, at, sum, product);
    }
}

__device__ inline void warp_add(double& sum, double& product) {
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffU, sum, offset);
        product += __shfl_down_sync(0xffffffffU, product, offset);
    }
}

// Items of at most kWarpUnits units, a warp each (GroupNorm's per-channel sums over 196
// positions, BatchNorm1d's columns): a block each left most of its threads idle.
constexpr std::int64_t kWarpUnits = 1024;

template <typename S, bool kPacked>
__global__ void __launch_bounds__(kThreads)
    channel_partials_by_warp(const S* data, const S* grad, const Stat<S>* mean, double* partials,
                             Walk walk, std::uint32_t pieces, std::uint32_t per,
                             std::uint32_t outer, std::uint32_t items) {
    const std::uint32_t item = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
    if (item >= items) {
        return;  // the whole warp: items are whole warps
    }
    double sum = 0;
    double product = 0;
    fold_item<S, kPacked>(data, grad, mean, walk, item, pieces, per, outer, threadIdx.x % 32, 32,
                          sum, product);
    warp_add(sum, product);
    if (threadIdx.x % 32 == 0) {
        partials[2 * item] = sum;
        partials[2 * item + 1] = product;
    }
}

// partials[2 * block] and [2 * block + 1]: block = channel * pieces + piece.
template <typename S, bool kPacked>
__global__ void __launch_bounds__(kThreads)
    channel_partials(const S* data, const S* grad, const Stat<S>* mean, double* partials, Walk walk,
                     std::uint32_t pieces, std::uint32_t per, std::uint32_t outer) {
    double sum = 0;
    double product = 0;
    fold_item<S, kPacked>(data, grad, mean, walk, blockIdx.x, pieces, per, outer, threadIdx.x,
                          kThreads, sum, product);
    warp_add(sum, product);
    __shared__ double warp_sums[kThreads / 32][2];
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int warp = static_cast<int>(threadIdx.x / 32);
    if (lane == 0) {
        warp_sums[warp][0] = sum;
        warp_sums[warp][1] = product;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double total[2] = {0, 0};
        for (int w = 0; w < kThreads / 32; ++w) {
            total[0] += warp_sums[w][0];
            total[1] += warp_sums[w][1];
        }
        partials[2 * blockIdx.x] = total[0];
        partials[2 * blockIdx.x + 1] = total[1];
    }
}

// out = data * scale[c] + shift[c] (+ other * other_scale[c]), a unit (value or pack) a step.
template <typename S, bool kPacked>
__global__ void __launch_bounds__(kThreads)
    channel_affine(const S* data, const Stat<S>* scale, const Stat<S>* shift, const S* other,
                   const Stat<S>* other_scale, S* out, std::uint32_t units_total, Divider per_row,
                   Divider channels) {
    using C = Stat<S>;
    constexpr int kCount = kPacked ? kPack : 1;
    for (std::uint32_t u = blockIdx.x * kThreads + threadIdx.x; u < units_total;
         u += gridDim.x * kThreads) {
        const std::uint32_t row = per_row.divide(u);
        const std::uint32_t c = row - channels.divide(row) * channels.divisor;
        const C a = scale[c];
        const C b = shift[c];
        const C o = other != nullptr ? other_scale[c] : C(0);
        Pack<S> x;
        Pack<S> y;
        Pack<S> result;
        if constexpr (kPacked) {
            x = reinterpret_cast<const Pack<S>*>(data)[u];
            if (other != nullptr) {
                y = reinterpret_cast<const Pack<S>*>(other)[u];
            }
        } else {
            x.v[0] = data[u];
            if (other != nullptr) {
                y.v[0] = other[u];
            }
        }
        for (int k = 0; k < kCount; ++k) {
            C value = kernels::convert_value<C>(x.v[k]) * a + b;
            if (other != nullptr) {
                value += kernels::convert_value<C>(y.v[k]) * o;
            }
            result.v[k] = kernels::convert_value<S>(value);
        }
        if constexpr (kPacked) {
            reinterpret_cast<Pack<S>*>(out)[u] = result;
        } else {
            out[u] = result.v[0];
        }
    }
}

bool aligned(const void* p, std::size_t bytes) {
    return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// 32-bit positions: larger calls are declined (the core composes them).
void check_size(const char* entry, std::int64_t outer, std::int64_t channels, std::int64_t inner) {
    if (outer * channels * inner >= (std::int64_t{1} << 31)) {
        plugin::unsupported(std::string(entry) + " takes fewer than 2^31 values");
    }
}

template <typename S>
void channel_sums(std::int64_t outer, std::int64_t channels, std::int64_t inner, const S* data,
                  const S* grad, const Stat<S>* mean, double correction, void* first,
                  void* second) {
    const bool packed =
        inner % kPack == 0 && aligned(data, sizeof(S) * kPack) && aligned(grad, sizeof(S) * kPack);
    const std::int64_t units = packed ? inner / kPack : inner;
    // About four blocks a multiprocessor in all, each of at least 2^13 values.
    const std::int64_t wanted_blocks =
        4 *
        std::int64_t{
            resident_blocks(reinterpret_cast<const void*>(&channel_partials<S, true>), kThreads)} /
        8;
    std::int64_t pieces = std::max<std::int64_t>(1, tasks::ceil_div(wanted_blocks, channels));
    pieces =
        std::min<std::int64_t>({pieces, outer, std::max<std::int64_t>(1, outer * inner >> 13)});
    const std::int64_t per = tasks::ceil_div(outer, pieces);
    pieces = tasks::ceil_div(outer, per);
    const tasks::ChannelLayout layout{outer, channels, inner, pieces, per};
    const tasks::Scratch<Launcher, double> partials(2 * channels * pieces);
    const Walk walk{static_cast<std::uint32_t>(channels), static_cast<std::uint32_t>(units),
                    Divider(static_cast<std::uint32_t>(units))};
    const std::int64_t items = channels * pieces;
    const bool by_warp = per * units <= kWarpUnits;
    const auto launch = [&](auto block_kernel, auto warp_kernel) {
        if (by_warp) {
            warp_kernel<<<static_cast<unsigned>(tasks::ceil_div(items, kThreads / 32)), kThreads, 0,
                          launch_stream()>>>(
                data, grad, mean, partials.get(), walk, static_cast<std::uint32_t>(pieces),
                static_cast<std::uint32_t>(per), static_cast<std::uint32_t>(outer),
                static_cast<std::uint32_t>(items));
        } else {
            block_kernel<<<static_cast<unsigned>(items), kThreads, 0, launch_stream()>>>(
                data, grad, mean, partials.get(), walk, static_cast<std::uint32_t>(pieces),
                static_cast<std::uint32_t>(per), static_cast<std::uint32_t>(outer));
        }
        check_launch(typeid(S), __FILE__, __LINE__);
    };
    if (packed) {
        launch(&channel_partials<S, true>, &channel_partials_by_warp<S, true>);
    } else {
        launch(&channel_partials<S, false>, &channel_partials_by_warp<S, false>);
    }
    Launcher::for_each(channels,
                       tasks::ChannelFinish<S>{data, partials.get(), static_cast<Stat<S>*>(first),
                                               static_cast<Stat<S>*>(second), correction,
                                               grad == nullptr, layout});
}

kael_status moments(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels,
                    int64_t inner, const void* data, double correction, void* mean,
                    void* variance) {
    return plugin::guarded("moments", [&] {
        use_device(device);
        tasks::with_channels_dtype("moments", dtype, outer, channels, inner, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            check_size("moments", outer, channels, inner);
            channel_sums<S>(outer, channels, inner, static_cast<const S*>(data), nullptr, nullptr,
                            correction, mean, variance);
        });
    });
}

kael_status backward_sums(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels,
                          int64_t inner, const void* data, const void* grad, const void* mean,
                          void* sum_grad, void* sum_grad_centered) {
    return plugin::guarded("backward_sums", [&] {
        use_device(device);
        tasks::with_channels_dtype("backward_sums", dtype, outer, channels, inner, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            check_size("backward_sums", outer, channels, inner);
            channel_sums<S>(outer, channels, inner, static_cast<const S*>(data),
                            static_cast<const S*>(grad), static_cast<const Stat<S>*>(mean), 0.0,
                            sum_grad, sum_grad_centered);
        });
    });
}

kael_status affine(int32_t device, kael_dtype dtype, int64_t outer, int64_t channels, int64_t inner,
                   const void* data, const void* scale, const void* shift, const void* other,
                   const void* other_scale, void* out) {
    return plugin::guarded("affine", [&] {
        use_device(device);
        tasks::with_channels_dtype("affine", dtype, outer, channels, inner, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            using C = Stat<S>;
            check_size("affine", outer, channels, inner);
            const std::size_t bytes = sizeof(S) * kPack;
            const bool packed = inner % kPack == 0 && aligned(data, bytes) &&
                                aligned(other, bytes) && aligned(out, bytes);
            const std::int64_t units = packed ? inner / kPack : inner;
            const std::int64_t total = outer * channels * units;
            const auto launch = [&](auto kernel) {
                const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel),
                                               blocks_for(total, kThreads), kThreads);
                kernel<<<blocks, kThreads, 0, launch_stream()>>>(
                    static_cast<const S*>(data), static_cast<const C*>(scale),
                    static_cast<const C*>(shift), static_cast<const S*>(other),
                    static_cast<const C*>(other_scale), static_cast<S*>(out),
                    static_cast<std::uint32_t>(total), Divider(static_cast<std::uint32_t>(units)),
                    Divider(static_cast<std::uint32_t>(channels)));
                check_launch(typeid(S), __FILE__, __LINE__);
            };
            if (packed) {
                launch(&channel_affine<S, true>);
            } else {
                launch(&channel_affine<S, false>);
            }
        });
    });
}

}  // namespace

const kael_channels* channels() {
    static const kael_channels made = {sizeof(kael_channels), moments, backward_sums, affine};
    return &made;
}

}  // namespace kael::cuda
