#include "kael/kernels/tasks/attention.h"

#include "emulated_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

namespace tasks = kernels::tasks;

// Checks that an operand's whole strided extent lies in device memory (nothing when empty).
void check_operand(const void* data, const kael_attention_layout& layout,
                   const std::int64_t* strides, std::int64_t tokens, std::int64_t element_size,
                   const char* what) {
    const std::int64_t extent = tasks::attention_extent(layout, strides, tokens);
    if (extent > 0) {
        check_on_device(data, extent * element_size, what);
    }
}

// The shape checks of the task driver first, so only a valid layout is walked here.
std::int64_t element_size(kael_dtype dtype, const char* entry,
                          const kael_attention_layout* layout) {
    (void)tasks::attention_shape(entry, dtype, layout);
    return dtype == KAEL_DTYPE_F32 ? 4 : 8;
}

}  // namespace

kael_status attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                      const void* k, const void* v, const kael_attention_layout* layout) {
    return plugin::guarded("emulated.attention", [&] {
        check_device(device);
        const std::int64_t size = element_size(dtype, "attention", layout);
        const kael_attention_layout& l = *layout;
        if (l.batch * l.heads * l.queries > 0) {
            check_operand(out, l, l.out_strides, l.queries, size, "attention out");
            check_on_device(lse, l.batch * l.heads * l.queries * size, "attention lse");
            check_operand(q, l, l.q_strides, l.queries, size, "attention q");
            check_operand(k, l, l.k_strides, l.keys, size, "attention k");
            check_operand(v, l, l.v_strides, l.keys, size, "attention v");
        }
        tasks::launch_attention<Launcher>(dtype, out, lse, q, k, v, layout);
    });
}

kael_status attention_backward(int32_t device, kael_dtype dtype, void* grad_q, void* grad_k,
                               void* grad_v, const void* grad_out, const void* q, const void* k,
                               const void* v, const void* out, const void* lse,
                               const kael_attention_layout* layout) {
    return plugin::guarded("emulated.attention_backward", [&] {
        check_device(device);
        const std::int64_t size = element_size(dtype, "attention_backward", layout);
        const kael_attention_layout& l = *layout;
        if (l.batch * l.heads * l.keys > 0) {
            check_operand(grad_q, l, l.q_strides, l.queries, size, "attention grad_q");
            check_operand(grad_k, l, l.k_strides, l.keys, size, "attention grad_k");
            check_operand(grad_v, l, l.v_strides, l.keys, size, "attention grad_v");
            check_operand(grad_out, l, l.out_strides, l.queries, size, "attention grad_out");
            check_operand(q, l, l.q_strides, l.queries, size, "attention q");
            check_operand(k, l, l.k_strides, l.keys, size, "attention k");
            check_operand(v, l, l.v_strides, l.keys, size, "attention v");
            check_operand(out, l, l.out_strides, l.queries, size, "attention out");
            if (l.queries > 0) {
                check_on_device(lse, l.batch * l.heads * l.queries * size, "attention lse");
            }
        }
        tasks::launch_attention_backward<Launcher>(dtype, grad_q, grad_k, grad_v, grad_out, q, k,
                                                   v, out, lse, layout);
    });
}

}  // namespace kael::emulated
