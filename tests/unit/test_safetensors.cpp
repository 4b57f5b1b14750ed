#define BOOST_TEST_MODULE safetensors
// safetensors: round trips, F16/BF16 conversion of known bit patterns, and rejected files.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include "kael/error.h"
#include "kael/nn.h"
#include "kael/random.h"
#include "kael/safetensors.h"
#include "nn_test_support.h"

using kael::Tensor;
namespace nn = kael::nn;

namespace {

// A file of the given JSON header and data section, as a writer of the format would lay it out.
void write_file(const std::filesystem::path& path, const std::string& header,
                const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::uint64_t length = header.size();
    out.write(reinterpret_cast<const char*>(&length), sizeof(length));
    out << header << data;
}

std::string u16_bytes(std::initializer_list<std::uint16_t> values) {
    std::string bytes;
    for (const std::uint16_t value : values) {
        bytes.append(reinterpret_cast<const char*>(&value), sizeof(value));
    }
    return bytes;
}

template <typename Error> auto message_has(const std::string& text) {
    return [text](const Error& error) {
        const std::string message = error.what();
        BOOST_TEST_MESSAGE(message);
        return message.find(text) != std::string::npos;
    };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(safetensors_files)

BOOST_AUTO_TEST_CASE(round_trip_keeps_every_dtype_shape_and_metadata) {
    TempFile file("kael_safetensors");
    const Tensor matrix = kael::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    const std::vector<std::pair<std::string, Tensor>> tensors = {
        {"matrix_t", matrix.transpose(0, 1)},
        {"doubles", kael::tensor(std::vector<double>{0.1, -2.5})},
        {"empty", kael::empty({0, 3}, kael::DType::I64)},
        {"scalar", kael::scalar_tensor(7, kael::DType::I64)},
        {"flags", kael::tensor_bool({true, false, true})}};
    kael::save_safetensors(file.path.string(), tensors, {{"format", "kael"}});

    const kael::SafetensorsFile opened(file.path.string());
    BOOST_TEST(opened.metadata().at("format") == "kael");
    BOOST_REQUIRE_EQUAL(opened.entries().size(), tensors.size());
    BOOST_TEST(opened.entries()[0].name == "matrix_t");  // data order is the order given
    BOOST_TEST(opened.find("absent") == nullptr);
    for (const auto& [name, original] : tensors) {
        const Tensor back = opened.read(name);
        BOOST_TEST((back.dtype() == original.dtype()));
        BOOST_TEST(back.shape() == original.shape(), boost::test_tools::per_element());
        BOOST_TEST(v(back) == v(original));
    }
    const auto loaded = kael::load_safetensors(file.path.string());
    BOOST_TEST(loaded.size() == tensors.size());
    BOOST_CHECK_EXCEPTION((void)opened.read("absent"), kael::ValueError, message_has<kael::ValueError>("'absent'"));
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_convert_exactly) {
    TempFile file("kael_safetensors_f16");
    const std::string header =
        R"({"h":{"dtype":"F16","shape":[6],"data_offsets":[0,12]},)"
        R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[12,16]},)"
        R"("i":{"dtype":"I8","shape":[2],"data_offsets":[16,18]}})";
    const std::string data = u16_bytes({0x3C00, 0x7C00, 0x0001, 0xFC00, 0x7E00, 0xC000}) +
                             u16_bytes({0x3F80, 0xC120}) + std::string("\x05\xFB", 2);
    write_file(file.path, header, data);
    const kael::SafetensorsFile opened(file.path.string());
    const auto half = opened.read("h").to_vector<float>();
    BOOST_TEST(half[0] == 1.0F);
    BOOST_TEST(half[1] == std::numeric_limits<float>::infinity());
    BOOST_TEST(half[2] == std::ldexp(1.0F, -24));
    BOOST_TEST(half[3] == -std::numeric_limits<float>::infinity());
    BOOST_TEST(std::isnan(half[4]));
    BOOST_TEST(half[5] == -2.0F);
    BOOST_TEST(opened.read("b").to_vector<float>() == (std::vector<float>{1.0F, -10.0F}),
               boost::test_tools::per_element());
    BOOST_TEST(opened.read("i").to_vector<std::int64_t>() == (std::vector<std::int64_t>{5, -5}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(broken_files_are_value_errors_naming_file_and_tensor) {
    TempFile file("kael_safetensors_broken");
    const std::string path = file.path.string();
    const auto rejects = [&](const std::string& header, const std::string& data,
                             const std::string& expected) {
        write_file(file.path, header, data);
        BOOST_CHECK_EXCEPTION(kael::SafetensorsFile{path}, kael::ValueError,
                              message_has<kael::ValueError>(expected));
    };
    rejects(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "1234", "'w' has 4 bytes");
    rejects(R"({"w":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})", "1234", "unknown dtype 'Q4'");
    rejects(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "12345678", "'w' appears twice");
    rejects(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
            R"("b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})", "123", "'a' and 'b' overlap");
    rejects(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "12", "ends at byte 1 (trailing");
    rejects(R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "1", "non-negative");
    rejects(R"({"a":)", "", "not valid JSON");
    rejects(R"({"__metadata__":{"k":1}})", "", "not a string");
    write_file(file.path, "", "");
    std::filesystem::resize_file(file.path, 4);
    BOOST_CHECK_EXCEPTION(kael::SafetensorsFile{path}, kael::ValueError,
                          message_has<kael::ValueError>(path));
    BOOST_CHECK_THROW(kael::SafetensorsFile{(file.path / "absent").string()}, kael::OSError);
}

BOOST_AUTO_TEST_CASE(unsupported_dtypes_are_type_errors_when_read) {
    TempFile file("kael_safetensors_u16");
    write_file(file.path, R"({"u":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}})", "12");
    const kael::SafetensorsFile opened(file.path.string());
    BOOST_CHECK_EXCEPTION((void)opened.read("u"), kael::TypeError,
                          message_has<kael::TypeError>("'u' has dtype U16"));
}

BOOST_AUTO_TEST_CASE(module_round_trip_and_failed_load_changes_nothing) {
    TempFile file("kael_safetensors_module");
    kael::manual_seed(3);
    nn::Linear saved(3, 2);
    saved.save_safetensors(file.path.string());
    nn::Linear loaded(3, 2);
    loaded.load_safetensors(file.path.string());
    BOOST_TEST(v(loaded.weight) == v(saved.weight));
    BOOST_TEST(v(loaded.bias) == v(saved.bias));

    nn::Linear other(3, 4);
    const auto before = v(other.weight);
    BOOST_CHECK_THROW(other.load_safetensors(file.path.string()), kael::ValueError);
    BOOST_TEST(v(other.weight) == before);
    nn::Linear no_bias(3, 2, false);
    const auto keys = no_bias.load_safetensors(file.path.string(), false);
    BOOST_TEST(keys.unexpected_keys == std::vector<std::string>{"bias"});
}

BOOST_AUTO_TEST_SUITE_END()
