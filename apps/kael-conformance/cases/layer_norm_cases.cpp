// Conformance of the layer_norm slots: forward, and backward through autograd with every subset
// of x, weight and bias requiring grad, over row widths that take each device path (narrow,
// not a multiple of 4, 768 and 1600 wide, longer than a register row), views that the core makes
// contiguous, a misaligned row start, and empty inputs; f32 and f64, on the device against cpu.
#include "conformance.h"

using namespace conformance;

namespace {

struct Input {
    std::string name;
    Shape base;
    std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
};

std::vector<Input> inputs() {
    return {
        {"contiguous_10", {6, 10}},
        {"contiguous_16_3d", {3, 4, 16}},
        {"one_row", {1, 12}},
        {"gpt2_768", {5, 768}},
        {"gpt2_xl_1600", {3, 1600}},
        {"many_rows", {300, 64}},
        {"wide_5000", {3, 5000}},
        {"transposed", {10, 6}, [](const Tensor& t) { return t.T(); }},
        {"strided", {6, 20}, [](const Tensor& t) { return t.slice(1, 0, 20, 2); }},
        // One element in: rows start 4 (f32) or 8 (f64) bytes past a 16-byte boundary.
        {"misaligned", {1 + 6 * 8}, [](const Tensor& t) { return t.slice(0, 1, 49).view({6, 8}); }},
        {"empty_rows", {0, 8}},
        {"empty_columns", {4, 0}},
        {"empty_batch", {2, 0, 8}},
    };
}

struct Affine {
    const char* name;
    bool weight;
    bool bias;
};

constexpr Affine kAffine[] = {
    {"plain", false, false}, {"weight", true, false}, {"bias", false, true}, {"both", true, true}};

// Which inputs require grad: x, weight, bias (those that exist).
struct Wanted {
    const char* name;
    bool x;
    bool weight;
    bool bias;
};

constexpr Wanted kWanted[] = {{"all", true, true, true},
                              {"x_only", true, false, false},
                              {"parameters_only", false, true, true},
                              {"bias_only", false, false, true}};

Operand operand_for(const Input& input, DType dtype) {
    return {values(dtype, input.base, false), input.view};
}

}  // namespace

BOOST_AUTO_TEST_CASE(layer_norm_forward_every_input_affine_dtype) {
    kael::manual_seed(41);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const Input& input : inputs()) {
            const Operand x = operand_for(input, dtype);
            const std::int64_t columns = input.view(x.base).shape().back();
            for (const Affine& affine : kAffine) {
                BOOST_TEST_CONTEXT("layer_norm, dtype " << dtype_name(dtype) << ", input "
                                                        << input.name << ", " << affine.name) {
                    run_and_compare(
                        {x, {values(dtype, {columns}, false)}, {values(dtype, {columns}, false)}},
                        [&](const Tensors& in) {
                            return Tensors{kael::layer_norm(in[0],
                                                            affine.weight ? in[1] : Tensor(),
                                                            affine.bias ? in[2] : Tensor(), 1e-5)};
                        },
                        {1.0, false});
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(layer_norm_backward_every_input_affine_dtype_gradient) {
    kael::manual_seed(42);
    for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        for (const Input& input : inputs()) {
            const Operand x = operand_for(input, dtype);
            const Shape shape = input.view(x.base).shape();
            const Operand grad{values(dtype, shape, false)};
            const Operand weight{values(dtype, {shape.back()}, false)};
            const Operand bias{values(dtype, {shape.back()}, false)};
            for (const Affine& affine : kAffine) {
                for (const Wanted& wanted : kWanted) {
                    const bool weight_grad = affine.weight && wanted.weight;
                    const bool bias_grad = affine.bias && wanted.bias;
                    if (!wanted.x && !weight_grad && !bias_grad) {
                        continue;
                    }
                    BOOST_TEST_CONTEXT("layer_norm backward, dtype "
                                       << dtype_name(dtype) << ", input " << input.name << ", "
                                       << affine.name << ", grad " << wanted.name) {
                        run_and_compare(
                            {x, grad, weight, bias},
                            [&](const Tensors& in) {
                                const Tensor leaf = in[0].detach().set_requires_grad(wanted.x);
                                const Tensor w = affine.weight
                                                     ? in[2].detach().set_requires_grad(weight_grad)
                                                     : Tensor();
                                const Tensor b = affine.bias
                                                     ? in[3].detach().set_requires_grad(bias_grad)
                                                     : Tensor();
                                const Tensor out = kael::layer_norm(leaf, w, b, 0.01);
                                out.backward(in[1]);
                                Tensors results{out.detach()};
                                for (const Tensor& t : {leaf, w, b}) {
                                    if (t.defined() && t.requires_grad()) {
                                        results.push_back(t.grad());
                                    }
                                }
                                return results;
                            },
                            {10.0, false});
                    }
                }
            }
        }
    }
}
