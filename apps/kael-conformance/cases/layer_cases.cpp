// Conformance of the layer extensions (KAEL_EXTENSION_CONVOLUTION, _POOLING, _RECURRENT):
// forward and every gradient through autograd, on the device against cpu, over 1-3 spatial
// dims, stride, dilation, groups (depthwise too), even and uneven padding (which cuDNN declines,
// so the core composes), inputs contiguous, channels-last, strided and empty, in every float
// dtype. A device without the extensions runs the core's composed path, checked the same way.
#include <utility>

#include "conformance.h"
#include "kael/nn_conv.h"
#include "kael/nn_rnn.h"

using namespace conformance;
namespace F = kael::nn::functional;

namespace {

struct Geometry {
    std::string name;
    Shape input;   // [N, C, *S]
    Shape weight;  // [OC, C / groups, *K]
    Shape stride, padding, dilation;
    std::int64_t groups = 1;
    bool same = false;  // padding "same" (uneven for an even kernel)
};

std::vector<Geometry> geometries() {
    return {
        {"conv1d", {2, 4, 9}, {6, 4, 3}, {2}, {1}, {1}},
        {"conv2d", {2, 4, 7, 8}, {6, 4, 3, 3}, {1}, {1}, {1}},
        {"conv2d_strided_dilated", {2, 3, 9, 10}, {4, 3, 3, 2}, {2, 1}, {2, 1}, {2, 1}},
        {"conv2d_groups", {2, 4, 6, 6}, {6, 2, 3, 3}, {1}, {0}, {1}, 2},
        {"conv2d_depthwise", {2, 4, 6, 5}, {4, 1, 3, 3}, {1}, {1}, {1}, 4},
        {"conv2d_1x1", {3, 5, 4, 4}, {7, 5, 1, 1}, {1}, {0}, {1}},
        // One sample: the cuda plugin's pointwise weight gradient is then a single product.
        {"conv1d_1x1_one_sample", {1, 6, 5}, {4, 6, 1}, {1}, {0}, {1}},
        {"conv3d_1x1", {2, 3, 2, 3, 2}, {5, 3, 1, 1, 1}, {1}, {0}, {1}},
        {"conv2d_same_even_kernel", {2, 3, 6, 7}, {4, 3, 2, 2}, {1}, {0}, {1}, 1, true},
        {"conv3d", {1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, {1}, {1}, {1}},
        {"conv2d_empty_batch", {0, 3, 5, 5}, {4, 3, 3, 3}, {1}, {1}, {1}},
    };
}

// How the input is laid out: its base shape from the logical [N, C, *S] and the view back.
struct InputLayout {
    std::string name;
    std::function<Shape(const Shape&)> base;
    std::function<Tensor(const Tensor&)> view;
};

std::vector<InputLayout> input_layouts() {
    const auto identity = [](const Shape& s) { return s; };
    // [N, *S, C] in memory, read as [N, C, *S].
    const auto channels_last = [](const Shape& s) {
        Shape base{s[0]};
        base.insert(base.end(), s.begin() + 2, s.end());
        base.push_back(s[1]);
        return base;
    };
    const auto from_channels_last = [](const Tensor& t) {
        Shape order{0, t.dim() - 1};
        for (std::int64_t d = 1; d + 1 < t.dim(); ++d) {
            order.push_back(d);
        }
        return t.permute(order);
    };
    // Every other element of a last dim twice as long.
    const auto doubled = [](const Shape& s) {
        Shape base = s;
        base.back() *= 2;
        return base;
    };
    const auto every_other = [](const Tensor& t) {
        return t.slice(t.dim() - 1, 0, t.size(t.dim() - 1), 2);
    };
    return {{"contiguous", identity, [](const Tensor& t) { return t; }},
            {"channels_last", channels_last, from_channels_last},
            {"strided", doubled, every_other}};
}

Tensor convolve(const Geometry& g, const Tensor& x, const Tensor& w, const Tensor& b) {
    if (g.same) {
        return F::conv(x, w, b, g.stride, "same", g.dilation, g.groups);
    }
    return F::conv(x, w, b, g.stride, g.padding, g.dilation, g.groups);
}

}  // namespace

BOOST_AUTO_TEST_CASE(convolution_forward_and_gradients_every_geometry_layout_dtype) {
    kael::manual_seed(61);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const Geometry& g : geometries()) {
            for (const InputLayout& layout : input_layouts()) {
                const Operand x{values(dtype, layout.base(g.input), false), layout.view};
                const Operand w{values(dtype, g.weight, false)};
                const Operand b{values(dtype, {g.weight[0]}, false)};
                const Shape out_shape = convolve(g, layout.view(x.base), w.base, b.base).shape();
                const Operand grad{values(dtype, out_shape, false)};
                for (const bool with_bias : {true, false}) {
                    BOOST_TEST_CONTEXT("conv, dtype " << dtype_name(dtype) << ", " << g.name
                                                      << ", input " << layout.name
                                                      << (with_bias ? ", bias" : ", no bias")) {
                        run_and_compare(
                            {x, w, b, grad},
                            [&](const Tensors& in) {
                                const Tensor leaf = in[0].detach().set_requires_grad(true);
                                const Tensor weight = in[1].detach().set_requires_grad(true);
                                const Tensor bias =
                                    with_bias ? in[2].detach().set_requires_grad(true) : Tensor();
                                const Tensor out = convolve(g, leaf, weight, bias);
                                out.backward(in[3]);
                                Tensors results{out.detach(), leaf.grad(), weight.grad()};
                                if (with_bias) {
                                    results.push_back(bias.grad());
                                }
                                return results;
                            },
                            matmul_tolerance(30.0));
                    }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(pooling_forward_and_gradient_every_kind_layout_dtype) {
    kael::manual_seed(62);
    struct Pool {
        std::string name;
        bool max;
        F::PoolOptions options;
    };
    const auto options = [](Shape kernel, Shape stride, Shape padding, Shape dilation,
                            bool ceil_mode, bool count_include_pad) {
        F::PoolOptions made;
        made.kernel = std::move(kernel);
        made.stride = std::move(stride);
        made.padding = std::move(padding);
        made.dilation = std::move(dilation);
        made.ceil_mode = ceil_mode;
        made.count_include_pad = count_include_pad;
        return made;
    };
    const std::vector<Pool> pools = {
        {"max_3_stride_2", true, options({3}, {2}, {1}, {1}, false, true)},
        {"max_ceil_dilated", true, options({2}, {2}, {0}, {2}, true, true)},
        {"avg_2", false, options({2}, {}, {0}, {1}, false, true)},
        {"avg_3_padded_exclusive", false, options({3}, {2}, {1}, {1}, false, false)},
        {"avg_ceil", false, options({2}, {2}, {0}, {1}, true, true)},
    };
    const Shape logical{2, 3, 7, 8};
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const InputLayout& layout : input_layouts()) {
            const Operand x{values(dtype, layout.base(logical), false), layout.view};
            for (const Pool& pool : pools) {
                // bf16/f16 values tie within a window, and which of the tied gets the max's
                // gradient is the library's choice (oneDNN's on cpu): float dtypes only there.
                if (pool.max && (dtype == DType::BF16 || dtype == DType::F16)) {
                    continue;
                }
                const Tensor shape_probe = pool.max
                                               ? F::max_pool(layout.view(x.base), 2, pool.options)
                                               : F::avg_pool(layout.view(x.base), 2, pool.options);
                const Operand grad{values(dtype, shape_probe.shape(), false)};
                BOOST_TEST_CONTEXT("pool, dtype " << dtype_name(dtype) << ", " << pool.name
                                                  << ", input " << layout.name) {
                    run_and_compare({x, grad},
                                    [&](const Tensors& in) {
                                        const Tensor leaf = in[0].detach().set_requires_grad(true);
                                        const Tensor out = pool.max
                                                               ? F::max_pool(leaf, 2, pool.options)
                                                               : F::avg_pool(leaf, 2, pool.options);
                                        out.backward(in[1]);
                                        return Tensors{out.detach(), leaf.grad()};
                                    },
                                    {4.0, false});
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(recurrent_cells_forward_and_gradients_every_dtype) {
    kael::manual_seed(63);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const Shape& state_shape : {Shape{3, 5}, Shape{1, 64}, Shape{7}, Shape{0, 4}}) {
            for (const auto& [mode, gates] : {std::pair<std::string, std::int64_t>{"LSTM", 4},
                                              std::pair<std::string, std::int64_t>{"GRU", 3}}) {
                Shape gates_shape = state_shape;
                gates_shape.back() *= gates;
                const Operand x_gates{values(dtype, gates_shape, false)};
                const Operand h_gates{values(dtype, gates_shape, false)};
                const Operand state{values(dtype, state_shape, false)};
                const Operand grad_hidden{values(dtype, state_shape, false)};
                const Operand grad_cell{values(dtype, state_shape, false)};
                BOOST_TEST_CONTEXT(mode << " cell, dtype " << dtype_name(dtype) << ", state "
                                        << kael::to_string(state_shape)) {
                    run_and_compare(
                        {x_gates, h_gates, state, grad_hidden, grad_cell},
                        [&](const Tensors& in) {
                            const Tensor xg = in[0].detach().set_requires_grad(true);
                            const Tensor hg = in[1].detach().set_requires_grad(true);
                            const Tensor s = in[2].detach().set_requires_grad(true);
                            const bool lstm = mode == "LSTM";
                            // The LSTM's state is its cell (its hidden state is not read).
                            const std::vector<Tensor> next = kael::nn::functional::rnn_cell(
                                mode, xg, hg, lstm ? Tensor() : s, lstm ? s : Tensor());
                            Tensor loss = next[0] * in[3];
                            if (lstm) {
                                loss = loss + next[1] * in[4];
                            }
                            kael::sum(loss).backward();
                            Tensors results{next[0].detach(), xg.grad(), hg.grad(), s.grad()};
                            if (lstm) {
                                results.push_back(next[1].detach());
                            }
                            return results;
                        },
                        // A plugin without the fused cells composes them, rounding each op's
                        // result to bf16/f16: some elements land a few of the dtype's steps away.
                        {30.0, false});
                }
            }
        }
    }
}
