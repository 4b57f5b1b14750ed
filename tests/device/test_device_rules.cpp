// The seed's device rules: transfers, factories, host access, mixed devices, caching.
#define BOOST_TEST_MODULE device_suite
#include "device_test_support.h"

using device_test::expect_matches_cpu;
using device_test::OnDevice;
using kael::DType;
using kael::Tensor;
namespace tt = boost::test_tools;

BOOST_FIXTURE_TEST_SUITE(Cuda, OnDevice)

BOOST_AUTO_TEST_CASE(TransfersRoundTrip) {
    const Tensor x = kael::randn({3, 5});
    const Tensor there = x.to(device);
    BOOST_TEST((there.device() == device));
    BOOST_TEST(x.to_vector<float>() == there.cpu().to_vector<float>(), tt::per_element());
    for (const DType dtype : {DType::F64, DType::I64, DType::Bool}) {
        const Tensor typed = (x * 3.0).to(dtype);
        BOOST_TEST(kael::allclose(typed.to(device).cpu(), typed));
    }
}

BOOST_AUTO_TEST_CASE(SameDeviceReturnsTheSameTensor) {
    const Tensor there = kael::ones({2}).to(device);
    BOOST_TEST(there.to(device).same_impl(there));
    const Tensor here = kael::ones({2});
    BOOST_TEST(here.cpu().same_impl(here));
}

BOOST_AUTO_TEST_CASE(NonContiguousTensorsTransfer) {
    const Tensor x = kael::arange(0, 6, 1).view({2, 3});
    const Tensor moved = x.T().to(device);
    BOOST_TEST(moved.shape() == (kael::Shape{3, 2}), tt::per_element());
    BOOST_TEST(moved.is_contiguous());
    BOOST_TEST(moved.cpu().to_vector<float>() == (std::vector<float>{0, 3, 1, 4, 2, 5}),
               tt::per_element());
    const Tensor stepped = x.to(device).slice(1, 0, 3, 2).cpu();
    BOOST_TEST(stepped.to_vector<float>() == (std::vector<float>{0, 2, 3, 5}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(CopyBetweenDevicesWorks) {
    Tensor target = kael::zeros({2, 3}, DType::F32, device);
    target.slice(1, 1, 3).copy_(kael::ones({2, 2}).to(device));
    BOOST_TEST(target.cpu().to_vector<float>() == (std::vector<float>{0, 1, 1, 0, 1, 1}),
               tt::per_element());
    Tensor host = kael::zeros({2});
    BOOST_CHECK_THROW(host.copy_(kael::ones({2}).to(device)), kael::DeviceError);
    host.copy_(kael::ones({2}).to(device).cpu());
    BOOST_TEST(host.to_vector<float>() == (std::vector<float>{1, 1}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(FactoriesCreateOnTheDevice) {
    for (const Tensor& t :
         {kael::zeros({2, 2}, DType::F32, device), kael::ones({3}, DType::I64, device),
          kael::full({2}, 2.5, DType::F64, device), kael::empty({0, 4}, DType::Bool, device),
          kael::arange(0, 4, 1, DType::F32, device), kael::rand({3}, DType::F32, device)}) {
        BOOST_TEST((t.device() == device));
    }
    BOOST_TEST(kael::full({2}, 2.5, DType::F64, device).cpu().to_vector<double>() ==
                   (std::vector<double>{2.5, 2.5}),
               tt::per_element());
    kael::manual_seed(7);
    const Tensor on_device = kael::randn({5}, DType::F32, device);
    kael::manual_seed(7);
    const Tensor on_cpu = kael::randn({5});
    BOOST_TEST(on_device.cpu().to_vector<float>() == on_cpu.to_vector<float>(), tt::per_element());
}

BOOST_AUTO_TEST_CASE(ScalarsFollowTheTensorDevice) {
    const Tensor x = kael::ones({3}).to(device);
    for (const Tensor& result : {x + 1.0, x * 2.0, 3.0 * x, x / 4.0, x - 1.0}) {
        BOOST_TEST((result.device() == device));
    }
    BOOST_TEST((x + 1.0).cpu().to_vector<float>() == (std::vector<float>{2, 2, 2}),
               tt::per_element());
}

BOOST_AUTO_TEST_CASE(HostOnlyAccessFailsClearly) {
    const Tensor x = kael::ones({2}).to(device);
    try {
        (void)x.data_ptr<float>();
        BOOST_FAIL("data_ptr on a device tensor did not throw");
    } catch (const kael::Error& error) {
        BOOST_TEST(std::string(error.what()) ==
                   "this operation reads tensor memory directly, which is not possible on device " +
                       device.str() + "; call cpu() first");
    }
}

BOOST_AUTO_TEST_CASE(ReadingValuesCopiesToHost) {
    const Tensor x = kael::full({}, 4.5, DType::F64, device);
    BOOST_TEST(x.item<double>() == 4.5);
    BOOST_TEST(kael::sum(kael::ones({10}, DType::I64, device)).item<std::int64_t>() == 10);
    BOOST_TEST(x.str().find("device='cuda:0'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(MixedDevicesAreRejected) {
    const Tensor here = kael::ones({2});
    const Tensor there = kael::ones({2}).to(device);
    try {
        (void)(here + there);
        BOOST_FAIL("mixing devices did not throw");
    } catch (const kael::DeviceError& error) {
        BOOST_TEST(
            std::string(error.what())
                .find("expected all tensors to be on the same device, but found cpu and cuda") !=
            std::string::npos);
    }
    BOOST_CHECK_THROW((void)kael::matmul(here.view({1, 2}), there.view({2, 1})), kael::DeviceError);
    BOOST_CHECK_THROW((void)kael::gather(there, 0, kael::zeros({1}, DType::I64)),
                      kael::DeviceError);
    BOOST_CHECK_THROW((void)kael::cat({there, here}, 0), kael::DeviceError);
}

BOOST_AUTO_TEST_CASE(DeviceBlocksAreCached) {
    if (!kael::caching_allocator_enabled()) {
        return;  // sanitizer builds hand every block straight back
    }
    kael::empty_cache(device);
    { const Tensor first = kael::empty({256, 256}, DType::F32, device); }
    const kael::AllocatorStats before = kael::allocator_stats(device);
    BOOST_TEST(before.cached_bytes >= 256 * 256 * 4);
    { const Tensor second = kael::empty({256, 256}, DType::F32, device); }
    const kael::AllocatorStats after = kael::allocator_stats(device);
    BOOST_TEST(after.hits == before.hits + 1);
    BOOST_TEST(after.misses == before.misses);
    kael::empty_cache(device);
    BOOST_TEST(kael::allocator_stats(device).cached_bytes == 0);
}

BOOST_AUTO_TEST_CASE(EmptyTensorsWork) {
    const Tensor empty = kael::zeros({0, 3}, DType::F32, device);
    expect_matches_cpu(kael::exp(empty) + 1.0, kael::exp(kael::zeros({0, 3})) + 1.0);
    expect_matches_cpu(kael::sum(empty, 0), kael::sum(kael::zeros({0, 3}), 0));
    expect_matches_cpu(kael::sum(empty), kael::sum(kael::zeros({0, 3})));
    expect_matches_cpu(kael::matmul(empty.T(), empty), kael::zeros({3, 3}));
    BOOST_TEST(empty.cpu().numel() == 0);
    BOOST_TEST(kael::zeros({0}).to(device).numel() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
