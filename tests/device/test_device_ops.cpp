// Kernels on the device against the cpu: layouts, dtypes, non-finite values, integer rules.
#include <cmath>
#include <functional>
#include <limits>

#include "device_test_support.h"

using device_test::expect_matches_cpu;
using device_test::expect_same_on_both;
using device_test::OnDevice;
using kael::DType;
using kael::Tensor;
namespace tt = boost::test_tools;

namespace {

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

// Contiguous, transposed and stepped views of one host tensor.
std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> layouts() {
    return {{"contiguous", [](const Tensor& t) { return t; }},
            {"transposed", [](const Tensor& t) { return t.T(); }},
            {"stepped", [](const Tensor& t) { return t.slice(1, 0, t.size(1), 2); }}};
}

std::vector<std::pair<const char*, Unary>> unary_ops() {
    return {{"neg", [](const Tensor& x) { return kael::neg(x); }},
            {"abs", [](const Tensor& x) { return kael::abs(x); }},
            {"sign", [](const Tensor& x) { return kael::sign(x); }},
            {"exp", [](const Tensor& x) { return kael::exp(x); }},
            {"log", [](const Tensor& x) { return kael::log(kael::abs(x) + 0.5); }},
            {"sqrt", [](const Tensor& x) { return kael::sqrt(kael::abs(x)); }},
            {"rsqrt", [](const Tensor& x) { return kael::rsqrt(kael::abs(x) + 0.1); }},
            {"sin", [](const Tensor& x) { return kael::sin(x); }},
            {"cos", [](const Tensor& x) { return kael::cos(x); }},
            {"tanh", [](const Tensor& x) { return kael::tanh(x); }},
            {"sigmoid", [](const Tensor& x) { return kael::sigmoid(x); }},
            {"relu", [](const Tensor& x) { return kael::relu(x); }},
            {"gelu", [](const Tensor& x) { return kael::gelu(x); }},
            {"gelu_tanh", [](const Tensor& x) { return kael::gelu(x, true); }},
            {"square", [](const Tensor& x) { return kael::square(x); }},
            {"reciprocal", [](const Tensor& x) { return kael::reciprocal(x + 5.0); }},
            {"clamp", [](const Tensor& x) { return kael::clamp(x, -0.5, 0.5); }},
            {"sum", [](const Tensor& x) { return kael::sum(x); }},
            {"sum_dim0", [](const Tensor& x) { return kael::sum(x, 0); }},
            {"sum_dim1_keep", [](const Tensor& x) { return kael::sum(x, 1, true); }},
            {"mean", [](const Tensor& x) { return kael::mean(x, 1); }},
            {"max", [](const Tensor& x) { return kael::max(x, 0); }},
            {"min", [](const Tensor& x) { return kael::min(x); }},
            {"argmax", [](const Tensor& x) { return kael::argmax(x, 1); }},
            {"argmin", [](const Tensor& x) { return kael::argmin(x, 0); }},
            {"prod", [](const Tensor& x) { return kael::prod(x * 0.5 + 1.0, 1); }},
            {"var", [](const Tensor& x) { return kael::var(x, 1); }},
            {"norm", [](const Tensor& x) { return kael::norm(x); }},
            {"softmax", [](const Tensor& x) { return kael::softmax(x, 1); }},
            {"log_softmax", [](const Tensor& x) { return kael::log_softmax(x, 0); }},
            {"layer_norm", [](const Tensor& x) { return kael::layer_norm(x); }}};
}

std::vector<std::pair<const char*, Binary>> binary_ops() {
    return {{"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
            {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }},
            {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
            {"div", [](const Tensor& a, const Tensor& b) { return a / (kael::abs(b) + 1.0); }},
            {"pow", [](const Tensor& a, const Tensor& b) { return kael::pow(kael::abs(a), b); }},
            {"maximum", [](const Tensor& a, const Tensor& b) { return kael::maximum(a, b); }},
            {"minimum", [](const Tensor& a, const Tensor& b) { return kael::minimum(a, b); }},
            {"eq", [](const Tensor& a, const Tensor& b) { return kael::eq(a, b); }},
            {"ne", [](const Tensor& a, const Tensor& b) { return kael::ne(a, b); }},
            {"lt", [](const Tensor& a, const Tensor& b) { return kael::lt(a, b); }},
            {"le", [](const Tensor& a, const Tensor& b) { return kael::le(a, b); }},
            {"gt", [](const Tensor& a, const Tensor& b) { return kael::gt(a, b); }},
            {"ge", [](const Tensor& a, const Tensor& b) { return kael::ge(a, b); }},
            {"where", [](const Tensor& a, const Tensor& b) { return kael::where(kael::gt(a, b), a, b); }},
            {"logical_and", [](const Tensor& a, const Tensor& b) { return kael::logical_and(a, b); }},
            {"logical_or", [](const Tensor& a, const Tensor& b) { return kael::logical_or(a, b); }},
            {"relu_backward", [](const Tensor& a, const Tensor& b) { return kael::relu_backward(a, b); }},
            {"sigmoid_backward",
             [](const Tensor& a, const Tensor& b) { return kael::sigmoid_backward(a, b); }},
            {"gelu_backward", [](const Tensor& a, const Tensor& b) { return kael::gelu_backward(a, b); }},
            {"gelu_tanh_backward",
             [](const Tensor& a, const Tensor& b) { return kael::gelu_backward(a, b, true); }},
            {"masked_fill", [](const Tensor& a, const Tensor& b) {
                 return kael::masked_fill(a, kael::gt(b, a), -2.0);
             }}};
}

void check_unary_ops(DType dtype) {
    const Tensor base = kael::randn({6, 8}, dtype);
    for (const auto& [layout_name, layout] : layouts()) {
        for (const auto& [op_name, op] : unary_ops()) {
            BOOST_TEST_CONTEXT(op_name << " on a " << layout_name << " " << kael::to_string(dtype)
                                       << " input") {
                expect_same_on_both(base, [&](const Tensor& x) { return op(layout(x)); });
            }
        }
    }
}

void check_binary_ops(DType dtype) {
    const Tensor a = kael::randn({4, 5}, dtype);
    const std::vector<std::pair<const char*, Tensor>> partners = {
        {"same shape", kael::randn({4, 5}, dtype)},
        {"row", kael::randn({5}, dtype)},
        {"column", kael::randn({4, 1}, dtype)},
        {"0-d", kael::randn({}, dtype)}};
    for (const auto& [partner_name, b] : partners) {
        for (const auto& [op_name, op] : binary_ops()) {
            BOOST_TEST_CONTEXT(op_name << " with a " << partner_name << " operand in "
                                       << kael::to_string(dtype)) {
                expect_matches_cpu(op(a.to(device_test::test_device()),
                                      b.to(device_test::test_device())),
                                   op(a, b));
            }
        }
    }
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(Cuda, OnDevice)

BOOST_AUTO_TEST_CASE(UnaryOpsMatchCpuOnEveryLayout) { check_unary_ops(DType::F32); }
BOOST_AUTO_TEST_CASE(BinaryOpsMatchCpuWithBroadcast) { check_binary_ops(DType::F32); }

BOOST_AUTO_TEST_CASE(DoublePrecisionMatchesCpu) {
    check_unary_ops(DType::F64);
    check_binary_ops(DType::F64);
}

BOOST_AUTO_TEST_CASE(IntegerOpsMatchCpu) {
    const Tensor a = kael::randint(-50, 50, {5, 6});
    const Tensor b = kael::randint(1, 9, {6});
    for (const auto& [name, op] : std::vector<std::pair<const char*, Binary>>{
             {"add", [](const Tensor& x, const Tensor& y) { return x + y; }},
             {"sub", [](const Tensor& x, const Tensor& y) { return x - y; }},
             {"mul", [](const Tensor& x, const Tensor& y) { return x * y; }},
             {"maximum", [](const Tensor& x, const Tensor& y) { return kael::maximum(x, y); }},
             {"lt", [](const Tensor& x, const Tensor& y) { return kael::lt(x, y); }},
             {"sum", [](const Tensor& x, const Tensor& y) { return kael::sum(x * y, 0); }},
             {"abs_sign", [](const Tensor& x, const Tensor&) { return kael::abs(x) * kael::sign(x); }},
             {"argmax", [](const Tensor& x, const Tensor&) { return kael::argmax(x.T(), 1); }},
             {"cumsum", [](const Tensor& x, const Tensor&) { return kael::cumsum(x, 1); }}}) {
        BOOST_TEST_CONTEXT(name) {
            expect_matches_cpu(op(a.to(device), b.to(device)), op(a, b));
        }
    }
}

BOOST_AUTO_TEST_CASE(BoolReductionsMatchCpu) {
    const Tensor mask = kael::gt(kael::randn({7, 9}), kael::zeros({}));
    expect_same_on_both(mask, [](const Tensor& m) { return kael::sum(m, 1); });
    expect_same_on_both(mask, [](const Tensor& m) { return kael::all(m, 0); });
    expect_same_on_both(mask, [](const Tensor& m) { return kael::any(m.T(), 1); });
    expect_same_on_both(mask, [](const Tensor& m) { return kael::max(m); });
    expect_same_on_both(mask, [](const Tensor& m) { return kael::logical_not(m); });
}

BOOST_AUTO_TEST_CASE(NonFiniteValuesMatchCpu) {
    const float inf = std::numeric_limits<float>::infinity();
    const Tensor x = kael::tensor(std::vector<float>{std::nanf(""), inf, -inf, 0.0f, -0.0f, 1.0f});
    for (const auto& [name, op] : unary_ops()) {
        BOOST_TEST_CONTEXT(name) {
            expect_same_on_both(x.view({2, 3}), op);
        }
    }
    expect_same_on_both(x, [](const Tensor& t) { return t.to(DType::I64); });
    expect_same_on_both(x, [](const Tensor& t) { return kael::maximum(t, t.slice(0, 0, 6).flatten() * 0.0); });
}

BOOST_AUTO_TEST_CASE(LongSumsMatchCpuAndAreDeterministic) {
    const Tensor x = kael::randn({20000}) * 100.0;
    const Tensor on_device = x.to(device);
    const float first = kael::sum(on_device).item<float>();
    BOOST_TEST(kael::sum(on_device).item<float>() == first);  // bit for bit, run to run
    BOOST_TEST(first == kael::sum(x).item<float>());          // same block order as cpu
    const Tensor rows = kael::randn({3, 9000}, DType::F64);
    expect_same_on_both(rows, [](const Tensor& t) { return kael::sum(t, 1); });
    expect_same_on_both(rows, [](const Tensor& t) { return kael::max(t, 1); });
    expect_same_on_both(rows, [](const Tensor& t) { return kael::argmin(t, 1); });
}

BOOST_AUTO_TEST_CASE(IntegerClampAndMaskedFillKeepEveryBit) {
    const std::int64_t above = (std::int64_t{1} << 53) + 1;
    const Tensor x = kael::tensor(std::vector<std::int64_t>{above + 2, 5, above}).to(device);
    BOOST_TEST(kael::clamp_int(x, 7, above).cpu().to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{above, 7, above}), tt::per_element());
    const Tensor mask = kael::tensor_bool({false, true, false}).to(device);
    BOOST_TEST(kael::masked_fill_int(x, mask, above).cpu().to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{above + 2, above, above}), tt::per_element());
    BOOST_TEST(kael::full_int({1}, above, DType::I64, device).item<std::int64_t>() == above);
}

BOOST_AUTO_TEST_CASE(IntegerSumWrapsAndFloatConversionSaturates) {
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const Tensor x = kael::tensor(std::vector<std::int64_t>{big, 1}).to(device);
    BOOST_TEST(kael::sum(x).item<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
    const Tensor f = kael::tensor(std::vector<double>{1e30, -1e30, std::nan("")}).to(device);
    BOOST_TEST(f.to(DType::I64).cpu().to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{big, std::numeric_limits<std::int64_t>::min(), 0}),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(IntegerScatterAddWrapsAround) {
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    Tensor target = kael::full_int({2}, big, DType::I64, device);
    kael::scatter_add_(target, 0, kael::tensor(std::vector<std::int64_t>{0, 0, 1}).to(device),
                       kael::tensor(std::vector<std::int64_t>{1, 1, 2}).to(device));
    BOOST_TEST(target.cpu().to_vector<std::int64_t>() ==
                   (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min() + 1,
                                              std::numeric_limits<std::int64_t>::min() + 1}),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(MatmulBatchesVectorsAndIntegersMatchCpu) {
    const Tensor a = kael::randn({3, 4, 5});
    const Tensor b = kael::randn({5, 2});
    expect_matches_cpu(kael::matmul(a.to(device), b.to(device)), kael::matmul(a, b));
    expect_matches_cpu(kael::matmul(b.T().to(device), a.to(device).transpose(1, 2)),
                       kael::matmul(b.T(), a.transpose(1, 2)));
    const Tensor v = kael::randn({5});
    expect_matches_cpu(kael::matmul(a.to(device), v.to(device)), kael::matmul(a, v));
    expect_matches_cpu(kael::matmul(v.to(device), v.to(device)), kael::matmul(v, v));
    const Tensor i = kael::randint(-9, 9, {4, 6});
    expect_matches_cpu(kael::matmul(i.to(device), i.T().to(device)), kael::matmul(i, i.T()));
    expect_matches_cpu(kael::matmul(a.to(DType::F64).to(device), b.to(DType::F64).to(device)),
                       kael::matmul(a.to(DType::F64), b.to(DType::F64)));
}

BOOST_AUTO_TEST_CASE(IndexingMatchesCpu) {
    const Tensor data = kael::randn({4, 6});
    const Tensor index = kael::randint(0, 6, {4, 3});
    expect_same_on_both(data, [&](const Tensor& d) { return kael::gather(d, 1, index.to(d.device())); });
    expect_same_on_both(data, [&](const Tensor& d) {
        return kael::index_select(d, 0, kael::tensor(std::vector<std::int64_t>{3, 0, 3}).to(d.device()));
    });
    expect_same_on_both(data, [&](const Tensor& d) {
        Tensor target = kael::zeros({4, 6}, DType::F32, d.device());
        kael::scatter_add_(target, 1, index.to(d.device()), d.slice(1, 0, 3));
        return target;
    });
    expect_same_on_both(kael::randn({5, 3}), [](const Tensor& weight) {
        return kael::embedding(weight, kael::tensor(std::vector<std::int64_t>{4, 0, 2, 2}, {2, 2})
                                           .to(weight.device()));
    });
}

BOOST_AUTO_TEST_CASE(OutOfRangeIndicesStillThrow) {
    Tensor data = kael::zeros({2, 3}, DType::F32, device);
    const Tensor bad = kael::tensor(std::vector<std::int64_t>{0, 3}, {2, 1}).to(device);
    // At the call, or (a deferred device check) at the next synchronisation, once.
    BOOST_CHECK_THROW(
        {
            (void)kael::gather(data, 1, bad);
            kael::synchronize(device);
        },
        kael::IndexError);
    BOOST_CHECK_THROW(
        {
            kael::scatter_add_(data, 1, bad, kael::ones({2, 1}).to(device));
            kael::synchronize(device);
        },
        kael::IndexError);
    kael::synchronize(device);
    // The bad index wrote nothing; the good one (0) may have been added before the report.
    BOOST_TEST(kael::sum(data.slice(1, 1, 3)).item<float>() == 0.0f);
}

BOOST_AUTO_TEST_CASE(SteppedIndicesWorkOnTheDevice) {
    const Tensor data = kael::randn({3, 8});
    const Tensor index = kael::randint(0, 8, {3, 8}).slice(1, 0, 8, 3);
    expect_same_on_both(data, [&](const Tensor& d) {
        return kael::gather(d.slice(1, 0, 8), 1, index.to(d.device()));
    });
}

BOOST_AUTO_TEST_CASE(SequenceOpsMatchCpu) {
    const Tensor x = kael::randn({4, 7});
    expect_same_on_both(x, [](const Tensor& t) { return kael::sort(t, 1).first; });
    expect_same_on_both(x, [](const Tensor& t) { return kael::sort(t, 0, true).second; });
    expect_same_on_both(x, [](const Tensor& t) { return kael::topk(t, 3, 1).first; });
    expect_same_on_both(x, [](const Tensor& t) { return kael::cumsum(t.T(), 1); });
    expect_same_on_both(x, [](const Tensor& t) { return kael::cat({t, t * 2.0}, 1); });
    expect_same_on_both(x, [](const Tensor& t) { return kael::stack({t, t}, 0); });
    expect_same_on_both(x, [](const Tensor& t) { return kael::all(kael::gt(t, t - 1.0)); });
}

BOOST_AUTO_TEST_SUITE_END()

// The seed's matmul shapes: rows x inner x columns, clipped edge tiles included.
namespace {
void expect_matmul_matches_cpu(std::int64_t rows, std::int64_t inner, std::int64_t columns) {
    const kael::Device device = device_test::test_device();
    const Tensor a = kael::randn({rows, inner});
    const Tensor b = kael::randn({inner, columns});
    expect_matches_cpu(kael::matmul(a.to(device), b.to(device)), kael::matmul(a, b));
}
}  // namespace

#define KAEL_MATMUL_SHAPE(rows, inner, columns)                          \
    BOOST_AUTO_TEST_CASE(MatchesCpu_##rows##x##inner##x##columns) {      \
        expect_matmul_matches_cpu(rows, inner, columns);                 \
    }

BOOST_FIXTURE_TEST_SUITE(CudaMatmul, OnDevice)
KAEL_MATMUL_SHAPE(1, 1, 1)
KAEL_MATMUL_SHAPE(4, 4, 4)
KAEL_MATMUL_SHAPE(5, 3, 9)
KAEL_MATMUL_SHAPE(8, 16, 7)
KAEL_MATMUL_SHAPE(33, 20, 65)
KAEL_MATMUL_SHAPE(64, 1, 64)
KAEL_MATMUL_SHAPE(1, 64, 1)
BOOST_AUTO_TEST_SUITE_END()
