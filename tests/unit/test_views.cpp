#define BOOST_TEST_MODULE views
#include <boost/test/unit_test.hpp>

#include "kael/autograd.h"
#include "kael/ops.h"

using kael::Shape;
using kael::Tensor;

namespace {
Tensor iota(const Shape& shape) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    return kael::arange(0, static_cast<double>(count), 1, kael::DType::F32).view(shape);
}
std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }
}  // namespace

BOOST_AUTO_TEST_CASE(transpose_shares_storage_and_swaps_strides) {
    const Tensor x = iota({2, 3});
    const Tensor t = x.T();
    BOOST_TEST(t.shape() == (Shape{3, 2}), boost::test_tools::per_element());
    BOOST_TEST(t.strides() == (Shape{1, 3}), boost::test_tools::per_element());
    BOOST_TEST(!t.is_contiguous());
    BOOST_TEST(t.impl().storage == x.impl().storage);
    BOOST_TEST(values(t) == (std::vector<float>{0, 3, 1, 4, 2, 5}), boost::test_tools::per_element());
    const Tensor c = t.contiguous();
    BOOST_TEST(c.is_contiguous());
    BOOST_TEST(c.strides() == (Shape{2, 1}), boost::test_tools::per_element());
    BOOST_TEST(values(c) == (std::vector<float>{0, 3, 1, 4, 2, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slices_with_steps_and_negative_bounds) {
    const Tensor x = iota({10});
    BOOST_TEST(values(x.slice(0, 1, 9, 3)) == (std::vector<float>{1, 4, 7}), boost::test_tools::per_element());
    BOOST_TEST(values(x.slice(0, -3, 100)) == (std::vector<float>{7, 8, 9}), boost::test_tools::per_element());
    BOOST_TEST(x.slice(0, 5, 2).numel() == 0);
    const Tensor m = iota({4, 5});
    const Tensor column = m.slice(1, 2, 3).squeeze(1);
    BOOST_TEST(column.offset() == 2);
    BOOST_TEST(values(column) == (std::vector<float>{2, 7, 12, 17}), boost::test_tools::per_element());
    BOOST_TEST(values(m.select(0, -1)) == (std::vector<float>{15, 16, 17, 18, 19}), boost::test_tools::per_element());
    BOOST_CHECK_THROW((void)m.select(0, 4), kael::IndexError);
    BOOST_CHECK_THROW((void)m.slice(2, 0, 1), kael::IndexError);
    BOOST_CHECK_THROW((void)x.slice(0, 0, 3, 0), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(view_reshape_unsqueeze_expand_permute) {
    const Tensor x = iota({2, 3, 4});
    BOOST_TEST(x.view({6, -1}).shape() == (Shape{6, 4}), boost::test_tools::per_element());
    BOOST_CHECK_THROW((void)x.view({5, -1}), kael::ValueError);
    BOOST_CHECK_THROW((void)x.transpose(0, 2).view({24}), kael::ValueError);
    const Tensor r = x.transpose(0, 2).reshape({24});
    BOOST_TEST(r.to_vector<float>()[1] == 12.0f);
    BOOST_TEST(x.unsqueeze(1).shape() == (Shape{2, 1, 3, 4}), boost::test_tools::per_element());
    BOOST_TEST(x.unsqueeze(-1).shape() == (Shape{2, 3, 4, 1}), boost::test_tools::per_element());
    const Tensor row = iota({1, 3}).expand({4, 3});
    BOOST_TEST(row.strides() == (Shape{0, 1}), boost::test_tools::per_element());
    BOOST_TEST(values(row).size() == 12u);
    BOOST_CHECK_THROW((void)iota({2, 3}).expand({4, 3}), kael::ValueError);
    const Tensor p = x.permute({2, 0, 1});
    BOOST_TEST(p.shape() == (Shape{4, 2, 3}), boost::test_tools::per_element());
    BOOST_TEST(p.strides() == (Shape{1, 12, 4}), boost::test_tools::per_element());
    BOOST_CHECK_THROW((void)x.permute({0, 0, 1}), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(writes_through_views_reach_the_base) {
    Tensor x = kael::zeros({3, 3});
    Tensor diagonal = x.as_strided({3}, {4}, 0);
    diagonal.fill_(7);
    BOOST_TEST(values(x) == (std::vector<float>{7, 0, 0, 0, 7, 0, 0, 0, 7}), boost::test_tools::per_element());
    Tensor column = x.slice(1, 1, 2);
    column.copy_(kael::tensor(std::vector<float>{1, 2, 3}, {3, 1}));
    BOOST_TEST(values(x) == (std::vector<float>{7, 1, 0, 0, 2, 0, 0, 3, 7}), boost::test_tools::per_element());
    BOOST_CHECK_THROW(column.copy_(kael::ones({2})), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(empty_tensors_have_no_storage_and_work) {
    const Tensor e = kael::zeros({0, 4});
    BOOST_TEST(e.numel() == 0);
    BOOST_TEST(e.T().contiguous().numel() == 0);
    BOOST_TEST(values(e).empty());
    BOOST_CHECK_THROW((void)kael::empty({-1}), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(host_access_and_items) {
    const Tensor x = kael::tensor(std::vector<double>{1.5, 2.5});
    BOOST_TEST(x.data_ptr<double>()[1] == 2.5);
    BOOST_CHECK_THROW((void)x.data_ptr<float>(), kael::TypeError);
    BOOST_CHECK_THROW((void)x.item<double>(), kael::ValueError);
    BOOST_TEST(x.select(0, 0).item<double>() == 1.5);
    BOOST_TEST(x.str() == "tensor([1.5, 2.5], dtype=f64)");
}

BOOST_AUTO_TEST_CASE(from_blob_adopts_external_memory_until_the_last_view_dies) {
    std::vector<float> external{0, 1, 2, 3, 4, 5};
    int releases = 0;
    {
        const Tensor x = kael::from_blob(external.data(), {2, 2}, {3, 1}, kael::DType::F32,
                                         kael::kCPU, [&releases] { ++releases; });
        BOOST_TEST(values(x) == (std::vector<float>{0, 1, 3, 4}), boost::test_tools::per_element());
        Tensor column = x.T().select(0, 1);
        column.fill_(9);  // writes land in the external memory
        BOOST_TEST(external[1] == 9.0f);
        BOOST_TEST(external[4] == 9.0f);
        BOOST_TEST(releases == 0);
    }
    BOOST_TEST(releases == 1);
    BOOST_CHECK_THROW((void)kael::from_blob(external.data(), {2}, {-1}, kael::DType::F32,
                                            kael::kCPU, [&releases] { ++releases; }),
                      kael::ValueError);
    BOOST_CHECK_THROW((void)kael::from_blob(external.data(), {2}, {1, 1}, kael::DType::F32,
                                            kael::kCPU, [&releases] { ++releases; }),
                      kael::ValueError);
    BOOST_TEST(releases == 1);  // a refused blob is not released: the caller still owns it
}

BOOST_AUTO_TEST_CASE(byte_counts_that_overflow_are_refused) {
    BOOST_CHECK_THROW((void)kael::empty({std::int64_t{1} << 62}, kael::DType::I64),
                      kael::OutOfMemoryError);
    // An element count beyond int64 is an invalid shape (ValueError), whatever the dtype;
    // sizes multiply in order as unsigned 64-bit numbers, as PyTorch's, so a 0 after 2^63
    // elements is an empty shape.
    BOOST_CHECK_THROW((void)kael::empty({std::int64_t{1} << 40, std::int64_t{1} << 40}),
                      kael::ValueError);
    BOOST_TEST(kael::empty({0, std::int64_t{1} << 62}).numel() == 0);
    BOOST_TEST(kael::empty({std::int64_t{1} << 62, 0}).numel() == 0);
    BOOST_TEST(kael::empty({std::int64_t{1} << 62, 2, 0}).numel() == 0);
    BOOST_CHECK_THROW((void)kael::empty({std::int64_t{1} << 62, 4, 0}), kael::ValueError);
    const Tensor none = kael::empty({0});
    BOOST_CHECK_THROW((void)none.view({std::int64_t{1} << 62, 4}), kael::ValueError);
    BOOST_CHECK_THROW((void)none.reshape({-1, std::int64_t{1} << 62, 4}), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::ones({1}).expand({std::int64_t{1} << 62, 4}), kael::ValueError);
    // One byte short of 2^63: no size class can hold it, so the allocator refuses it.
    BOOST_CHECK_THROW((void)kael::empty({INT64_MAX}, kael::DType::Bool), kael::OutOfMemoryError);
}

// reshape is a view whenever strides exist for it, as in PyTorch: splitting the last dim of a
// slice (the heads of one third of a qkv projection), merging dims contiguous with each other.
BOOST_AUTO_TEST_CASE(reshape_is_a_view_when_strides_allow) {
    const Tensor qkv = iota({2, 3, 12});
    const Tensor key = qkv.slice(2, 4, 8);  // strides 36, 12, 1
    const Tensor heads = key.reshape({2, 3, 2, 2});
    BOOST_TEST(heads.impl().storage == qkv.impl().storage);
    BOOST_TEST(heads.strides() == (Shape{36, 12, 2, 1}), boost::test_tools::per_element());
    BOOST_TEST(values(heads) == values(key.contiguous()), boost::test_tools::per_element());
    const Tensor merged = heads.reshape({6, -1});  // rows 12 apart: still one view
    BOOST_TEST(merged.impl().storage == qkv.impl().storage);
    BOOST_TEST(merged.strides() == (Shape{12, 1}), boost::test_tools::per_element());
    BOOST_TEST(values(merged) == values(key.contiguous()), boost::test_tools::per_element());
    // A transpose cannot merge with its neighbour: a copy, with the right values.
    const Tensor t = iota({2, 3, 4}).transpose(1, 2);
    const Tensor flat = t.reshape({2, 12});
    BOOST_TEST(flat.impl().storage != t.impl().storage);
    BOOST_TEST(values(flat) == values(t.contiguous()), boost::test_tools::per_element());
    // Size-1 dims and a leading 1 anywhere: views; an expanded tensor splits its stride-0 dim.
    BOOST_TEST(t.reshape({2, 4, 1, 3}).impl().storage == t.impl().storage);
    BOOST_TEST(values(t.unsqueeze(0).reshape({1, 2, 4, 3})) == values(t.contiguous()),
               boost::test_tools::per_element());
    const Tensor wide = iota({1, 3}).expand({4, 3}).reshape({2, 2, 3});
    BOOST_TEST(wide.strides() == (Shape{0, 0, 1}), boost::test_tools::per_element());
    BOOST_TEST(values(wide) == values(iota({1, 3}).expand({4, 3}).contiguous()),
               boost::test_tools::per_element());
    BOOST_CHECK_THROW((void)key.reshape({5, -1}), kael::ValueError);
    // Gradients reach the slice through the view.
    const Tensor x = iota({2, 6}).set_requires_grad(true);
    kael::sum(x.slice(1, 2, 6).reshape({2, 2, 2}) * 2.0).backward();
    BOOST_TEST(values(x.grad()) == (std::vector<float>{0, 0, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(split_and_chunk_are_views_with_one_backward) {
    const Tensor x = iota({2, 7});
    const std::vector<Tensor> pieces = kael::split(x, 3, 1);
    BOOST_REQUIRE(pieces.size() == 3U);
    BOOST_TEST(pieces[2].shape() == (Shape{2, 1}), boost::test_tools::per_element());
    BOOST_TEST(pieces[1].impl().storage == x.impl().storage);
    BOOST_TEST(values(pieces[1]) == (std::vector<float>{3, 4, 5, 10, 11, 12}),
               boost::test_tools::per_element());
    const std::vector<Tensor> sized = kael::split(x, std::vector<std::int64_t>{1, 0, 6}, -1);
    BOOST_TEST(sized[1].numel() == 0);
    BOOST_TEST(values(sized[2]) == values(x.slice(1, 1, 7)), boost::test_tools::per_element());
    BOOST_TEST(kael::chunk(x, 3, 1).size() == 3U);  // pieces of ceil(7 / 3) = 3
    BOOST_TEST(kael::chunk(iota({4}), 8).size() == 4U);
    BOOST_CHECK_THROW((void)kael::split(x, std::vector<std::int64_t>{3, 3}, 1), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::split(x, 0, 1), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::split(x, 2, 2), kael::IndexError);
    BOOST_CHECK_THROW((void)kael::chunk(x, 0, 1), kael::ValueError);
    // Gradients: used pieces, an unused one (zeros), and pieces whose gradients are views of
    // one buffer (cat's backward slices it), which split's backward takes as they are.
    const Tensor leaf = kael::randn({3, 5}, kael::DType::F64).set_requires_grad(true);
    BOOST_TEST(kael::autograd::gradcheck(
        [](const std::vector<Tensor>& in) {
            const std::vector<Tensor> parts = kael::split(in[0], std::vector<std::int64_t>{2, 1, 2}, 1);
            return kael::cat({parts[2] * 3.0, kael::exp(parts[0])}, 1);
        },
        {leaf}));
    BOOST_TEST(kael::autograd::gradcheck(
        [](const std::vector<Tensor>& in) {
            const std::vector<Tensor> parts = kael::chunk(in[0], 2, 0);
            return kael::cat({parts[0], parts[1]}, 0) * 2.0;
        },
        {leaf}));
    // Without grad mode nothing is recorded.
    {
        const kael::NoGradGuard no_grad;
        BOOST_TEST(!kael::split(leaf, 2, 1)[0].requires_grad());
    }
    BOOST_TEST(kael::split(leaf, 2, 1)[0].requires_grad());
}
