#define BOOST_TEST_MODULE tensor_iterator
#include <boost/test/unit_test.hpp>

#include "kael/ops.h"
#include "kael/tensor_iterator.h"

using kael::Shape;

BOOST_AUTO_TEST_CASE(broadcast_row_keeps_two_dimensions) {
    // The seed's worked example: a [2, 3] + b [3], f32.
    const kael::Tensor a = kael::zeros({2, 3});
    const kael::Tensor b = kael::zeros({3});
    const kael::Tensor out = kael::empty({2, 3});
    const kael_element_layout layout = kael::element_layout(out, {a, b});
    BOOST_TEST(layout.struct_size == sizeof(kael_element_layout));
    BOOST_TEST(layout.dims == 2);
    BOOST_TEST(layout.operands == 3);
    BOOST_TEST(layout.count == 6);
    BOOST_TEST(layout.shape[0] == 2);
    BOOST_TEST(layout.shape[1] == 3);
    BOOST_TEST(layout.strides[0][0] == 12);
    BOOST_TEST(layout.strides[0][1] == 4);
    BOOST_TEST(layout.strides[1][0] == 12);
    BOOST_TEST(layout.strides[1][1] == 4);
    BOOST_TEST(layout.strides[2][0] == 0);
    BOOST_TEST(layout.strides[2][1] == 4);
    BOOST_TEST(layout.base[2] == b.device_data());
}

BOOST_AUTO_TEST_CASE(contiguous_operands_merge_into_one_dimension) {
    const kael::Tensor a = kael::zeros({2, 3});
    const kael::Tensor c = kael::zeros({2, 3});
    const kael::Tensor out = kael::empty({2, 3});
    const kael_element_layout layout = kael::element_layout(out, {a, c});
    BOOST_TEST(layout.dims == 1);
    BOOST_TEST(layout.shape[0] == 6);
    for (int op = 0; op < 3; ++op) {
        BOOST_TEST(layout.strides[op][0] == 4);
    }
    const kael::Tensor big = kael::zeros({2, 3, 4, 5, 6, 7, 2, 2, 2, 2}, kael::DType::F64);
    const kael_element_layout merged = kael::element_layout(kael::empty(big.shape(), kael::DType::F64), {big});
    BOOST_TEST(merged.dims == 1);
    BOOST_TEST(merged.strides[1][0] == 8);
}

BOOST_AUTO_TEST_CASE(transposed_and_sliced_operands_keep_their_strides) {
    const kael::Tensor x = kael::zeros({3, 4});
    const kael::Tensor out = kael::empty({4, 3});
    const kael_element_layout layout = kael::element_layout(out, {x.T()});
    BOOST_TEST(layout.dims == 2);
    BOOST_TEST(layout.strides[1][0] == 4);
    BOOST_TEST(layout.strides[1][1] == 16);
    const kael::Tensor every_other = kael::zeros({10}).slice(0, 0, 10, 2);
    const kael_element_layout stepped = kael::element_layout(kael::empty({5}), {every_other});
    BOOST_TEST(stepped.dims == 1);
    BOOST_TEST(stepped.strides[1][0] == 8);
}

BOOST_AUTO_TEST_CASE(size_one_and_empty_dimensions) {
    const kael::Tensor x = kael::zeros({1, 5, 1});
    const kael_element_layout layout = kael::element_layout(kael::empty({1, 5, 1}), {x});
    BOOST_TEST(layout.dims == 1);
    BOOST_TEST(layout.shape[0] == 5);
    const kael_element_layout empty = kael::element_layout(kael::empty({0, 3}), {kael::zeros({0, 3})});
    BOOST_TEST(empty.count == 0);
    const kael_element_layout scalar = kael::element_layout(kael::empty({}), {kael::zeros({})});
    BOOST_TEST(scalar.count == 1);
    BOOST_TEST(scalar.dims == 0);
}

BOOST_AUTO_TEST_CASE(limits_are_enforced) {
    // Nine dimensions that cannot merge: every other element of a 2^9 grid.
    Shape shape(9, 2);
    const kael::Tensor grid = kael::zeros(Shape(9, 3));
    kael::Tensor view = grid;
    for (int d = 0; d < 9; ++d) {
        view = view.slice(d, 0, 3, 2);
    }
    BOOST_CHECK_THROW((void)kael::element_layout(kael::empty(shape), {view}), kael::ValueError);
    const kael::Tensor t = kael::zeros({2});
    BOOST_CHECK_THROW((void)kael::element_layout(t, {t, t, t, t}), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::broadcast_shapes({2, 3}, {4, 3}, "add"), kael::ValueError);
    BOOST_TEST(kael::broadcast_shapes({5, 1, 3}, {4, 1}) == (Shape{5, 4, 3}), boost::test_tools::per_element());
}
