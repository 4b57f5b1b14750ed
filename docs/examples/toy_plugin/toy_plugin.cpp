// A third-party kael plugin: device type "toy", two devices whose memory is host memory kept in
// an arena of its own (the core may not touch it: no KAEL_MEMORY_HOST_ADDRESSABLE). It has
// memory, copies, fill and a few f32 elementwise ops; every other kernel is a NULL slot or
// returns KAEL_STATUS_UNSUPPORTED, and the core runs those calls on the cpu plugin.
// Built with nothing but kael-dev: see CMakeLists.txt next to it and docs/plugins.md.
#include <kael/plugin_api.h>
#include <kael/plugin_kit.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace {

using kael::plugin::guarded;
using kael::plugin::invalid;
using kael::plugin::unsupported;

constexpr int32_t kDevices = 2;
constexpr std::size_t kAlignment = 64;  // what the guide asks of allocate()

// The arena: every live block, so a pointer that is not one of ours is refused, not used.
struct Arena {
    std::mutex mutex;
    std::set<const void*> blocks;
};
Arena& arena() {
    static auto* instance = new Arena;  // never destroyed: blocks may be released at exit
    return *instance;
}

void check_device(int32_t device) {
    if (device < 0 || device >= kDevices) {
        invalid("no toy device " + std::to_string(device));
    }
}

kael_status allocate(int32_t device, int64_t bytes, void** block) {
    return guarded("toy.allocate", [&] {
        check_device(device);
        const auto rounded = (static_cast<std::size_t>(bytes) + kAlignment - 1) / kAlignment;
        *block = std::aligned_alloc(kAlignment, rounded * kAlignment);
        if (*block == nullptr) {
            throw std::bad_alloc();
        }
        const std::lock_guard lock(arena().mutex);
        arena().blocks.insert(*block);
    });
}

void release(int32_t /*device*/, void* block) {
    if (block != nullptr) {
        const std::lock_guard lock(arena().mutex);
        arena().blocks.erase(block);
        std::free(block);
    }
}

// Every call completes before it returns, so copies need no queue and synchronize() waits for
// nothing.
kael_status copy(int32_t device, void* target, const void* source, int64_t bytes) {
    return guarded("toy.copy", [&] {
        check_device(device);
        std::memmove(target, source, static_cast<std::size_t>(bytes));
    });
}

kael_status synchronize(int32_t device) {
    return guarded("toy.synchronize", [&] { check_device(device); });
}

kael_status device_properties(int32_t device, kael_device_properties* properties) {
    return guarded("toy.device_properties", [&] {
        check_device(device);
        kael::plugin::fill_device_properties(properties, "toy arena device (host memory)", 0, 0);
    });
}

template <typename T>
void fill_values(void* target, int64_t count, T value) {
    T* out = static_cast<T*>(target);
    for (int64_t i = 0; i < count; ++i) {
        out[i] = value;
    }
}

kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value) {
    return guarded("toy.fill", [&] {
        check_device(device);
        switch (dtype) {
            case KAEL_DTYPE_F32: fill_values(target, count, float(value->reals[0])); break;
            case KAEL_DTYPE_F64: fill_values(target, count, value->reals[0]); break;
            case KAEL_DTYPE_I64: fill_values(target, count, value->integers[0]); break;
            case KAEL_DTYPE_BOOL: fill_values(target, count, bool(value->integers[0])); break;
            default: invalid("fill: unknown dtype " + std::to_string(dtype));
        }
    });
}

float apply(kael_element_op op, float a, float b) {
    switch (op) {
        case KAEL_OP_PLUS: return a + b;
        case KAEL_OP_MINUS: return a - b;
        case KAEL_OP_MULTIPLY: return a * b;
        case KAEL_OP_NEGATE: return -a;
        case KAEL_OP_RELU: return a > 0 || std::isnan(a) ? a : 0.0F;  // NaN stays NaN
        default: return a;
    }
}

// f32 plus, minus, multiply, negate and relu over any strided layout; nothing else.
kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* /*params*/) {
    return guarded("toy.elementwise", [&] {
        check_device(device);
        const bool binary = op == KAEL_OP_PLUS || op == KAEL_OP_MINUS || op == KAEL_OP_MULTIPLY;
        if (!binary && op != KAEL_OP_NEGATE && op != KAEL_OP_RELU) {
            unsupported("op " + std::to_string(op));  // before anything is written
        }
        if (in_dtype != KAEL_DTYPE_F32 || out_dtype != KAEL_DTYPE_F32) {
            unsupported("dtype " + std::to_string(in_dtype));
        }
        if (layout == nullptr || layout->struct_size < KAEL_ELEMENT_LAYOUT_SIZE_1_0 ||
            layout->operands != (binary ? 3 : 2)) {
            invalid("elementwise: bad layout");
        }
        for (int64_t e = 0; e < layout->count; ++e) {
            char* at[KAEL_MAX_OPERANDS] = {};
            for (int k = 0; k < layout->operands; ++k) {
                at[k] = static_cast<char*>(layout->base[k]);
            }
            for (int64_t d = layout->dims - 1, rest = e; d >= 0; --d) {  // innermost first
                const int64_t coordinate = rest % layout->shape[d];
                rest /= layout->shape[d];
                for (int k = 0; k < layout->operands; ++k) {
                    at[k] += coordinate * layout->strides[k][d];
                }
            }
            const float a = *reinterpret_cast<const float*>(at[1]);
            const float b = binary ? *reinterpret_cast<const float*>(at[2]) : 0.0F;
            *reinterpret_cast<float*>(at[0]) = apply(op, a, b);
        }
    });
}

kael_plugin make_table() {
    kael::plugin::Description description;
    description.name = "toy";
    description.version = "1.0.0";
    description.kind = KAEL_PLUGIN_KIND_GPU;
    description.priority = 50;
    description.device_type = "toy";
    description.device_count = kDevices;
    description.build_info = "compiler=" + kael::plugin::compiler_description() + "; out of tree";
    kael_plugin table = kael::plugin::make_table(description);
    table.device_properties = device_properties;
    table.allocate = allocate;
    table.release = release;
    table.copy_to_device = copy;
    table.copy_to_host = copy;
    table.copy_within_device = copy;
    table.synchronize = synchronize;
    table.fill = fill;
    table.elementwise = elementwise;
    return table;
}

}  // namespace

KAEL_PLUGIN_DEFINE_ENTRY(make_table)
