// Conformance of gather, scatter_add_ and index_select: every dtype, data and index layout and
// axis (negative indices wrapped by the core), on the device against cpu.
#include "conformance.h"

using namespace conformance;

BOOST_AUTO_TEST_CASE(gather_scatter_index_select) {
    kael::manual_seed(23);
    // Data {4, 6} through these views; indices may be negative (wrapped by the core).
    const std::vector<View> data_views = {
        {"contiguous", {4, 6}},
        {"transposed", {6, 4}, [](const Tensor& t) { return t.T(); }},
        {"strided",
         {8, 13},
         [](const Tensor& t) { return t.slice(0, 1, 8, 2).slice(1, 0, 12, 2); }},
        {"broadcast",
         {1, 6},
         [](const Tensor& t) {
             return t.expand({4, 6});
         }},
    };
    for (const DType dtype : kAllDTypes) {
        for (const View& data : data_views) {
            for (const std::int64_t axis : {0, 1, -1}) {
                const std::int64_t size = axis == 0 ? 4 : 6;
                const std::int64_t across = axis == 0 ? 6 : 4;
                const auto index_shape = [&](std::int64_t along, std::int64_t other) {
                    return axis == 0 ? Shape{along, other} : Shape{other, along};
                };
                const std::vector<View> index_views = {
                    {"contiguous", index_shape(9, across)},
                    {"transposed", index_shape(across, 9), [](const Tensor& t) { return t.T(); }},
                    {"narrower", index_shape(5, across - 1)},
                    {"broadcast", index_shape(9, 1),
                     [&](const Tensor& t) { return t.expand(index_shape(9, across)); }},
                    {"empty", index_shape(0, across)},
                    {"stepped", index_shape(9, 2 * across),
                     [&](const Tensor& t) { return t.slice(axis == 0 ? 1 : 0, 0, 2 * across, 2); }},
                };
                for (const View& index : index_views) {
                    BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", data " << data.name
                                                << ", index " << index.name << ", axis " << axis) {
                        const Operand data_operand{values(dtype, data.base), data.view};
                        const Operand index_operand{kael::randint(0, size, index.base), index.view};
                        BOOST_TEST_CONTEXT("op gather") {
                            run_and_compare({data_operand, index_operand}, [&](const Tensors& x) {
                                return Tensors{kael::gather(x[0], axis, x[1])};
                            });
                        }
                        // scatter_add_ writes through the data view (not a broadcast one); the
                        // whole base is compared afterwards.
                        const View& target = data.name == "broadcast" ? data_views[0] : data;
                        const Shape source_shape = index.view(kael::empty(index.base)).shape();
                        BOOST_TEST_CONTEXT("op scatter_add_, target " << target.name) {
                            run_and_compare({{values(dtype, target.base)},
                                             index_operand,
                                             {values(dtype, source_shape)}},
                                            [&](const Tensors& x) {
                                                Tensor viewed = target.view(x[0]);
                                                kael::scatter_add_(viewed, axis, x[1], x[2]);
                                                return Tensors{viewed};
                                            },
                                            {10.0, false});
                        }
                    }
                }
                for (const std::int64_t count : {7, 0}) {
                    BOOST_TEST_CONTEXT("op index_select, dtype " << dtype_name(dtype) << ", data "
                                                                 << data.name << ", index " << count
                                                                 << ", axis " << axis) {
                        // A strided index: every other element of a longer one.
                        const Operand index{
                            kael::randint(0, size, {2 * count}),
                            [](const Tensor& t) { return t.slice(0, 0, t.size(0), 2); }};
                        run_and_compare({{values(dtype, data.base), data.view}, index},
                                        [&](const Tensors& x) {
                                            return Tensors{kael::index_select(x[0], axis, x[1])};
                                        });
                    }
                }
            }
        }
        BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", layout scalar / 3-d") {
            run_and_compare(
                {{values(dtype, {})}, {kael::tensor(std::vector<std::int64_t>{0, 0, 0})}},
                [](const Tensors& x) { return Tensors{kael::index_select(x[0], 0, x[1])}; });
            run_and_compare({{values(dtype, {2, 5, 3})}, {kael::randint(0, 5, {2, 7, 3})}},
                            [](const Tensors& x) {
                                return Tensors{kael::gather(x[0].permute({0, 1, 2}), 1, x[1])};
                            });
            run_and_compare({{values(dtype, {2, 5, 3})},
                             {kael::randint(0, 3, {2, 4, 8})},
                             {values(dtype, {2, 4, 8})}},
                            [](const Tensors& x) {
                                Tensor data = x[0];
                                kael::scatter_add_(data, 2, x[1], x[2]);
                                return Tensors{data};
                            },
                            {10.0, false});
        }
    }
}
