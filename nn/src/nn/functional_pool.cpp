// Pooling (nn_conv.h): the device plugin's pooling where it has one (functional_pool_plugin.cpp),
// else one kernel offset at a time (functional_pool_slices.cpp), and a composed form from
// sliding windows for double backward. Max pooling's indices come from a plane of input
// positions pooled the same way, so no index arithmetic runs per element.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/nn_functional.h"
#include "kael/plugin_api.h"  // KAEL_POOL_*
#include "nn_internal.h"

namespace kael::nn::functional {

namespace {

using Geometry = detail::PoolGeometry;

Geometry geometry(const Tensor& input, std::int64_t spatial, const PoolOptions& options,
                  const char* op) {
    Geometry g;
    g.kernel = detail::per_spatial_dim(options.kernel, spatial, op, "kernel_size");
    g.stride = options.stride.empty()
                   ? g.kernel
                   : detail::per_spatial_dim(options.stride, spatial, op, "stride");
    g.padding = detail::per_spatial_dim(options.padding, spatial, op, "padding");
    g.dilation = detail::per_spatial_dim(options.dilation, spatial, op, "dilation");
    g.out.resize(static_cast<std::size_t>(spatial));
    for (std::int64_t i = spatial; i-- > 0;) {
        const auto u = static_cast<std::size_t>(i);
        const std::int64_t size = input.size(input.dim() - spatial + i);
        const std::int64_t span = g.dilation[u] * (g.kernel[u] - 1) + 1;
        if (g.kernel[u] < 1 || g.stride[u] < 1 || g.padding[u] < 0 ||
            g.padding[u] * 2 > g.kernel[u]) {
            throw ValueError(std::string(op) +
                             ": pad should be at most half of the kernel size "
                             "and sizes positive; got kernel " +
                             to_string(g.kernel) + ", padding " + to_string(g.padding));
        }
        const std::int64_t room = size + 2 * g.padding[u] - span;
        if (room < 0) {
            throw ValueError(std::string(op) + ": output size is too small for input " +
                             to_string(input.shape()));
        }
        std::int64_t out = room / g.stride[u] + 1;
        if (options.ceil_mode && room % g.stride[u] != 0) {
            ++out;
            if ((out - 1) * g.stride[u] >= size + g.padding[u]) {
                --out;  // the last window must start inside the input or its left padding
            }
        }
        g.out[u] = out;
        const std::int64_t extra =
            std::max<std::int64_t>((out - 1) * g.stride[u] + span - (size + 2 * g.padding[u]), 0);
        g.regular_pairs.insert(g.regular_pairs.end(), {g.padding[u], g.padding[u]});
        g.extra_pairs.insert(g.extra_pairs.end(), {0, extra});
    }
    return g;
}

Tensor batched(const Tensor& input, std::int64_t spatial, const char* op) {
    if (input.dim() == spatial + 1) {
        return input.unsqueeze(0);
    }
    if (input.dim() != spatial + 2) {
        throw ValueError(std::string(op) + ": expected a " + std::to_string(spatial + 1) +
                         "-d or " + std::to_string(spatial + 2) + "-d input, got " +
                         to_string(input.shape()));
    }
    return input;
}

// [N, *O, C] (a reduction of the windows) as [N, C, *O].
Tensor channels_first(const Tensor& t, std::int64_t spatial) {
    Shape order{0, spatial + 1};
    for (std::int64_t i = 0; i < spatial; ++i) {
        order.push_back(i + 1);
    }
    return t.permute(order).contiguous();
}

Shape trailing(std::int64_t from, std::int64_t count) {
    Shape dims;
    for (std::int64_t i = 0; i < count; ++i) {
        dims.push_back(from + i);
    }
    return dims;
}

// The flat position of every element of an input plane [1, 1, *S] (int64).
Tensor positions(const Tensor& x, std::int64_t spatial) {
    Shape plane{1, 1};
    std::int64_t count = 1;
    for (std::int64_t i = 0; i < spatial; ++i) {
        plane.push_back(x.size(2 + i));
        count *= x.size(2 + i);
    }
    return arange_int(0, count, 1, DType::I64, x.device()).reshape(plane);
}

}  // namespace

namespace {

// Max pooling of the batched x from copies of its windows and max(dim): differentiable
// through ops, the sliced path's double backward.
std::pair<Tensor, Tensor> composed_max_pool(const Tensor& x, const Geometry& g,
                                            std::int64_t spatial) {
    const auto pooled_windows = [&](const Tensor& plane, double fill) {
        return sliding_windows(pad(pad(plane, g.regular_pairs, fill), g.extra_pairs, fill),
                               g.kernel, g.stride, g.dilation);
    };
    const Tensor windows =
        pooled_windows(x, -std::numeric_limits<double>::infinity());  // [N, *O, C, *K]
    Shape flat(windows.shape().begin(), windows.shape().begin() + spatial + 2);
    flat.push_back(-1);
    auto [values, picked] = max_with_indices(windows.reshape(flat), -1);  // [N, *O, C]
    Tensor where_from;
    {
        const NoGradGuard no_grad;
        Shape plane_flat = flat;  // [1, *O, 1, K]
        plane_flat.front() = 1;
        plane_flat[static_cast<std::size_t>(spatial) + 1] = 1;
        const Tensor places = pooled_windows(positions(x, spatial), -1.0).reshape(plane_flat);
        Shape wide = values.shape();
        wide.push_back(places.size(-1));
        where_from = gather(places.expand(wide), -1, picked.unsqueeze(-1)).squeeze(-1);
    }
    return {channels_first(values, spatial), channels_first(where_from, spatial)};
}

// The sums of the batched x's windows over divisor [1, 1, *O] (or a number), from copies of
// its windows.
Tensor composed_avg_pool(const Tensor& x, const Geometry& g, std::int64_t spatial,
                         const Tensor& divisor) {
    const Tensor windows = sliding_windows(pad(pad(x, g.regular_pairs, 0.0), g.extra_pairs, 0.0),
                                           g.kernel, g.stride, g.dilation);
    return channels_first(sum(windows, trailing(spatial + 2, spatial)), spatial) / divisor;
}

}  // namespace

std::pair<Tensor, Tensor> max_pool_with_indices(const Tensor& input, std::int64_t spatial,
                                                const PoolOptions& options) {
    const char* op = "max_pool";
    const Tensor x = batched(input, spatial, op);
    const Geometry g = geometry(x, spatial, options, op);
    if (!is_floating(x.dtype())) {
        throw TypeError("max_pool: expected a floating input, got " + to_string(x.dtype()));
    }
    auto [result, indices] = detail::sliced_max_pool(
        x, g, [g, spatial](const Tensor& in) { return composed_max_pool(in, g, spatial).first; });
    if (input.dim() == spatial + 1) {
        return {result.squeeze(0), indices.squeeze(0)};
    }
    return {result, indices};
}

Tensor max_pool(const Tensor& input, std::int64_t spatial, const PoolOptions& options) {
    const Tensor x = batched(input, spatial, "max_pool");
    const Geometry g = geometry(x, spatial, options, "max_pool");
    if (is_floating(x.dtype())) {  // without indices the plugin's pooling may serve it
        const Tensor pooled = detail::plugin_pool(
            x, g, KAEL_POOL_MAX,
            [g, spatial](const Tensor& in) { return composed_max_pool(in, g, spatial).first; });
        if (pooled.defined()) {
            return input.dim() == spatial + 1 ? pooled.squeeze(0) : pooled;
        }
    }
    return max_pool_with_indices(input, spatial, options).first;
}

Tensor avg_pool(const Tensor& input, std::int64_t spatial, const PoolOptions& options) {
    const char* op = "avg_pool";
    if (options.dilation.size() != 1 || options.dilation[0] != 1) {
        throw ValueError("avg_pool: dilation is not an option of average pooling");
    }
    const Tensor x = batched(input, spatial, op);
    const Geometry g = geometry(x, spatial, options, op);
    Tensor divisor;  // [1, 1, *O]: the window's cells inside the (padded) input, or the override
    {
        const NoGradGuard no_grad;
        if (options.divisor_override) {
            if (*options.divisor_override == 0) {
                throw ValueError("avg_pool: divisor_override must be non-zero");
            }
            divisor =
                full({}, static_cast<double>(*options.divisor_override), x.dtype(), x.device());
        } else {
            Shape plane{1, 1};
            for (std::int64_t i = 0; i < spatial; ++i) {
                plane.push_back(x.size(2 + i));
            }
            const Tensor ones_plane = ones(plane, x.dtype(), x.device());
            const Tensor mask =
                pad(pad(ones_plane, g.regular_pairs, options.count_include_pad ? 1.0 : 0.0),
                    g.extra_pairs, 0.0);
            divisor = channels_first(sum(sliding_windows(mask, g.kernel, g.stride, g.dilation),
                                         trailing(spatial + 2, spatial)),
                                     spatial);
        }
    }
    const detail::Recompute composed = [g, spatial, divisor](const Tensor& in) {
        return composed_avg_pool(in, g, spatial, divisor);
    };
    // The plugin's pooling counts cells as PyTorch does except past the padding (ceil_mode's
    // last window with count_include_pad) and for a divisor_override: those stay here.
    bool beyond_padding = false;
    for (const std::int64_t extra : g.extra_pairs) {
        beyond_padding = beyond_padding || extra != 0;
    }
    Tensor result;
    if (!options.divisor_override && !(options.count_include_pad && beyond_padding)) {
        result = detail::plugin_pool(x, g,
                                     options.count_include_pad ? KAEL_POOL_AVG_INCLUDE_PADDING
                                                               : KAEL_POOL_AVG_EXCLUDE_PADDING,
                                     composed);
    }
    if (!result.defined()) {
        result = detail::sliced_avg_pool(x, g, divisor, composed);
    }
    return input.dim() == spatial + 1 ? result.squeeze(0) : result;
}

Tensor adaptive_avg_pool(const Tensor& input, const Shape& output_size) {
    const auto spatial = static_cast<std::int64_t>(output_size.size());
    Tensor x = batched(input, spatial, "adaptive_avg_pool");
    // One bin per plane (global average pooling, ResNet's head): the mean over the spatial dims,
    // one contiguous reduction whose backward is a broadcast, as PyTorch does for it.
    bool global = is_floating(x.dtype()) && x.numel() > 0;
    Shape planes;
    for (std::int64_t i = 0; i < spatial; ++i) {
        global = global && output_size[static_cast<std::size_t>(i)] == 1;
        planes.push_back(2 + i);
    }
    if (global) {
        const Tensor pooled = mean(x, planes, true);
        return input.dim() == spatial + 1 ? pooled.squeeze(0) : pooled;
    }
    // Equal bins in every dim: an average pool with the bin as kernel and stride (the
    // plugin's pooling where it has one).
    PoolOptions even;
    for (std::int64_t i = 0; i < spatial; ++i) {
        const std::int64_t out = output_size[static_cast<std::size_t>(i)];
        if (out < 1 || x.size(2 + i) % out != 0 || x.size(2 + i) == 0) {
            even.kernel.clear();
            break;
        }
        even.kernel.push_back(x.size(2 + i) / out);
    }
    if (!even.kernel.empty() && is_floating(x.dtype())) {
        const Tensor pooled = avg_pool(x, spatial, even);
        return input.dim() == spatial + 1 ? pooled.squeeze(0) : pooled;
    }
    // Separable: each spatial dim's bins averaged in turn.
    for (std::int64_t i = 0; i < spatial; ++i) {
        const std::int64_t dim = 2 + i;
        const std::int64_t size = x.size(dim);
        const std::int64_t out = output_size[static_cast<std::size_t>(i)];
        if (out < 1 && !(out == 0 && size == 0)) {
            throw ValueError("adaptive_avg_pool: output sizes must be positive, got " +
                             to_string(output_size));
        }
        if (out > 0 && size % out == 0) {  // equal bins: one reshape
            Shape split = x.shape();
            split[static_cast<std::size_t>(dim)] = out;
            split.insert(split.begin() + dim + 1, size / out);
            x = mean(x.reshape(split), dim + 1);
            continue;
        }
        std::vector<Tensor> bins;
        for (std::int64_t j = 0; j < out; ++j) {
            const std::int64_t start = j * size / out;
            const std::int64_t end = ((j + 1) * size + out - 1) / out;
            bins.push_back(mean(narrow(x, dim, start, end - start), dim, true));
        }
        x = cat(bins, dim);
    }
    return input.dim() == spatial + 1 ? x.squeeze(0) : x;
}

std::pair<Tensor, Tensor> adaptive_max_pool_with_indices(const Tensor& input,
                                                         const Shape& output_size) {
    const auto spatial = static_cast<std::int64_t>(output_size.size());
    const Tensor x = batched(input, spatial, "adaptive_max_pool");
    bool even = true;
    for (std::int64_t i = 0; i < spatial; ++i) {
        const std::int64_t out = output_size[static_cast<std::size_t>(i)];
        if (out < 1) {
            throw ValueError("adaptive_max_pool: output sizes must be positive, got " +
                             to_string(output_size));
        }
        even = even && x.size(2 + i) % out == 0;
    }
    std::pair<Tensor, Tensor> result;
    if (even) {  // equal bins: a max pool with the bin as kernel and stride
        PoolOptions options;
        for (std::int64_t i = 0; i < spatial; ++i) {
            options.kernel.push_back(x.size(2 + i) / output_size[static_cast<std::size_t>(i)]);
        }
        result = max_pool_with_indices(x, spatial, options);
    } else {  // one box per output position, its positions gathered as max_pool's are
        const Tensor places = positions(x, spatial);
        std::vector<Tensor> values;
        std::vector<Tensor> indices;
        Shape position(static_cast<std::size_t>(spatial), 0);
        std::int64_t count = 1;
        for (const std::int64_t out : output_size) {
            count *= out;
        }
        for (std::int64_t n = 0; n < count; ++n) {
            Tensor box = x;
            Tensor box_places = places;
            for (std::int64_t i = 0; i < spatial; ++i) {
                const auto u = static_cast<std::size_t>(i);
                const std::int64_t size = x.size(2 + i);
                const std::int64_t start = position[u] * size / output_size[u];
                const std::int64_t end =
                    ((position[u] + 1) * size + output_size[u] - 1) / output_size[u];
                box = narrow(box, 2 + i, start, end - start);
                box_places = narrow(box_places, 2 + i, start, end - start);
            }
            auto [value, picked] = max_with_indices(box.reshape({x.size(0), x.size(1), -1}), -1);
            values.push_back(value);
            indices.push_back(gather(box_places.reshape({1, 1, -1})
                                         .expand({x.size(0), x.size(1), box_places.numel()}),
                                     -1, picked.unsqueeze(-1))
                                  .squeeze(-1));
            for (std::int64_t i = spatial; i-- > 0;) {
                if (++position[static_cast<std::size_t>(i)] <
                    output_size[static_cast<std::size_t>(i)]) {
                    break;
                }
                position[static_cast<std::size_t>(i)] = 0;
            }
        }
        Shape shape{x.size(0), x.size(1)};
        shape.insert(shape.end(), output_size.begin(), output_size.end());
        result = {stack(values, -1).reshape(shape), stack(indices, -1).reshape(shape)};
    }
    if (input.dim() == spatial + 1) {
        return {result.first.squeeze(0), result.second.squeeze(0)};
    }
    return result;
}

}  // namespace kael::nn::functional
