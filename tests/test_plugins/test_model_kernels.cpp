// Model kernels reach the core from a 1.10 plugin's KAEL_EXTENSION_MODEL extension, and from the
// table's slots of a plugin before 1.10. Run with KAEL_PLUGINS=cpu,model_slots or
// cpu,model_extension (tests/test_plugins/model_kernels.c, whose softmax writes a marker).
#include <boost/test/unit_test.hpp>
#include <vector>

#include "kael/fast.h"
#include "kael/ops.h"
#include "plugin_loading_support.h"

namespace {

// The loaded one of the two test plugins and the marker its softmax writes.
struct Loaded {
    std::string name;
    float marker;
};

Loaded loaded_plugin() {
    for (const kael::PluginRecord& record : kael::plugins()) {
        if (record.name == "model_slots" && record.selected) {
            return {record.name, 42.0F};
        }
        if (record.name == "model_extension" && record.selected) {
            return {record.name, 7.0F};
        }
    }
    BOOST_FAIL("neither model_slots nor model_extension serves cuda");
    return {};
}

std::int64_t fallbacks_for(const std::string& slot) {
    const auto counts = kael::fallback_counts();
    const auto found = counts.find(slot);
    return found == counts.end() ? 0 : found->second;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model_kernels)

BOOST_AUTO_TEST_CASE(softmax_runs_the_plugins_model_kernel) {
    const Loaded plugin = loaded_plugin();
    kael::reset_fallback_counts();
    const kael::Tensor x = kael::ones({2, 3}).to(kael::Device("cuda", 0));
    const std::vector<float> out = kael::softmax(x, 1).cpu().to_vector<float>();
    BOOST_TEST(out == std::vector<float>(6, plugin.marker), boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for(plugin.name + ":softmax") == 0);
}

BOOST_AUTO_TEST_CASE(a_kernel_the_plugin_lacks_runs_on_cpu_and_is_counted) {
    const Loaded plugin = loaded_plugin();
    kael::reset_fallback_counts();
    // model_extension's table slot aborts: its extension's NULL layer_norm must win.
    const kael::Tensor x = kael::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
    const kael::Tensor on_device = kael::layer_norm(x.to(kael::Device("cuda", 0)));
    BOOST_TEST(on_device.cpu().to_vector<float>() == kael::layer_norm(x).to_vector<float>(),
               boost::test_tools::per_element());
    BOOST_TEST(fallbacks_for(plugin.name + ":layer_norm") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
