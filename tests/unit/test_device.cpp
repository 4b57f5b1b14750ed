#define BOOST_TEST_MODULE device
#include <boost/test/unit_test.hpp>

#include "kael/device.h"
#include "kael/dtype.h"
#include "kael/error.h"
#include "kael/ops.h"
#include "kael/registry.h"
#include "kael/tensor.h"

using kael::Device;

// The build tree always has the cpu plugin and the emulated one, which declares "cuda".
BOOST_AUTO_TEST_CASE(parses_registered_types_with_indices) {
    BOOST_TEST((Device("cpu") == Device("cpu", 0)));
    BOOST_TEST((Device("cpu:0") == Device()));
    BOOST_TEST((Device("cuda") == Device("cuda", 0)));
    BOOST_TEST((Device("cuda:0") == Device("cuda", 0)));
    BOOST_TEST((Device("cuda:1") == Device("cuda", 1)));
    BOOST_TEST((Device("cuda:1") != Device("cuda", 0)));
    BOOST_TEST((Device("cuda:0") != Device("cpu", 0)));
    BOOST_TEST((Device("cuda:12").index == 12));
    BOOST_TEST(Device("cuda:12").type() == "cuda");
    BOOST_TEST(Device("cpu").is_cpu());
    BOOST_TEST(!Device("cuda").is_cpu());
}

BOOST_AUTO_TEST_CASE(registered_types_come_from_the_plugins) {
    const auto types = kael::registered_device_types();
    BOOST_REQUIRE(!types.empty());
    BOOST_TEST(types.front() == "cpu");
    BOOST_TEST((std::find(types.begin(), types.end(), "cuda") != types.end()));
}

BOOST_AUTO_TEST_CASE(prints_type_and_index) {
    BOOST_TEST(Device("cuda").str() == "cuda:0");
    BOOST_TEST(Device("cuda:3").str() == "cuda:3");
    BOOST_TEST(Device("cpu").str() == "cpu");
    BOOST_TEST(Device("toy", 2).str() == "toy:2");  // any name can be built, parsed or not
}

BOOST_AUTO_TEST_CASE(rejects_anything_else_naming_the_text_and_the_registered_types) {
    for (const char* text : {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "cuda:+1",
                             " cuda", "cuda:1:2", "tpu:0", "toy:0"}) {
        try {
            (void)kael::parse_device(text);
            BOOST_FAIL(std::string("accepted '") + text + "'");
        } catch (const kael::ValueError& error) {
            const std::string message = error.what();
            BOOST_TEST(message.find(std::string("'") + text + "'") != std::string::npos);
            BOOST_TEST(message.find("registered device types: 'cpu'") != std::string::npos,
                       message);
        }
    }
}

BOOST_AUTO_TEST_CASE(type_names_are_checked_when_built) {
    BOOST_CHECK_THROW(Device("Toy", 0), kael::ValueError);
    BOOST_CHECK_THROW(Device("", 0), kael::ValueError);
    BOOST_CHECK_THROW(Device("to y", 0), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(dtypes_have_sizes_names_and_promotion) {
    using kael::DType;
    BOOST_TEST(kael::itemsize(DType::F32) == 4);
    BOOST_TEST(kael::itemsize(DType::F64) == 8);
    BOOST_TEST(kael::itemsize(DType::I64) == 8);
    BOOST_TEST(kael::itemsize(DType::Bool) == 1);
    BOOST_TEST((kael::promote(DType::Bool, DType::I64) == DType::I64));
    BOOST_TEST((kael::promote(DType::I64, DType::F32) == DType::F32));
    BOOST_TEST((kael::promote(DType::F32, DType::F64) == DType::F64));
    BOOST_TEST(kael::itemsize(DType::BF16) == 2);
    BOOST_TEST(kael::itemsize(DType::F16) == 2);
    // PyTorch's table: the two low-precision dtypes meet in f32; either beats the integers.
    BOOST_TEST((kael::promote(DType::BF16, DType::F16) == DType::F32));
    BOOST_TEST((kael::promote(DType::F16, DType::BF16) == DType::F32));
    BOOST_TEST((kael::promote(DType::BF16, DType::I64) == DType::BF16));
    BOOST_TEST((kael::promote(DType::Bool, DType::F16) == DType::F16));
    BOOST_TEST((kael::promote(DType::F16, DType::F32) == DType::F32));
    BOOST_TEST((kael::promote(DType::BF16, DType::F64) == DType::F64));
    BOOST_TEST(kael::is_floating(DType::BF16));
    BOOST_TEST((kael::parse_dtype("float32") == DType::F32));
    BOOST_TEST((kael::parse_dtype("half") == DType::F16));
    BOOST_TEST((kael::parse_dtype("bfloat16") == DType::BF16));
    BOOST_CHECK_THROW((void)kael::parse_dtype("f8"), kael::ValueError);
}

// The emulated plugin serves cuda:0 in the build tree and hands out host memory through its
// kael.host_memory extension, as the cuda plugin does with cudaHostAlloc.
BOOST_AUTO_TEST_CASE(pinned_host_tensors_come_from_the_device_plugin) {
    const kael::Tensor x = kael::arange(0, 12).reshape({3, 4}).transpose(0, 1);
    const kael::Tensor pinned = x.pin_memory();
    BOOST_TEST(pinned.is_pinned());
    BOOST_TEST(!x.is_pinned());
    BOOST_TEST(pinned.device().is_cpu());
    BOOST_TEST(pinned.is_contiguous());
    BOOST_TEST(pinned.to_vector<float>() == x.contiguous().to_vector<float>());
    BOOST_TEST(pinned.pin_memory().same_impl(pinned));
    BOOST_TEST(pinned.to(Device("cuda")).to(kael::kCPU).to_vector<float>() ==
               x.contiguous().to_vector<float>());
    BOOST_CHECK_THROW((void)x.pin_memory(kael::kCPU), kael::DeviceError);
    BOOST_CHECK_THROW((void)x.to(Device("cuda")).pin_memory(), kael::DeviceError);
}
