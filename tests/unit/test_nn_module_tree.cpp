#define BOOST_TEST_MODULE nn_module_tree
#include <boost/test/unit_test.hpp>
#include <string>

#include "kael/autograd.h"
#include "kael/nn.h"
#include "kael/nn_functional.h"
#include "nn_test_support.h"

using kael::Tensor;
namespace nn = kael::nn;

namespace {

// A layer with a persistent and a non-persistent buffer beside a child, as a user writes one.
class Scaled : public nn::Module {
public:
    Scaled() {
        hidden = register_module("hidden", std::make_shared<nn::Linear>(2, 3));
        register_buffer("scale", kael::full({3}, 2.0));
        register_buffer("steps", kael::zeros({1}), false);
    }
    Tensor forward(const Tensor& input) override {
        return hidden->forward(input) * named_buffers().front().second;
    }
    [[nodiscard]] std::string type_name() const override { return "Scaled"; }
    [[nodiscard]] std::string extra_repr() const override { return "scale=2"; }
    std::shared_ptr<nn::Linear> hidden;
};

std::vector<std::string> names(const std::vector<std::pair<std::string, Tensor>>& named) {
    std::vector<std::string> result;
    for (const auto& entry : named) {
        result.push_back(entry.first);
    }
    return result;
}

}  // namespace

BOOST_AUTO_TEST_CASE(buffers_are_in_state_dict_moved_and_not_trained) {
    for (const kael::Device& device : test_devices()) {
        Scaled model;
        BOOST_TEST(names(model.named_buffers()) == (std::vector<std::string>{"scale", "steps"}));
        BOOST_TEST(model.parameters().size() == 2U);
        // PyTorch's order: own parameters, own buffers, then children.
        BOOST_TEST(names(model.state_dict()) ==
                   (std::vector<std::string>{"scale", "hidden.weight", "hidden.bias"}));
        for (const auto& [name, tensor] : model.state_dict()) {
            BOOST_TEST(!tensor.requires_grad());
        }
        model.to(device);
        for (const Tensor& buffer : model.buffers()) {
            BOOST_TEST((buffer.device() == device));
        }
        kael::sum(model.forward(kael::ones({4, 2}).to(device))).backward();
        BOOST_TEST(!model.buffers().front().grad().defined());
        model.set_buffer("scale", kael::full({3}, 5.0, kael::DType::F32, device));
        Scaled other;
        other.load_state_dict(model.state_dict());
        BOOST_TEST(kael::sum(other.buffers().front()).item_double() == 15.0, "buffer loaded");
        BOOST_CHECK_THROW(other.register_buffer("hidden", kael::ones({1})), kael::ValueError);
        BOOST_CHECK_THROW(other.set_buffer("missing", kael::ones({1})), kael::ValueError);
    }
}

BOOST_AUTO_TEST_CASE(named_modules_children_apply_and_requires_grad) {
    auto inner = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        std::make_shared<nn::Linear>(2, 2), std::make_shared<nn::ReLU>()});
    nn::Sequential model({inner, std::make_shared<nn::Linear>(2, 1)});
    std::vector<std::string> module_names;
    for (const auto& [name, module] : model.named_modules()) {
        module_names.push_back(name);
    }
    BOOST_TEST(module_names == (std::vector<std::string>{"", "0", "0.0", "0.1", "1"}));
    BOOST_TEST(model.children().size() == 2U);
    BOOST_TEST(model.children().front().get() == inner.get());
    std::vector<std::string> visited;
    model.apply([&](nn::Module& module) { visited.push_back(module.type_name()); });
    BOOST_TEST(visited == (std::vector<std::string>{"Linear", "ReLU", "Sequential", "Linear",
                                                    "Sequential"}));
    model.requires_grad_(false);
    for (const Tensor& parameter : model.parameters()) {
        BOOST_TEST(!parameter.requires_grad());
    }
}

BOOST_AUTO_TEST_CASE(repr_is_pytorchs) {
    nn::Sequential model({std::make_shared<nn::Linear>(784, 256), std::make_shared<nn::ReLU>(),
                          std::make_shared<Scaled>(), std::make_shared<nn::Dropout>(0.1),
                          std::make_shared<nn::LayerNorm>(8)});
    BOOST_TEST(model.repr() ==
               "Sequential(\n"
               "  (0): Linear(in_features=784, out_features=256, bias=True)\n"
               "  (1): ReLU()\n"
               "  (2): Scaled(\n"
               "    scale=2\n"
               "    (hidden): Linear(in_features=2, out_features=3, bias=True)\n"
               "  )\n"
               "  (3): Dropout(p=0.1, inplace=False)\n"
               "  (4): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
               ")");
    BOOST_TEST(nn::Embedding(10, 4, kael::kCPU, 0).repr() == "Embedding(10, 4, padding_idx=0)");
}

BOOST_AUTO_TEST_CASE(cross_entropy_ignores_and_smooths) {
    const Tensor logits = kael::zeros({3, 4}).set_requires_grad(true);
    const Tensor targets = kael::tensor(std::vector<std::int64_t>{1, -100, 2});
    nn::functional::CrossEntropyOptions options;
    options.label_smoothing = 0.5;
    const Tensor loss = nn::functional::cross_entropy(logits, targets, options);
    BOOST_TEST(std::abs(loss.item_double() - std::log(4.0)) < 1e-6);  // uniform logits
    options.ignore_index = 7;
    BOOST_CHECK_THROW((void)nn::functional::cross_entropy(logits, targets, options),
                      kael::IndexError);
}
