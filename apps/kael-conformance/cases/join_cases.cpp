// Conformance of the joins (cat, stack) and of embedding: every dtype over every layout and dim,
// mixed dtypes promoted, embedding over weight and index views, on the device against cpu.
#include "conformance.h"

using namespace conformance;

BOOST_AUTO_TEST_CASE(cat_and_stack_every_dtype_layout_dim) {
    kael::manual_seed(51);
    for (const DType dtype : kAllDTypes) {
        for (const Layout& layout : element_layouts()) {
            const std::vector<Operand> operands = {
                laid_out(layout, values(dtype, layout.base(0))),
                laid_out(layout, values(dtype, layout.base(1)), 1)};
            const auto rank = layout.view(operands[0].base, 0).dim();
            // Up to dim == rank: stack's last dim, and an IndexError for cat on both sides.
            for (std::int64_t dim = -1; dim <= rank; ++dim) {
                BOOST_TEST_CONTEXT("op cat, dtype " << dtype_name(dtype) << ", layout "
                                                    << layout.name << ", dim " << dim) {
                    run_and_compare(operands, [&](const Tensors& x) {
                        // An empty 1-d tensor among them is skipped, as in torch.
                        const Tensor skipped = kael::zeros({0}, dtype, x[0].device());
                        return Tensors{kael::cat({x[0], skipped, x[1], x[0]}, dim)};
                    });
                }
                BOOST_TEST_CONTEXT("op stack, dtype " << dtype_name(dtype) << ", layout "
                                                      << layout.name << ", dim " << dim) {
                    run_and_compare(operands, [&](const Tensors& x) {
                        return Tensors{kael::stack({x[0], x[1]}, dim)};
                    });
                }
            }
        }
    }
    for (const auto& [first, second] :
         {std::pair{DType::I64, DType::F32}, std::pair{DType::Bool, DType::F64},
          std::pair{DType::F32, DType::F64}, std::pair{DType::Bool, DType::I64}}) {
        BOOST_TEST_CONTEXT("op cat and stack, dtype " << dtype_name(first) << "/"
                                                      << dtype_name(second)) {
            run_and_compare(
                {{values(first, {4, 6})}, {values(second, {4, 6})}}, [](const Tensors& x) {
                    return Tensors{kael::cat({x[0], x[1]}, 1), kael::stack({x[0], x[1]}, 0)};
                });
        }
    }
}

BOOST_AUTO_TEST_CASE(embedding_every_dtype_weight_and_index_layout) {
    kael::manual_seed(52);
    const auto transposed = [](const Tensor& t) { return t.T(); };
    const std::vector<View> weights = {
        {"contiguous", {5, 3}},
        {"transposed", {3, 5}, transposed},
        {"strided", {10, 3}, [](const Tensor& t) { return t.slice(0, 0, 10, 2); }},
    };
    const std::vector<View> indices = {
        {"matrix", {2, 2}}, {"vector", {7}}, {"scalar", {}}, {"transposed", {3, 4}, transposed},
        {"empty", {0}},
    };
    for (const DType dtype : kAllDTypes) {
        for (const View& weight : weights) {
            for (const View& index : indices) {
                BOOST_TEST_CONTEXT("op embedding, dtype " << dtype_name(dtype) << ", weight "
                                                          << weight.name << ", indices "
                                                          << index.name) {
                    run_and_compare(
                        {{values(dtype, weight.base), weight.view},
                         {kael::randint(0, 5, index.base), index.view}},
                        [](const Tensors& x) { return Tensors{kael::embedding(x[0], x[1])}; });
                }
            }
        }
    }
}
