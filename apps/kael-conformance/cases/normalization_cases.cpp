// Conformance of the per-channel kernels (KAEL_EXTENSION_CHANNELS) through their callers:
// BatchNorm's training step (output, running statistics, and the gradients of input, weight and
// bias) and var/std over the dims on both sides of one kept run, on the device against cpu, in
// every float dtype, inputs contiguous, channels-last and strided. A device without the
// extension composes both, checked the same way.
#include <utility>

#include "conformance.h"
#include "kael/nn_conv.h"

using namespace conformance;
namespace F = kael::nn::functional;

namespace {

// [N, C, *S] read from memory laid out as given.
std::vector<View> channel_views(const Shape& logical) {
    Shape last{logical[0]};
    last.insert(last.end(), logical.begin() + 2, logical.end());
    last.push_back(logical[1]);
    Shape doubled = logical;
    doubled.back() *= 2;
    return {{"contiguous", logical},
            {"channels_last", last,
             [](const Tensor& t) {
                 Shape order{0, t.dim() - 1};
                 for (std::int64_t d = 1; d + 1 < t.dim(); ++d) {
                     order.push_back(d);
                 }
                 return t.permute(order);
             }},
            {"strided", doubled,
             [](const Tensor& t) { return t.slice(t.dim() - 1, 0, t.size(t.dim() - 1), 2); }}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(batch_norm_training_every_layout_dtype) {
    kael::manual_seed(64);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        // The last shape's channels are long enough for a GPU block each (the others a warp).
        for (const Shape& logical :
             {Shape{4, 3, 5, 6}, Shape{8, 5}, Shape{3, 4, 7}, Shape{2, 3, 1, 1},
              Shape{2, 2, 3, 2, 2}, Shape{4, 3, 40, 40}}) {
            // The long channels' weight gradient sums 6400 products that a plugin without the
            // kernels rounds one by one in bf16/f16: float dtypes only there.
            if (logical.back() == 40 && (dtype == DType::BF16 || dtype == DType::F16)) {
                continue;
            }
            for (const View& view : channel_views(logical)) {
                const Shape channel{logical[1]};
                const Operand x{values(dtype, view.base, false), view.view};
                const Operand weight{values(dtype, channel, false)};
                const Operand bias{values(dtype, channel, false)};
                const Operand running_mean{values(DType::F32, channel, false)};
                const Operand running_var{kael::abs(values(DType::F32, channel, false))};
                const Operand grad{values(dtype, logical, false)};
                BOOST_TEST_CONTEXT("batch_norm, dtype " << dtype_name(dtype) << ", input "
                                                        << kael::to_string(logical) << " "
                                                        << view.name) {
                    run_and_compare(
                        {x, weight, bias, running_mean, running_var, grad},
                        [&](const Tensors& in) {
                            const Tensor leaf = in[0].detach().set_requires_grad(true);
                            const Tensor w = in[1].detach().set_requires_grad(true);
                            const Tensor b = in[2].detach().set_requires_grad(true);
                            const Tensor out =
                                F::batch_norm(leaf, in[3], in[4], w, b, true, 0.1, 1e-5);
                            out.backward(in[5]);
                            return Tensors{out.detach(), leaf.grad(), w.grad(), b.grad()};
                        },
                        // bf16/f16: the composed form rounds each op's result to the dtype.
                        {30.0, false, 1e-4});
                }
            }
        }
    }
}

// The per-channel scale and shift: BatchNorm in evaluation and GroupNorm's weight and bias.
BOOST_AUTO_TEST_CASE(batch_norm_eval_and_group_norm_every_layout_dtype) {
    kael::manual_seed(66);
    const Shape logical{3, 4, 5, 2};
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const View& view : channel_views(logical)) {
            const Operand x{values(dtype, view.base, false), view.view};
            const Operand weight{values(dtype, {4}, false)};
            const Operand bias{values(dtype, {4}, false)};
            const Operand running_mean{values(dtype, {4}, false)};
            const Operand running_var{kael::abs(values(dtype, {4}, false))};
            const Operand grad{values(dtype, logical, false)};
            BOOST_TEST_CONTEXT("eval batch_norm and group_norm, dtype " << dtype_name(dtype) << ", "
                                                                        << view.name) {
                run_and_compare(
                    {x, weight, bias, running_mean, running_var, grad},
                    [&](const Tensors& in) {
                        Tensors results;
                        for (const bool group : {false, true}) {
                            const Tensor leaf = in[0].detach().set_requires_grad(true);
                            const Tensor w = in[1].detach().set_requires_grad(true);
                            const Tensor b = in[2].detach().set_requires_grad(true);
                            const Tensor out =
                                group ? F::group_norm(leaf, 2, w, b, 1e-5)
                                      : F::batch_norm(leaf, in[3], in[4], w, b, false, 0.1, 1e-5);
                            out.backward(in[5]);
                            results.insert(results.end(),
                                           {out.detach(), leaf.grad(), w.grad(), b.grad()});
                        }
                        return results;
                    },
                    {30.0, false, 1e-4});
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(var_and_std_around_one_kept_run_every_layout_dtype) {
    kael::manual_seed(65);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const View& view : channel_views({6, 5, 9})) {  // (a warp a channel on a GPU)
            // A large mean beside a small spread: the moments must not lose it.
            const Operand x{values(dtype, view.base, false) * 0.01 + 100.0, view.view};
            for (const std::int64_t correction : {0, 1, 60}) {
                BOOST_TEST_CONTEXT("var/std over dims (0, 2), dtype "
                                   << dtype_name(dtype) << ", " << view.name << ", correction "
                                   << correction) {
                    run_and_compare({x}, [&](const Tensors& in) {
                        return Tensors{kael::var(in[0], Shape{0, 2}, correction, false),
                                       kael::stddev(in[0], Shape{0, 2}, correction, true)};
                    });
                }
            }
        }
    }
}
