// Conformance of matmul and linear: every shape class (vectors, batches, broadcasts, empty
// dims, edge tiles), every layout and dtype, and linear's bias and epilogue, on the device
// against cpu.
#include "conformance.h"
#include "kael/autograd.h"

using namespace conformance;

BOOST_AUTO_TEST_CASE(matmul_shapes_layouts_dtypes) {
    kael::manual_seed(22);
    using ViewFn = std::function<Tensor(const Tensor&)>;
    const ViewFn T = [](const Tensor& t) { return t.transpose(-1, -2); };
    const auto expand = [](const Shape& shape) -> ViewFn {
        return [shape](const Tensor& t) { return t.expand(shape); };
    };
    const ViewFn stepped = [](const Tensor& t) { return t.slice(0, 0, 6, 2).slice(1, 1, 8, 2); };
    const ViewFn stepped_b = [](const Tensor& t) { return t.slice(0, 0, 8, 2).slice(1, 0, 10, 2); };
    const ViewFn swap_batch = [](const Tensor& t) { return t.permute({1, 0, 2}); };
    const std::vector<std::pair<View, View>> cases = {
        {{"plain", {3, 4}}, {"plain", {4, 5}}},
        {{"transposed", {4, 3}, T}, {"plain", {4, 5}}},
        {{"plain", {3, 4}}, {"transposed", {5, 4}, T}},
        {{"transposed", {4, 3}, T}, {"transposed", {5, 4}, T}},
        {{"strided", {6, 8}, stepped}, {"plain", {4, 5}}},
        {{"plain", {3, 4}}, {"strided", {8, 10}, stepped_b}},
        {{"expanded", {1, 4}, expand({3, 4})}, {"expanded", {4, 1}, expand({4, 5})}},
        {{"batch", {2, 3, 4}}, {"batch", {2, 4, 5}}},
        {{"batch", {2, 3, 4}}, {"broadcast_matrix", {4, 5}}},
        {{"broadcast_matrix", {3, 4}}, {"batch_transposed", {2, 5, 4}, T}},
        {{"batch_4d", {2, 1, 3, 4}}, {"batch", {3, 4, 2}}},
        {{"batch_expanded", {1, 3, 4}, expand({2, 3, 4})}, {"batch", {2, 4, 5}}},
        {{"batch_permuted", {3, 2, 4}, swap_batch}, {"batch_transposed", {2, 5, 4}, T}},
        {{"vector", {4}}, {"plain", {4, 5}}},
        {{"row", {1, 8}}, {"transposed", {6, 8}, T}},  // the one-row kernel, no bias
        {{"plain", {3, 4}}, {"vector", {4}}},
        {{"vector", {4}}, {"vector", {4}}},
        {{"vector", {4}}, {"batch", {2, 4, 5}}},
        {{"batch", {2, 3, 4}}, {"vector", {4}}},
        {{"empty_inner", {3, 0}}, {"empty_inner", {0, 5}}},
        {{"empty_rows", {0, 4}}, {"plain", {4, 5}}},
        {{"empty_batch", {0, 3, 4}}, {"plain", {4, 5}}},
        {{"large", {33, 65}}, {"large_transposed", {17, 65}, T}},
        {{"mismatched", {3, 4}}, {"mismatched", {5, 4}}},
        // The seed device suite's shapes (rows x inner x columns): clipped edge tiles, inner 1.
        {{"plain", {1, 1}}, {"plain", {1, 1}}},
        {{"plain", {4, 4}}, {"plain", {4, 4}}},
        {{"plain", {5, 3}}, {"plain", {3, 9}}},
        {{"plain", {8, 16}}, {"plain", {16, 7}}},
        {{"plain", {33, 20}}, {"plain", {20, 65}}},
        {{"plain", {64, 1}}, {"plain", {1, 64}}},
        {{"plain", {1, 64}}, {"plain", {64, 1}}},
    };
    for (const auto& [a, b] : cases) {
        for (const DType dtype : kAllDTypes) {
            const std::int64_t inner = a.view(kael::empty(a.base)).shape().back();
            BOOST_TEST_CONTEXT("op matmul, dtype " << dtype_name(dtype) << ", layout " << a.name
                                                   << kael::to_string(a.base) << " x " << b.name
                                                   << kael::to_string(b.base)) {
                // Specials would test BLAS more than the device: inf * 0 sums are unordered.
                run_and_compare({{values(dtype, a.base, false), a.view},
                                 {values(dtype, b.base, false), b.view}},
                                [](const Tensors& x) { return Tensors{kael::matmul(x[0], x[1])}; },
                                matmul_tolerance(10.0 * static_cast<double>(inner)));
            }
        }
    }
    for (const auto& [first, second] :
         {std::pair{DType::I64, DType::F32}, std::pair{DType::F32, DType::F64},
          std::pair{DType::Bool, DType::F64}}) {
        BOOST_TEST_CONTEXT("op matmul, dtype " << dtype_name(first) << "/" << dtype_name(second)
                                               << ", layout batch x transposed") {
            run_and_compare({{values(first, {2, 3, 4}, false)}, {values(second, {5, 4}, false), T}},
                            [](const Tensors& x) { return Tensors{kael::matmul(x[0], x[1])}; },
                            matmul_tolerance(40.0));
        }
    }
}

// kael::linear with a bias runs matmul_bias: one GEMM over the rows of x, bias in the GEMM.
BOOST_AUTO_TEST_CASE(linear_with_bias_shapes_layouts_dtypes) {
    kael::manual_seed(24);
    using ViewFn = std::function<Tensor(const Tensor&)>;
    const ViewFn same = [](const Tensor& t) { return t; };
    const ViewFn T = [](const Tensor& t) { return t.transpose(-1, -2); };
    const ViewFn stepped = [](const Tensor& t) { return t.slice(0, 0, 10, 2); };
    const ViewFn swap_batch = [](const Tensor& t) { return t.permute({1, 0, 2}); };
    struct Case {
        std::string name;
        Shape x, weight, bias;
        ViewFn x_view, weight_view, bias_view;
    };
    const std::vector<Case> cases = {
        {"plain", {3, 4}, {5, 4}, {5}, same, same, same},
        {"batched", {2, 3, 4}, {5, 4}, {5}, same, same, same},
        {"batched_4d", {2, 1, 3, 4}, {5, 4}, {5}, same, same, same},
        {"transposed_x", {4, 3}, {5, 4}, {5}, T, same, same},
        {"transposed_weight", {3, 4}, {4, 5}, {5}, same, T, same},
        {"strided_bias", {3, 4}, {5, 4}, {10}, same, same, stepped},
        {"permuted_batch", {3, 2, 4}, {5, 4}, {5}, swap_batch, same, same},
        {"large", {33, 65}, {17, 65}, {17}, same, same, same},
        // One row against the weight as stored: the one-row kernel (inner a multiple of 4).
        {"one_row", {1, 768}, {2305, 768}, {2305}, same, same, same},
        {"one_row_batched", {1, 1, 64}, {33, 64}, {33}, same, same, same},
        {"one_row_column", {64, 1}, {9, 64}, {9}, T, same, same},
        {"one_row_ragged_inner", {1, 66}, {7, 66}, {7}, same, same, same},
        {"empty_rows", {0, 4}, {5, 4}, {5}, same, same, same},
        {"empty_out", {3, 4}, {0, 4}, {0}, same, same, same},
        {"empty_inner", {3, 0}, {5, 0}, {5}, same, same, same},
    };
    for (const Case& c : cases) {
        for (const DType dtype : kNumeric) {
            BOOST_TEST_CONTEXT("op linear, dtype " << dtype_name(dtype) << ", layout " << c.name) {
                run_and_compare(
                    {{values(dtype, c.x, false), c.x_view},
                     {values(dtype, c.weight, false), c.weight_view},
                     {values(dtype, c.bias, false), c.bias_view}},
                    [](const Tensors& x) { return Tensors{kael::linear(x[0], x[1], x[2])}; },
                    matmul_tolerance(700.0));
            }
        }
    }
}

namespace {

using ViewFn = std::function<Tensor(const Tensor&)>;
const ViewFn kSame = [](const Tensor& t) { return t; };
const ViewFn kTransposed = [](const Tensor& t) { return t.transpose(-1, -2); };

// A linear layer's x (read through x_view) and weight [out, in].
struct LinearCase {
    std::string name;
    Shape x, weight;
    ViewFn x_view;
};

// Every case x float dtype x gelu or not x the case's option (flag): check(case, its output
// shape, dtype, gelu, option) inside a context naming them.
template <typename Check>
void over_linear_calls(const std::vector<LinearCase>& cases, const char* option,
                       const Check& check) {
    for (const LinearCase& c : cases) {
        Shape out = c.x_view(Tensor(kael::empty(c.x))).shape();
        out.back() = c.weight[0];
        for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
            for (const bool gelu : {false, true}) {
                for (const bool flag : {false, true}) {
                    BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", " << c.name << ", gelu "
                                                << gelu << ", " << option << " " << flag) {
                        check(c, out, dtype, gelu, flag);
                    }
                }
            }
        }
    }
}

kael::Activation activation_of(bool gelu) {
    return gelu ? kael::Activation::GeluTanh : kael::Activation::None;
}

}  // namespace

// linear with its epilogue (gelu, a residual add) against the cpu's composed ops: one row (the
// one-row kernel's fused epilogue, one to four warps a row), many rows (the product, then the
// epilogue), strided x.
BOOST_AUTO_TEST_CASE(linear_with_an_epilogue) {
    kael::manual_seed(25);
    const std::vector<LinearCase> cases = {{"one_row", {1, 1, 768}, {2304, 768}, kSame},
                                           {"one_row_long", {1, 3072}, {70, 3072}, kSame},
                                           {"one_row_widest", {1, 4096}, {9, 4096}, kSame},
                                           {"rows", {2, 5, 64}, {33, 64}, kSame},
                                           {"transposed_x", {64, 7}, {9, 64}, kTransposed},
                                           {"ragged_inner", {1, 66}, {7, 66}, kSame}};
    over_linear_calls(
        cases, "bias",
        [](const LinearCase& c, const Shape& out, DType dtype, bool gelu, bool with_bias) {
            run_and_compare(
                {{values(dtype, c.x, false), c.x_view},
                 {values(dtype, c.weight, false)},
                 {values(dtype, {c.weight[0]}, false)},
                 {values(dtype, out, false)}},
                [&](const Tensors& x) {
                    const kael::NoGradGuard no_grad;
                    return Tensors{kael::linear(x[0], x[1], with_bias ? x[2] : Tensor(),
                                                activation_of(gelu), x[3])};
                },
                matmul_tolerance(700.0));
        });
}

// layer_norm_linear (a decoding step's norm fused into its product where the device has the
// kernel: one row, up to 1024 wide) against the cpu's composed layer_norm and linear; the
// shapes the kernel declines (rows, a wider row, a strided x) compose on the device too.
BOOST_AUTO_TEST_CASE(layer_norm_linear_fused_and_composed) {
    kael::manual_seed(59);
    const std::vector<LinearCase> cases = {{"one_row", {1, 1, 768}, {2304, 768}, kSame},
                                           {"one_row_1024", {1, 1024}, {70, 1024}, kSame},
                                           {"one_row_too_wide", {1, 2048}, {9, 2048}, kSame},
                                           {"rows", {2, 5, 64}, {33, 64}, kSame},
                                           {"transposed_x", {64, 1}, {9, 64}, kTransposed},
                                           {"ragged_inner", {1, 66}, {7, 66}, kSame}};
    over_linear_calls(
        cases, "affine norm and bias",
        [](const LinearCase& c, const Shape& out, DType dtype, bool gelu, bool affine) {
            const std::int64_t inner = c.weight[1];
            run_and_compare(
                {{values(dtype, c.x, false), c.x_view},
                 {values(dtype, {inner}, false)},
                 {values(dtype, {inner}, false)},
                 {values(dtype, c.weight, false)},
                 {values(dtype, {c.weight[0]}, false)},
                 {values(dtype, out, false)}},
                [&](const Tensors& x) {
                    const kael::NoGradGuard no_grad;
                    return Tensors{kael::layer_norm_linear(
                        x[0], affine ? x[1] : Tensor(), affine ? x[2] : Tensor(), 1e-5, x[3],
                        affine ? x[4] : Tensor(), activation_of(gelu), gelu ? Tensor() : x[5])};
                },
                matmul_tolerance(700.0));
        });
}

// Products whose rows are not whole 16 bytes (GPT-2's 50257 logits, scaled down): large enough
// (256 multiply-adds per copied element) that the cuda plugin pads them with zeros in scratch for
// cuBLASLt's tensor-core kernels. The logits with their bias (columns and bias padded), their
// gradient into x (inner padded), and into the weight (a transposed a, its pitch padded).
BOOST_AUTO_TEST_CASE(products_of_odd_widths) {
    kael::manual_seed(61);
    const Shape x{640, 512};
    const Shape weight{1025, 512};
    const Shape grad{640, 1025};
    for (const DType dtype : {DType::F32, DType::BF16, DType::F16}) {
        BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", logits") {
            run_and_compare(
                {{values(dtype, x, false)},
                 {values(dtype, weight, false)},
                 {values(dtype, {weight[0]}, false)}},
                [](const Tensors& t) { return Tensors{kael::linear(t[0], t[1], t[2])}; },
                matmul_tolerance(700.0));
        }
        BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", gradient of x") {
            run_and_compare(
                {{values(dtype, grad, false)}, {values(dtype, weight, false)}},
                [](const Tensors& t) { return Tensors{kael::matmul(t[0], t[1])}; },
                matmul_tolerance(10.0 * static_cast<double>(grad[1])));
        }
        BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", gradient of the weight") {
            run_and_compare(
                {{values(dtype, grad, false), kTransposed}, {values(dtype, x, false)}},
                [](const Tensors& t) { return Tensors{kael::matmul(t[0], t[1])}; },
                matmul_tolerance(10.0 * static_cast<double>(x[0])));
        }
    }
}
