// The cpu plugin's pooling (KAEL_EXTENSION_POOLING) on oneDNN, in kael_cpu_onednn.so beside
// the convolutions. Max pooling's forward keeps oneDNN's workspace for the backward, in the
// buffer the core allocates from workspace_bytes. Primitives are made once per geometry.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kael/plugin_api.h"  // with its extensions
#include "onednn_support.h"

namespace kael::cpu::onednn {
namespace {

struct Pool {
    std::mutex mutex;
    Dims input, output;
    dnnl::pooling_v2_forward::primitive_desc forward_pd;
    dnnl::pooling_v2_forward forward;
    std::unique_ptr<dnnl::pooling_v2_backward::primitive_desc> backward_pd;
};

dnnl::algorithm algorithm_of(kael_pool_kind kind) {
    switch (kind) {
        case KAEL_POOL_MAX: return dnnl::algorithm::pooling_max;
        case KAEL_POOL_AVG_INCLUDE_PADDING: return dnnl::algorithm::pooling_avg_include_padding;
        case KAEL_POOL_AVG_EXCLUDE_PADDING: return dnnl::algorithm::pooling_avg_exclude_padding;
        default: plugin::invalid("pooling: unknown kind " + std::to_string(kind));
    }
}

// The window's sizes as oneDNN takes them.
struct Window {
    Dims kernel, strides, dilation, before, after;
};

Window window_of(const kael_pool_geometry& g) {
    Window w;
    for (int i = 0; i < g.spatial; ++i) {
        w.kernel.push_back(g.kernel[i]);
        w.strides.push_back(g.stride[i]);
        w.dilation.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps
        w.before.push_back(g.padding_before[i]);
        w.after.push_back(g.padding_after[i]);
    }
    return w;
}

dnnl::pooling_v2_forward::desc forward_desc(const kael_pool_geometry& g, const Dims& input,
                                            const Dims& output) {
    const Window w = window_of(g);
    const Tag tag = data_tag(g.spatial);
    return {dnnl::prop_kind::forward_training,
            algorithm_of(g.kind),
            plain(input, tag),
            plain(output, tag),
            w.strides,
            w.kernel,
            w.dilation,
            w.before,
            w.after};
}

Pool& pool_for(const kael_pool_geometry& g) {
    static std::mutex mutex;
    static std::unordered_map<std::string, std::unique_ptr<Pool>> pools;
    const auto* bytes = reinterpret_cast<const char*>(&g.spatial);
    const std::string key(bytes,
                          sizeof(kael_pool_geometry) - offsetof(kael_pool_geometry, spatial));
    const std::lock_guard lock(mutex);
    auto& slot = pools[key];
    if (!slot) {
        auto made = std::make_unique<Pool>();
        made->input = {g.batch, g.channels};
        made->output = {g.batch, g.channels};
        for (int i = 0; i < g.spatial; ++i) {
            made->input.push_back(g.input[i]);
            made->output.push_back(g.output[i]);
        }
        made->forward_pd = dnnl::pooling_v2_forward::primitive_desc(
            forward_desc(g, made->input, made->output), engine());
        made->forward = dnnl::pooling_v2_forward(made->forward_pd);
        slot = std::move(made);
    }
    return *slot;
}

void check(int32_t device, kael_dtype dtype, const kael_pool_geometry* g) {
    if (device != 0 || g == nullptr || g->struct_size < sizeof(kael_pool_geometry) ||
        g->spatial < 1 || g->spatial > 3) {
        plugin::invalid("pooling: bad device or geometry");
    }
    if (dtype != KAEL_DTYPE_F32) {
        plugin::unsupported("pooling: oneDNN serves float32 here");
    }
}

int64_t workspace_bytes(int32_t device, kael_dtype dtype, const kael_pool_geometry* g) {
    if (device != 0 || dtype != KAEL_DTYPE_F32 || g == nullptr ||
        g->struct_size < sizeof(kael_pool_geometry) || g->spatial < 1 || g->spatial > 3) {
        return -1;
    }
    try {
        Pool& pool = pool_for(*g);
        return static_cast<int64_t>(pool.forward_pd.workspace_desc().get_size());
    } catch (const std::exception&) {
        return -1;  // a geometry oneDNN does not pool: the core's own path
    }
}

kael_status forward(int32_t device, kael_dtype dtype, const kael_pool_geometry* g,
                    const void* input, void* output, void* workspace) {
    return run("cpu.pooling_forward", [&] {
        check(device, dtype, g);
        Pool& pool = pool_for(*g);
        const std::lock_guard lock(pool.mutex);
        const Tag tag = data_tag(g->spatial);
        dnnl::stream stream(engine());
        std::unordered_map<int, memory> arguments{
            {DNNL_ARG_SRC, memory(plain(pool.input, tag), engine(), const_cast<void*>(input))},
            {DNNL_ARG_DST, memory(plain(pool.output, tag), engine(), output)}};
        if (g->kind == KAEL_POOL_MAX) {
            arguments.emplace(DNNL_ARG_WORKSPACE,
                              memory(pool.forward_pd.workspace_desc(), engine(), workspace));
        }
        pool.forward.execute(stream, arguments);
        stream.wait();
    });
}

kael_status backward(int32_t device, kael_dtype dtype, const kael_pool_geometry* g,
                     const void* grad_output, const void* workspace, void* grad_input) {
    return run("cpu.pooling_backward", [&] {
        check(device, dtype, g);
        Pool& pool = pool_for(*g);
        const std::lock_guard lock(pool.mutex);
        const Tag tag = data_tag(g->spatial);
        if (!pool.backward_pd) {
            const Window w = window_of(*g);
            pool.backward_pd = std::make_unique<dnnl::pooling_v2_backward::primitive_desc>(
                dnnl::pooling_v2_backward::desc(algorithm_of(g->kind), plain(pool.input, tag),
                                                plain(pool.output, tag), w.strides, w.kernel,
                                                w.dilation, w.before, w.after),
                engine(), pool.forward_pd);
        }
        dnnl::stream stream(engine());
        std::unordered_map<int, memory> arguments{
            {DNNL_ARG_DIFF_DST,
             memory(plain(pool.output, tag), engine(), const_cast<void*>(grad_output))},
            {DNNL_ARG_DIFF_SRC, memory(plain(pool.input, tag), engine(), grad_input)}};
        if (g->kind == KAEL_POOL_MAX) {
            arguments.emplace(DNNL_ARG_WORKSPACE, memory(pool.forward_pd.workspace_desc(), engine(),
                                                         const_cast<void*>(workspace)));
        }
        dnnl::pooling_v2_backward(*pool.backward_pd).execute(stream, arguments);
        stream.wait();
    });
}

}  // namespace
}  // namespace kael::cpu::onednn

// The pooling table, found by the cpu plugin with dlsym.
extern "C" __attribute__((visibility("default"))) const kael_pooling* kael_cpu_onednn_pooling() {
    using namespace kael::cpu::onednn;
    static const std::string name = library_name();
    static const kael_pooling table = {sizeof(kael_pooling), name.c_str(), workspace_bytes, forward,
                                       backward};
    return &table;
}
