#pragma once
// What the cpu plugin's oneDNN library (kael_cpu_onednn.so: convolution_onednn.cpp,
// pooling_onednn.cpp) shares: the engine, kael's plain layouts, running a primitive with its
// arguments reordered to and from the layouts it chose, and oneDNN's errors as statuses.
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kael/plugin_api.h"
#include "kael/plugin_kit.h"

namespace kael::cpu::onednn {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;

inline dnnl::engine& engine() {
    static dnnl::engine made(dnnl::engine::kind::cpu, 0);
    return made;
}

inline memory::desc plain(const Dims& dims, Tag tag) {
    return memory::desc(dims, memory::data_type::f32, tag);
}

inline memory::desc any(const Dims& dims) {
    return memory::desc(dims, memory::data_type::f32, Tag::any);
}

// An argument in kael's plain layout at ptr, in the layout the primitive wants.
struct Argument {
    int name;
    memory::desc wanted;
    memory::desc user;
    void* data;
    bool written;
};

inline void execute(const dnnl::primitive& primitive, const std::vector<Argument>& arguments) {
    dnnl::stream stream(engine());
    std::unordered_map<int, memory> bound;
    std::vector<std::pair<memory, memory>> copy_out;
    for (const Argument& a : arguments) {
        memory user(a.user, engine(), a.data);
        if (a.wanted == a.user) {
            bound.emplace(a.name, user);
            continue;
        }
        memory inner(a.wanted, engine());
        if (a.written) {
            copy_out.emplace_back(inner, user);
        } else {
            dnnl::reorder(user, inner).execute(stream, user, inner);
        }
        bound.emplace(a.name, inner);
    }
    primitive.execute(stream, bound);
    for (auto& [inner, user] : copy_out) {
        dnnl::reorder(inner, user).execute(stream, inner, user);
    }
    stream.wait();
}

template <typename Body>
inline kael_status run(const char* entry, Body&& body) {
    return plugin::guarded(entry, [&] {
        try {
            body();
        } catch (const dnnl::error& error) {
            // Shapes oneDNN has no implementation for fall back to the composed path.
            if (error.status == dnnl_unimplemented) {
                plugin::unsupported(std::string("oneDNN: ") + error.what());
            }
            throw plugin::StatusError(KAEL_STATUS_INTERNAL, std::string("oneDNN: ") + error.what());
        }
    });
}

inline std::string library_name() {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
}

// Tags of kael's plain layouts for 1-3 spatial dims: ncw, nchw, ncdhw.
inline Tag data_tag(int spatial) {
    static const Tag tags[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
    return tags[spatial - 1];
}

}  // namespace kael::cpu::onednn
