#define BOOST_TEST_MODULE device
#include <boost/test/unit_test.hpp>

#include "kael/device.h"
#include "kael/dtype.h"
#include "kael/error.h"

using kael::Device;
using kael::DeviceType;

BOOST_AUTO_TEST_CASE(parses_cpu_and_cuda_with_indices) {
    BOOST_TEST((Device("cpu") == Device(DeviceType::CPU, 0)));
    BOOST_TEST((Device("cpu:0") == Device(DeviceType::CPU, 0)));
    BOOST_TEST((Device("cuda") == Device(DeviceType::CUDA, 0)));
    BOOST_TEST((Device("cuda:0") == Device(DeviceType::CUDA, 0)));
    BOOST_TEST((Device("cuda:1") == Device(DeviceType::CUDA, 1)));
    BOOST_TEST((Device("cuda:12").index == 12));
}

BOOST_AUTO_TEST_CASE(prints_type_and_index) {
    BOOST_TEST(Device("cuda").str() == "cuda:0");
    BOOST_TEST(Device("cuda:3").str() == "cuda:3");
    BOOST_TEST(Device("cpu").str() == "cpu");
}

BOOST_AUTO_TEST_CASE(rejects_anything_else_naming_the_text) {
    for (const char* text : {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "cpu:1",
                             "cuda:+1", " cuda", "cuda:1:2", "tpu:0"}) {
        try {
            (void)kael::parse_device(text);
            BOOST_FAIL(std::string("accepted '") + text + "'");
        } catch (const kael::ValueError& error) {
            BOOST_TEST(std::string(error.what()).find(std::string("'") + text + "'") !=
                       std::string::npos);
        }
    }
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
    BOOST_TEST((kael::parse_dtype("float32") == DType::F32));
    BOOST_CHECK_THROW((void)kael::parse_dtype("f16"), kael::ValueError);
}
