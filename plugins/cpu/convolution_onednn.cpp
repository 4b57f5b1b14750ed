// The cpu plugin's convolutions (KAEL_EXTENSION_CONVOLUTION) on oneDNN, the library PyTorch's
// CPU convolutions use. Built as its own small library (kael_cpu_onednn.so) that the plugin
// opens at the first convolution, so a machine without libdnnl still loads the plugin and
// gets the core's composed convolution instead. Primitives are made once per geometry and
// kept; oneDNN picks its blocked layouts and the data is reordered to and from kael's plain
// ones around each call.
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kael/plugin_api.h"

#include "kael/plugin_kit.h"
#include "onednn_support.h"

namespace kael::cpu::onednn {
namespace {

struct Shapes {
    Dims input, weight, bias, output, strides, dilation, before, after;
    Tag data_tag, weight_tag;
};

Shapes shapes_of(const kael_conv_geometry& g) {
    Shapes s;
    const int d = g.spatial;
    s.input = {g.batch, g.in_channels};
    s.output = {g.batch, g.out_channels};
    if (g.groups > 1) {
        s.weight = {g.groups, g.out_channels / g.groups, g.in_channels / g.groups};
    } else {
        s.weight = {g.out_channels, g.in_channels};
    }
    s.bias = {g.out_channels};
    for (int i = 0; i < d; ++i) {
        s.input.push_back(g.input[i]);
        s.output.push_back(g.output[i]);
        s.weight.push_back(g.kernel[i]);
        s.strides.push_back(g.stride[i]);
        s.dilation.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps
        s.before.push_back(g.padding_before[i]);
        s.after.push_back(g.padding_after[i]);
    }
    static const Tag data[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
    static const Tag weights[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
    static const Tag grouped[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
    s.data_tag = data[d - 1];
    s.weight_tag = g.groups > 1 ? grouped[d - 1] : weights[d - 1];
    return s;
}

// One geometry's primitives: forward, and the two backward ones made on first use.
struct Entry {
    std::mutex mutex;  // the primitives' scratch is shared by calls of this geometry
    Shapes shapes;
    dnnl::convolution_forward::primitive_desc forward_pd;
    dnnl::convolution_forward forward;
    dnnl::convolution_forward forward_without_bias;
    dnnl::convolution_forward::primitive_desc forward_without_bias_pd;
    std::unique_ptr<dnnl::convolution_backward_data::primitive_desc> data_pd;
    std::unique_ptr<dnnl::convolution_backward_weights::primitive_desc> weights_pd;
    std::unique_ptr<dnnl::convolution_backward_weights::primitive_desc> weights_no_bias_pd;
};

std::string key_of(const kael_conv_geometry& g) {
    const auto* bytes = reinterpret_cast<const char*>(&g.spatial);
    return {bytes, sizeof(kael_conv_geometry) - offsetof(kael_conv_geometry, spatial)};
}

dnnl::convolution_forward::primitive_desc forward_desc(const Shapes& s, bool bias) {
    const auto kind = dnnl::prop_kind::forward_training;
    const auto algorithm = dnnl::algorithm::convolution_direct;
    if (bias) {
        return {{kind, algorithm, any(s.input), any(s.weight), plain(s.bias, Tag::x), any(s.output),
                 s.strides, s.dilation, s.before, s.after},
                engine()};
    }
    return {{kind, algorithm, any(s.input), any(s.weight), any(s.output), s.strides, s.dilation,
             s.before, s.after},
            engine()};
}

Entry& entry_for(const kael_conv_geometry& g) {
    static std::mutex mutex;
    static std::unordered_map<std::string, std::unique_ptr<Entry>> entries;
    const std::lock_guard lock(mutex);
    auto& slot = entries[key_of(g)];
    if (!slot) {
        auto made = std::make_unique<Entry>();
        made->shapes = shapes_of(g);
        made->forward_pd = forward_desc(made->shapes, true);
        made->forward = dnnl::convolution_forward(made->forward_pd);
        made->forward_without_bias_pd = forward_desc(made->shapes, false);
        made->forward_without_bias = dnnl::convolution_forward(made->forward_without_bias_pd);
        slot = std::move(made);
    }
    return *slot;
}

void check(int32_t device, kael_dtype dtype, const kael_conv_geometry* g) {
    if (device != 0 || g == nullptr || g->struct_size < sizeof(kael_conv_geometry) ||
        g->spatial < 1 || g->spatial > 3) {
        plugin::invalid("convolution: bad device or geometry");
    }
    if (dtype != KAEL_DTYPE_F32) {
        plugin::unsupported("convolution: oneDNN serves float32 here");
    }
}

kael_status forward(int32_t device, kael_dtype dtype, const kael_conv_geometry* g,
                    const void* input, const void* weight, const void* bias, void* output) {
    return run("cpu.convolution_forward", [&] {
        check(device, dtype, g);
        Entry& e = entry_for(*g);
        const std::lock_guard lock(e.mutex);
        const Shapes& s = e.shapes;
        const auto& pd = bias != nullptr ? e.forward_pd : e.forward_without_bias_pd;
        std::vector<Argument> arguments{
            {DNNL_ARG_SRC, pd.src_desc(), plain(s.input, s.data_tag), const_cast<void*>(input),
             false},
            {DNNL_ARG_WEIGHTS, pd.weights_desc(), plain(s.weight, s.weight_tag),
             const_cast<void*>(weight), false},
            {DNNL_ARG_DST, pd.dst_desc(), plain(s.output, s.data_tag), output, true}};
        if (bias != nullptr) {
            arguments.push_back({DNNL_ARG_BIAS, pd.bias_desc(), plain(s.bias, Tag::x),
                                 const_cast<void*>(bias), false});
        }
        execute(bias != nullptr ? e.forward : e.forward_without_bias, arguments);
    });
}

kael_status backward_input(int32_t device, kael_dtype dtype, const kael_conv_geometry* g,
                           const void* grad_output, const void* weight, void* grad_input) {
    return run("cpu.convolution_backward_input", [&] {
        check(device, dtype, g);
        Entry& e = entry_for(*g);
        const std::lock_guard lock(e.mutex);
        const Shapes& s = e.shapes;
        if (!e.data_pd) {
            e.data_pd = std::make_unique<dnnl::convolution_backward_data::primitive_desc>(
                dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct,
                                                      any(s.input), any(s.weight), any(s.output),
                                                      s.strides, s.dilation, s.before, s.after),
                engine(), e.forward_pd);
        }
        const auto& pd = *e.data_pd;
        execute(dnnl::convolution_backward_data(pd),
                {{DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), plain(s.output, s.data_tag),
                  const_cast<void*>(grad_output), false},
                 {DNNL_ARG_WEIGHTS, pd.weights_desc(), plain(s.weight, s.weight_tag),
                  const_cast<void*>(weight), false},
                 {DNNL_ARG_DIFF_SRC, pd.diff_src_desc(), plain(s.input, s.data_tag), grad_input,
                  true}});
    });
}

kael_status backward_weight(int32_t device, kael_dtype dtype, const kael_conv_geometry* g,
                            const void* grad_output, const void* input, void* grad_weight,
                            void* grad_bias) {
    return run("cpu.convolution_backward_weight", [&] {
        check(device, dtype, g);
        Entry& e = entry_for(*g);
        const std::lock_guard lock(e.mutex);
        const Shapes& s = e.shapes;
        auto& made = grad_bias != nullptr ? e.weights_pd : e.weights_no_bias_pd;
        if (!made) {
            const auto algorithm = dnnl::algorithm::convolution_direct;
            made = std::make_unique<dnnl::convolution_backward_weights::primitive_desc>(
                grad_bias != nullptr
                    ? dnnl::convolution_backward_weights::desc(
                          algorithm, any(s.input), any(s.weight), plain(s.bias, Tag::x),
                          any(s.output), s.strides, s.dilation, s.before, s.after)
                    : dnnl::convolution_backward_weights::desc(
                          algorithm, any(s.input), any(s.weight), any(s.output), s.strides,
                          s.dilation, s.before, s.after),
                engine(), e.forward_pd);
        }
        const auto& pd = *made;
        std::vector<Argument> arguments{
            {DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), plain(s.output, s.data_tag),
             const_cast<void*>(grad_output), false},
            {DNNL_ARG_SRC, pd.src_desc(), plain(s.input, s.data_tag), const_cast<void*>(input),
             false},
            {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc(), plain(s.weight, s.weight_tag),
             grad_weight, true}};
        if (grad_bias != nullptr) {
            arguments.push_back(
                {DNNL_ARG_DIFF_BIAS, pd.diff_bias_desc(), plain(s.bias, Tag::x), grad_bias, true});
        }
        execute(dnnl::convolution_backward_weights(pd), arguments);
    });
}

}  // namespace
}  // namespace kael::cpu::onednn

// The library's two entries, found by the cpu plugin with dlsym.
extern "C" __attribute__((visibility("default"))) const kael_convolution* kael_cpu_onednn_table() {
    using namespace kael::cpu::onednn;
    static const std::string name = library_name();
    static const kael_convolution table = {sizeof(kael_convolution), name.c_str(), forward,
                                           backward_input, backward_weight};
    return &table;
}

extern "C" __attribute__((visibility("default"))) const char* kael_cpu_onednn_last_error() {
    return kael::plugin::last_error();
}
