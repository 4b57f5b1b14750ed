// Module::load_state_dict: everything is checked before anything is written.
#include <boost/test/unit_test.hpp>
#include <string>

#include "kael/error.h"
#include "kael/nn.h"
#include "nn_test_support.h"

using kael::Tensor;
namespace nn = kael::nn;

namespace {

using State = std::vector<std::pair<std::string, Tensor>>;

std::vector<std::vector<double>> snapshot(const nn::Module& module) {
    std::vector<std::vector<double>> values;
    for (const Tensor& parameter : module.parameters()) values.push_back(v(parameter));
    return values;
}

auto message_has(std::vector<std::string> parts) {
    return [parts](const kael::ValueError& error) {
        const std::string message = error.what();
        BOOST_TEST_MESSAGE("message: " << message);
        for (const std::string& part : parts) {
            if (message.find(part) == std::string::npos) return false;
        }
        return true;
    };
}

// LayerNorm(4) then Linear(4, 3): "0.weight", "0.bias", "1.weight", "1.bias".
nn::Sequential make_model(const kael::Device& device) {
    return nn::Sequential({std::make_shared<nn::LayerNorm>(4, 1e-5, device),
                           std::make_shared<nn::Linear>(4, 3, true, device)});
}

State full_state(float value) {
    return {{"0.weight", kael::full({4}, value)},
            {"0.bias", kael::full({4}, value)},
            {"1.weight", kael::full({3, 4}, value)},
            {"1.bias", kael::full({3}, value)}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(state_dict)

BOOST_AUTO_TEST_CASE(a_later_mismatch_writes_nothing) {
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            kael::manual_seed(50);
            nn::Sequential model = make_model(device);
            const auto before = snapshot(model);
            State state = full_state(7);
            state[2].second = kael::full({5, 4}, 7.0f);  // "1.weight" has the wrong shape
            BOOST_CHECK_EXCEPTION(model.load_state_dict(state), kael::ValueError,
                                  message_has({"load_state_dict", "'1.weight'", "[5, 4]",
                                               "[3, 4]"}));
            BOOST_TEST((snapshot(model) == before));
        }
    }
}

BOOST_AUTO_TEST_CASE(a_single_element_is_not_broadcast) {
    kael::manual_seed(51);
    nn::Sequential model = make_model(kael::kCPU);
    const auto before = snapshot(model);
    State state = full_state(1);
    state[1].second = kael::zeros({1});
    BOOST_CHECK_EXCEPTION(model.load_state_dict(state), kael::ValueError,
                          message_has({"load_state_dict", "'0.bias'", "[1]", "[4]"}));
    BOOST_TEST((snapshot(model) == before));
}

BOOST_AUTO_TEST_CASE(strict_rejects_unknown_and_missing_names) {
    kael::manual_seed(52);
    nn::Sequential model = make_model(kael::kCPU);
    const auto before = snapshot(model);
    State extra = full_state(2);
    extra.emplace_back("1.scale", kael::ones({3}));
    BOOST_CHECK_EXCEPTION(model.load_state_dict(extra), kael::ValueError,
                          message_has({"load_state_dict", "unexpected: '1.scale'"}));
    State partial = full_state(2);
    partial.erase(partial.begin() + 1);
    BOOST_CHECK_EXCEPTION(model.load_state_dict(partial), kael::ValueError,
                          message_has({"load_state_dict", "missing: '0.bias'"}));
    BOOST_TEST((snapshot(model) == before));
    State twice = full_state(2);
    twice.push_back(twice[0]);
    BOOST_CHECK_EXCEPTION(model.load_state_dict(twice), kael::ValueError,
                          message_has({"'0.weight' appears twice"}));
}

BOOST_AUTO_TEST_CASE(non_strict_writes_the_matches_and_reports_the_rest) {
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            kael::manual_seed(53);
            nn::Sequential model = make_model(device);
            const auto bias_before = v(model.parameters()[1]);
            State state = full_state(3);
            state.erase(state.begin() + 1);
            state.emplace_back("extra", kael::ones({2}));
            const nn::IncompatibleKeys keys = model.load_state_dict(state, false);
            BOOST_TEST((keys.missing_keys == std::vector<std::string>{"0.bias"}));
            BOOST_TEST((keys.unexpected_keys == std::vector<std::string>{"extra"}));
            const auto parameters = model.parameters();
            BOOST_TEST((v(parameters[0]) == std::vector<double>(4, 3.0)));
            BOOST_TEST((v(parameters[1]) == bias_before));
            BOOST_TEST((v(parameters[2]) == std::vector<double>(12, 3.0)));
            BOOST_TEST((parameters[2].device() == device));
            BOOST_TEST(parameters[2].requires_grad());
        }
    }
}

BOOST_AUTO_TEST_CASE(values_convert_to_the_parameter_dtype_and_device) {
    kael::manual_seed(54);
    nn::Linear layer(2, 2, false);
    const Tensor handle = layer.weight;
    layer.load_state_dict({{"weight", kael::full({2, 2}, 0.5, kael::DType::F64)}});
    BOOST_TEST(layer.weight.same_impl(handle));
    BOOST_TEST((layer.weight.dtype() == kael::DType::F32));
    BOOST_TEST((v(layer.weight) == std::vector<double>(4, 0.5)));
    BOOST_CHECK_THROW(layer.load_state_dict({{"weight", Tensor()}}), kael::TypeError);
}

BOOST_AUTO_TEST_SUITE_END()
