// Conformance of the composite reductions (amax/amin, max/min with indices, norms, var/std
// over dim sets, cumprod), einsum and the in-place forms (ops_reduce.h, ops_linalg.h, ops_elementwise.h): every dtype over the
// composite views, on the device against cpu; refusals must match.
#include <cmath>
#include <limits>

#include "composite_support.h"

using namespace conformance;

namespace {

const Tolerance kSums{1.0, false};
// scatter_add into one row: a device may round each add to a bf16/f16 partial sum, as
// PyTorch's CUDA atomics do (an H100's bf16 row was 8 steps of 2^-8 from cpu's f32 sum rounded
// once), so its absolute tolerance is 8 steps.
const Tolerance kRoundedAdds{8.0, false};

std::vector<CompositeCase> reduction_cases() {
    namespace k = kael;
    std::vector<CompositeCase> cases;
    for (const Shape& dims : {Shape{}, Shape{0}, Shape{0, -1}}) {
        for (const bool keepdim : {false, true}) {
            const std::string suffix = kael::to_string(dims) + (keepdim ? "_keepdim" : "");
            cases.push_back({"amax" + suffix,
                             [=](const Tensor& x) { return Tensors{k::amax(x, dims, keepdim)}; }});
            cases.push_back({"amin" + suffix,
                             [=](const Tensor& x) { return Tensors{k::amin(x, dims, keepdim)}; }});
            for (const std::int64_t correction : {0, 1}) {
                cases.push_back({"var_std" + suffix + "_correction" + std::to_string(correction),
                                 [=](const Tensor& x) {
                                     return Tensors{k::var(x, dims, correction, keepdim),
                                                    k::stddev(x, dims, correction, keepdim)};
                                 },
                                 kSums});
            }
        }
    }
    for (const bool keepdim : {false, true}) {
        cases.push_back({std::string("max_min_with_indices") + (keepdim ? "_keepdim" : ""),
                         [=](const Tensor& x) {
                             const auto [top, top_at] = k::max_with_indices(x, -1, keepdim);
                             const auto [low, low_at] = k::min_with_indices(x, 0, keepdim);
                             return Tensors{top, top_at, low, low_at};
                         }});
    }
    const double inf = std::numeric_limits<double>::infinity();
    for (const double ord : {0.0, 1.0, 2.0, 3.0, 0.5, -1.0, inf, -inf}) {
        for (const auto& dims :
             {std::optional<Shape>{}, std::optional<Shape>{{-1}}, std::optional<Shape>{{0, -1}}}) {
            cases.push_back({"vector_norm_" + std::to_string(ord) +
                                 (dims ? kael::to_string(*dims) : std::string("all")),
                             [=](const Tensor& x) {
                                 return Tensors{k::vector_norm(x, ord, dims, false),
                                                k::vector_norm(x, ord, dims, true)};
                             },
                             kSums});
        }
    }
    cases.push_back({"norm_p2_dim0_keepdim",
                     [](const Tensor& x) { return Tensors{k::norm(x, 2, Shape{0}, true)}; },
                     kSums});
    for (const std::int64_t dim : {0, -1}) {
        cases.push_back({"cumprod_" + std::to_string(dim),
                         [=](const Tensor& x) { return Tensors{k::cumprod(x, dim)}; }, kSums});
    }
    return cases;
}

// Numbers of modest size (no specials) so products and norms stay finite.
Tensor modest(DType dtype, const Shape& shape) {
    const Tensor base = values(dtype, shape, false);
    return dtype == DType::F32 || dtype == DType::F64 ? base * 0.5 : base;
}

// The in-place forms on x (the view; the base is compared afterwards) with a partner y of x's
// dtype and shape, each op on a copy so one case holds many.
using InPlace = std::function<Tensor(Tensor, const Tensor&)>;
std::vector<std::pair<std::string, InPlace>> in_place_cases() {
    namespace k = kael;
    const auto scalar = [](double v, const Tensor& like) {
        return k::scalar_tensor(v, like.dtype(), like.device());
    };
    // Indices along dim 0 of x: the last, the first and the last again (accumulates twice).
    const auto along0 = [](const Tensor& x) {
        const std::int64_t n = x.dim() == 0 ? 1 : x.size(0);
        const std::vector<std::int64_t> at =
            n == 0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{n - 1, 0, n - 1};
        const Tensor index = k::tensor(at, {static_cast<std::int64_t>(at.size())});
        return (x.dim() == 0 ? index.slice(0, 0, 1) : index).to(x.device());
    };
    std::vector<std::pair<std::string, InPlace>> cases = {
        {"add_alpha", [](Tensor x, const Tensor& y) { return k::add_(x, y, 2, "add_"); }},
        {"sub_alpha_half", [](Tensor x, const Tensor& y) { return k::sub_(x, y, 0.5, "sub_"); }},
        {"mul_", [](Tensor x, const Tensor& y) { return k::mul_(x, y); }},
        {"div_", [](Tensor x, const Tensor& y) { return k::div_(x, y); }},
        {"pow_scalar", [=](Tensor x, const Tensor&) { return k::pow_(x, scalar(2, x)); }},
        {"pow_tensor", [](Tensor x, const Tensor& y) { return k::pow_(x, y); }},
        {"clamp_", [=](Tensor x, const Tensor& y) { return k::clamp_(x, scalar(-1, x), y); }},
        {"clamp_max",
         [=](Tensor x, const Tensor&) { return k::clamp_(x, Tensor(), scalar(2, x)); }},
        {"index_add_",
         [=](Tensor x, const Tensor& y) {
             const Tensor index = along0(x);
             const Tensor first_rows = k::zeros({index.numel()}, DType::I64, x.device());
             const Tensor source =
                 y.dim() == 0 ? y.reshape({1}) : k::index_select(y, 0, first_rows);
             return k::index_add_(x, 0, index, source, 3);
         }},
        {"index_fill_",
         [=](Tensor x, const Tensor&) { return k::index_fill_(x, 0, along0(x), scalar(7, x)); }},
        {"scatter_value",
         [=](Tensor x, const Tensor&) {
             const Tensor index = k::zeros(x.shape(), kael::DType::I64, x.device());
             return k::scatter_(x, 0, index.dim() == 0 ? index : index.slice(0, 0, 1),
                                scalar(9, x));
         }},
        {"scatter_add",
         [](Tensor x, const Tensor& y) {
             const Tensor index = k::zeros(x.shape(), kael::DType::I64, x.device());
             return k::scatter_(x, 0, index, y, "add");
         }},
        {"lerp_", [=](Tensor x, const Tensor& y) { return k::lerp_(x, y, scalar(0.3, x)); }},
        {"lerp_tensor_weight",
         [](Tensor x, const Tensor& y) { return k::lerp_(x, y, k::sigmoid(y)); }},
        {"addcmul_", [](Tensor x, const Tensor& y) { return k::addcmul_(x, y, y, 0.5); }},
        {"addcdiv_", [](Tensor x, const Tensor& y) { return k::addcdiv_(x, y, k::abs(y) + 1, 2); }},
    };
    for (const char* name :
         {"neg_", "abs_", "exp_", "log_", "sqrt_", "sigmoid_", "tanh_", "relu_"}) {
        cases.push_back({name, [name](Tensor x, const Tensor&) { return k::unary_(x, name); }});
    }
    return cases;
}

}  // namespace

BOOST_AUTO_TEST_CASE(composite_reductions_every_dtype_and_view) {
    kael::manual_seed(71);
    run_composite_cases(reduction_cases(),
                        [](DType dtype, const Shape& shape) { return values(dtype, shape); });
    run_composite_cases(reduction_cases(), modest);
}

BOOST_AUTO_TEST_CASE(composite_in_place_every_dtype_and_view) {
    kael::manual_seed(72);
    for (const DType dtype : kAllDTypes) {
        for (const View& view : composite_views()) {
            const Shape shape = view.view(kael::empty(view.base)).shape();
            for (const auto& [name, op] : in_place_cases()) {
                BOOST_TEST_CONTEXT("op " << name << ", dtype " << dtype_name(dtype) << ", view "
                                         << view.name) {
                    run_and_compare(
                        {{values(dtype, view.base), view.view}, {values(dtype, shape)}},
                        [&](const Tensors& x) {
                            Tensor target = x[0];
                            return Tensors{op(target, x[1])};
                        },
                        name == "scatter_add" ? kRoundedAdds : kSums);
                }
            }
            // The out-of-place forms beside them, on the same operands.
            BOOST_TEST_CONTEXT("op lerp/addcmul/addcdiv, dtype " << dtype_name(dtype) << ", view "
                                                                 << view.name) {
                run_and_compare(
                    {{values(dtype, view.base), view.view}, {values(dtype, shape)}},
                    [](const Tensors& x) {
                        const Tensor w = kael::full({}, 0.7, x[0].dtype(), x[0].device());
                        return Tensors{kael::lerp(x[0], x[1], w),
                                       kael::addcmul(x[0], x[1], x[0], 2),
                                       kael::addcdiv(x[0], x[1], kael::abs(x[1]) + 1, 0.5)};
                    },
                    kSums);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(einsum_every_dtype_and_operand_view) {
    kael::manual_seed(73);
    const auto transposed = [](const Tensor& t) { return t.T(); };
    const auto every_other_row = [](const Tensor& t) { return t.slice(0, 0, t.size(0), 2); };
    struct Equation {
        std::string text;
        std::vector<View> operands;
    };
    const std::vector<Equation> equations = {
        {"ij,jk->ik", {{"transposed", {4, 3}, transposed}, {"strided", {8, 5}, every_other_row}}},
        {"ij,jk", {{"contiguous", {3, 4}}, {"contiguous", {4, 2}}}},
        {"ij,jk,k->i", {{"contiguous", {2, 3}}, {"transposed", {4, 3}, transposed}, {"v", {4}}}},
        {"ii->i", {{"square", {3, 3}}}},
        {"ii", {{"transposed_square", {3, 3}, transposed}}},
        {"ij->ji", {{"strided", {6, 4}, every_other_row}}},
        {"ij->", {{"contiguous", {3, 4}}}},
        {"bij,bjk->bik",
         {{"permuted",
           {3, 2, 4},
           [](const Tensor& t) {
               return t.permute({1, 0, 2});
           }},
          {"contiguous", {2, 4, 5}}}},
        {"...ij,jk->...ik", {{"contiguous", {2, 3, 4}}, {"contiguous", {4, 2}}}},
        {"i,j->ij", {{"v", {3}}, {"strided", {8}, every_other_row}}},
        {"i,i->", {{"v", {4}}, {"v", {4}}}},
        {"ij,ij->ij",
         {{"broadcast",
           {1, 4},
           [](const Tensor& t) {
               return t.expand({3, 4});
           }},
          {"contiguous", {3, 4}}}},
        {"ij,jk->ik", {{"empty", {0, 4}}, {"contiguous", {4, 2}}}},
        {"->", {{"scalar", {}}}},
        {"ij,jk->ik", {{"contiguous", {3, 4}}, {"mismatched", {3, 2}}}},  // refused
        {"ij->q", {{"contiguous", {3, 4}}}},                              // refused
    };
    for (const DType dtype : kAllDTypes) {
        for (const Equation& equation : equations) {
            BOOST_TEST_CONTEXT("op einsum '" << equation.text << "', dtype " << dtype_name(dtype)
                                             << ", first view " << equation.operands[0].name) {
                std::vector<Operand> operands;
                for (const View& view : equation.operands) {
                    operands.push_back({modest(dtype, view.base), view.view});
                }
                run_and_compare(
                    operands,
                    [&](const Tensors& x) { return Tensors{kael::einsum(equation.text, x)}; },
                    matmul_tolerance(kSums.scale));  // contractions are products (TF32 too)
            }
        }
    }
}
