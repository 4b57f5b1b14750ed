// Conformance, softmax family: softmax / log_softmax over every dim of 3-d inputs in several
// layouts and rows of every length class the devices special-case, forward and backward, and
// cross_entropy with each reduction, on the device against cpu.
#include <cmath>
#include <limits>

#include "conformance.h"
#include "kael/autograd.h"

using namespace conformance;

namespace {

const std::vector<View>& softmax_views() {
    static const std::vector<View> views = {
        {"contiguous", {3, 4, 5}},
        {"transposed",
         {5, 4, 3},
         [](const Tensor& t) {
             return t.permute({2, 1, 0});
         }},
        {"strided",
         {6, 4, 10},
         [](const Tensor& t) { return t.slice(0, 0, 6, 2).slice(2, 1, 10, 2); }},
        {"permuted",
         {4, 5, 3},
         [](const Tensor& t) {
             return t.permute({2, 0, 1});
         }},
        {"empty", {3, 0, 5}},
        {"scalar", {}},
        // Row lengths the cuda plugin treats apart: warp rows (aligned or not), block rows held
        // in registers, rows longer than that, and lines along a non-last dim.
        {"rows_1000", {3, 1000}},
        {"rows_1001", {3, 1001}},
        {"rows_8192", {2, 8192}},
        {"rows_5003", {2, 5003}},
        {"long_rows", {12289, 3}, [](const Tensor& t) { return t.T(); }},
        {"offset_rows", {3, 1025}, [](const Tensor& t) { return t.slice(1, 1, 1025); }},
        {"tall", {300, 40}},
        {"taller", {1100, 3}},
        // Contiguous rows whose first element is 4 bytes past a 16-byte boundary.
        {"shifted_rows",
         {4001},
         [](const Tensor& t) {
             return t.slice(0, 1, 4001).view({4, 1000});
         }},
    };
    return views;
}

// Rows of -inf, of one huge value among finite ones, and of a +inf: NaN or stable numbers.
Tensor extremes(DType dtype) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> numbers = {-inf, -inf, -inf, -inf, 1e30, 1, -1e30, 0,
                                   80,   88,   100,  -inf, inf,  1, 2,     3};
    return kael::tensor(numbers, {4, 4}).to(dtype);
}

// (forward, gradient of sum(forward * weight)) of softmax or log_softmax along dim.
Tensors softmax_and_gradient(const Tensor& x, const Tensor& weight, std::int64_t dim, bool log) {
    const Tensor leaf = x.detach().set_requires_grad(true);
    const Tensor out = log ? kael::log_softmax(leaf, dim) : kael::softmax(leaf, dim);
    if (out.numel() > 0) {
        kael::sum(out * weight).backward();
        return {out, leaf.grad()};
    }
    return {out};
}

}  // namespace

BOOST_AUTO_TEST_CASE(softmax_every_dim_layout_dtype_forward_and_backward) {
    kael::manual_seed(31);
    for (const DType dtype : {DType::F32, DType::F64}) {
        for (const View& v : softmax_views()) {
            for (const bool specials : {false, true}) {
                const Tensor base = values(dtype, v.base, specials);
                const Shape shape = v.view(base).shape();
                const Operand input{base, v.view};
                const Operand weight{values(dtype, shape, false)};
                const auto rank = static_cast<std::int64_t>(shape.size());
                for (std::int64_t dim = -1; dim < std::max<std::int64_t>(rank, 1); ++dim) {
                    for (const bool log : {false, true}) {
                        BOOST_TEST_CONTEXT("op " << (log ? "log_softmax" : "softmax") << ", dtype "
                                                 << dtype_name(dtype) << ", layout " << v.name
                                                 << ", specials " << specials << ", dim " << dim) {
                            run_and_compare({input, weight},
                                            [&](const Tensors& x) {
                                                return softmax_and_gradient(x[0], x[1], dim, log);
                                            },
                                            {10.0, false});
                        }
                    }
                }
            }
        }
        for (const std::int64_t dim : {0, 1}) {
            BOOST_TEST_CONTEXT("op softmax of extremes, dtype " << dtype_name(dtype) << ", dim "
                                                                << dim) {
                run_and_compare({{extremes(dtype)}, {values(dtype, {4, 4}, false)}},
                                [&](const Tensors& x) {
                                    Tensors both = softmax_and_gradient(x[0], x[1], dim, false);
                                    const Tensors logs =
                                        softmax_and_gradient(x[0], x[1], dim, true);
                                    both.insert(both.end(), logs.begin(), logs.end());
                                    return both;
                                },
                                {10.0, false});
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(cross_entropy_every_reduction_layout_dtype) {
    kael::manual_seed(32);
    const std::vector<View> views = {
        {"contiguous", {5, 7}},
        {"transposed", {7, 5}, [](const Tensor& t) { return t.T(); }},
        {"strided",
         {10, 15},
         [](const Tensor& t) { return t.slice(0, 0, 10, 2).slice(1, 1, 15, 2); }},
        {"wide", {3, 5003}},
        {"offset_rows", {4, 1026}, [](const Tensor& t) { return t.slice(1, 2, 1026); }},
        {"shifted_rows",
         {4001},
         [](const Tensor& t) {
             return t.slice(0, 1, 4001).view({4, 1000});
         }},
        {"empty", {0, 7}},
    };
    const std::pair<const char*, kael::Reduction> reductions[] = {{"none", kael::Reduction::None},
                                                                  {"sum", kael::Reduction::Sum},
                                                                  {"mean", kael::Reduction::Mean}};
    // bf16/f16 too: the cuda plugin reads such logits as they are (losses and lse in f32).
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const View& v : views) {
            const Tensor base = values(dtype, v.base, false) * 4.0;
            const Shape shape = v.view(base).shape();
            const Operand logits{base, v.view};
            // Every other element of a longer target vector: a strided view.
            const Operand targets{kael::randint(0, shape[1], {2 * shape[0]}),
                                  [](const Tensor& t) { return t.slice(0, 0, t.size(0), 2); }};
            for (const auto& [name, reduction] : reductions) {
                BOOST_TEST_CONTEXT("op cross_entropy, dtype " << dtype_name(dtype) << ", layout "
                                                              << v.name << ", reduction " << name) {
                    run_and_compare(
                        {logits, targets},
                        [&, reduction = reduction](const Tensors& x) {
                            const Tensor leaf = x[0].detach().set_requires_grad(true);
                            const Tensor loss = kael::cross_entropy(leaf, x[1], reduction);
                            const Tensor weight =
                                kael::arange(1, static_cast<double>(loss.numel()) + 1, 1, dtype)
                                    .view(loss.shape())
                                    .to(leaf.device());
                            kael::sum(loss * weight).backward();
                            return Tensors{loss, leaf.grad()};
                        },
                        {10.0, false});
                }
            }
        }
        BOOST_TEST_CONTEXT("op cross_entropy of extremes, dtype " << dtype_name(dtype)) {
            // The confident row's loss is log(total) with total = 1 + 6e-6: an f32 total holds
            // it to 1.2e-7 absolute (PyTorch's f32 kernel too), so compare with that floor.
            run_and_compare(
                {{extremes(dtype)}, {kael::tensor(std::vector<std::int64_t>{0, 1, 2, 3})}},
                [](const Tensors& x) {
                    return Tensors{kael::cross_entropy(x[0], x[1], kael::Reduction::None)};
                },
                {.scale = 0.01});
        }
    }
}
