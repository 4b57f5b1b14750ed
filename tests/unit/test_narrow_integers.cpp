// int32, int16, int8 and uint8 through the core: PyTorch's promotion (and its 0-d rule), wrapping
// conversions and arithmetic computed in int64 and narrowed once, and conversions between two
// narrow dtypes routed through int64 or float32, on every device kael lists.
#define BOOST_TEST_MODULE narrow_integers
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <vector>

#include "kael/ops.h"
#include "kael/registry.h"

using kael::DType;
using kael::Tensor;

namespace {

Tensor longs(const std::vector<std::int64_t>& values, const kael::Device& device) {
    Tensor host = kael::empty({static_cast<std::int64_t>(values.size())}, DType::I64);
    std::copy(values.begin(), values.end(), host.data_ptr<std::int64_t>());
    return host.to(device);
}

std::vector<std::int64_t> values_of(const Tensor& t) {
    return t.cpu().to(DType::I64).contiguous().to_vector<std::int64_t>();
}

std::vector<kael::Device> every_device() {
    std::vector<kael::Device> devices;
    for (const kael::DeviceInfo& info : kael::devices()) {
        devices.push_back(info.device);
    }
    return devices;
}

}  // namespace

BOOST_AUTO_TEST_CASE(promotion_follows_pytorch) {
    using kael::promote;
    BOOST_TEST((promote(DType::U8, DType::I8) == DType::I16));
    BOOST_TEST((promote(DType::I8, DType::I16) == DType::I16));
    BOOST_TEST((promote(DType::I32, DType::I64) == DType::I64));
    BOOST_TEST((promote(DType::Bool, DType::U8) == DType::U8));
    BOOST_TEST((promote(DType::I32, DType::BF16) == DType::BF16));
    BOOST_TEST((promote(DType::U8, DType::F32) == DType::F32));
    BOOST_TEST((kael::itemsize(DType::I32) == 4 && kael::itemsize(DType::I16) == 2 &&
                kael::itemsize(DType::I8) == 1 && kael::itemsize(DType::U8) == 1));
    BOOST_TEST((kael::parse_dtype("int8") == DType::I8 && kael::parse_dtype("u8") == DType::U8));
    BOOST_TEST((kael::wrap_integer(300, DType::I8) == 44 && kael::wrap_integer(-1, DType::U8) == 255));
}

BOOST_AUTO_TEST_CASE(zero_dim_operands_do_not_widen_dimensioned_ones) {
    const Tensor bytes = kael::ones({3}, DType::I8);
    BOOST_TEST((kael::result_type(bytes, kael::scalar_tensor(2, DType::I64)) == DType::I8));
    BOOST_TEST((kael::result_type(kael::scalar_tensor(2, DType::I64), bytes) == DType::I8));
    BOOST_TEST((kael::result_type(bytes, kael::scalar_tensor(2, DType::F64)) == DType::F64));
    BOOST_TEST((kael::result_type(kael::ones({3}, DType::BF16), kael::scalar_tensor(2, DType::F32)) ==
                DType::BF16));
    BOOST_TEST((kael::result_type(bytes, kael::ones({1}, DType::I64)) == DType::I64));
    BOOST_TEST(((bytes * kael::scalar_tensor(3, DType::I64)).dtype() == DType::I8));
}

BOOST_AUTO_TEST_CASE(conversions_and_arithmetic_wrap_on_every_device) {
    for (const kael::Device& device : every_device()) {
        BOOST_TEST_CONTEXT(device.str()) {
            kael::reset_fallback_counts();
            const Tensor wide = longs({300, -129, 127, 65535, -1, 2147483648}, device);
            const Tensor bytes = wide.to(DType::I8);
            BOOST_TEST((bytes.device() == device && bytes.dtype() == DType::I8));
            BOOST_TEST((values_of(bytes) == std::vector<std::int64_t>{44, 127, 127, -1, -1, 0}));
            BOOST_TEST((values_of(wide.to(DType::U8)) ==
                        std::vector<std::int64_t>{44, 127, 127, 255, 255, 0}));
            BOOST_TEST((values_of(wide.to(DType::I32)) ==
                        std::vector<std::int64_t>{300, -129, 127, 65535, -1, -2147483648LL}));
            // between two narrow dtypes (through i64) and to bf16 (through f32)
            BOOST_TEST((values_of(wide.to(DType::I32).to(DType::I16)) ==
                        std::vector<std::int64_t>{300, -129, 127, -1, -1, 0}));
            BOOST_TEST((values_of(bytes.to(DType::BF16)) ==
                        std::vector<std::int64_t>{44, 127, 127, -1, -1, 0}));
            const Tensor floats = kael::full({2}, -300.75, DType::F32, device);
            BOOST_TEST((values_of(floats.to(DType::I8)) == std::vector<std::int64_t>{-44, -44}));
            // arithmetic in int64, narrowed once: 127 + 127 wraps to -2, as in PyTorch
            const Tensor sum = bytes + bytes;
            BOOST_TEST((sum.dtype() == DType::I8));
            BOOST_TEST((values_of(sum) == std::vector<std::int64_t>{88, -2, -2, -2, -2, 0}));
            BOOST_TEST((kael::sum(bytes).dtype() == DType::I64));
            BOOST_TEST((values_of(kael::sum(bytes)) == std::vector<std::int64_t>{296}));
            BOOST_TEST((kael::amax(bytes).dtype() == DType::I8));
            BOOST_TEST((values_of(kael::gt(bytes, kael::zeros({1}, DType::U8, device))) ==
                        std::vector<std::int64_t>{1, 1, 1, 0, 0, 0}));
            const auto counts = kael::fallback_counts();
            BOOST_TEST(counts.empty(), "fell back: " << counts.size() << " slot(s)");
        }
    }
}

BOOST_AUTO_TEST_CASE(full_refuses_values_the_dtype_cannot_hold) {
    BOOST_CHECK_THROW((void)kael::full({2}, 128, DType::I8), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::full({2}, -1, DType::U8), kael::ValueError);
    BOOST_TEST((values_of(kael::full({1}, 255, DType::U8)) == std::vector<std::int64_t>{255}));
}
