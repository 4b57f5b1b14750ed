#include "kael/kernels/tasks/layer_norm.h"

#include <initializer_list>
#include <utility>

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

// Checks each non-null buffer of `elements` elements of dtype.
void check_buffers(kael_dtype dtype, std::int64_t elements,
                   std::initializer_list<std::pair<const void*, const char*>> buffers) {
    if (elements == 0) {
        return;
    }
    for (const auto& [buffer, what] : buffers) {
        if (buffer != nullptr) {
            check_on_device(buffer, elements * kernels::dtype_size(dtype), what);
        }
    }
}

}  // namespace

kael_status layer_norm(int32_t device, kael_dtype dtype, void* out, void* mean, void* rstd,
                       const void* x, const void* weight, const void* bias, int64_t rows,
                       int64_t columns, double eps) {
    return plugin::guarded("emulated.layer_norm", [&] {
        check_device(device);
        if (kernels::tasks::check_layer_norm_call(dtype, out, mean, rstd, x, rows, columns)) {
            check_buffers(dtype, rows * columns, {{out, "layer_norm out"}, {x, "layer_norm x"}});
            check_buffers(dtype, rows, {{mean, "layer_norm mean"}, {rstd, "layer_norm rstd"}});
            check_buffers(dtype, columns,
                          {{weight, "layer_norm weight"}, {bias, "layer_norm bias"}});
        }
        kernels::tasks::launch_layer_norm<Launcher>(dtype, out, mean, rstd, x, weight, bias, rows,
                                                    columns, eps);
    });
}

kael_status layer_norm_backward(int32_t device, kael_dtype dtype, void* grad_x, void* grad_weight,
                                void* grad_bias, const void* grad_out, const void* x,
                                const void* mean, const void* rstd, const void* weight,
                                int64_t rows, int64_t columns) {
    return plugin::guarded("emulated.layer_norm_backward", [&] {
        check_device(device);
        if (kernels::tasks::check_layer_norm_backward_call(dtype, grad_x, grad_weight, grad_bias,
                                                           grad_out, x, mean, rstd, rows,
                                                           columns)) {
            check_buffers(dtype, rows * columns,
                          {{grad_x, "layer_norm_backward grad_x"},
                           {grad_out, "layer_norm_backward grad_out"},
                           {x, "layer_norm_backward x"}});
            check_buffers(dtype, rows,
                          {{mean, "layer_norm_backward mean"}, {rstd, "layer_norm_backward rstd"}});
            check_buffers(dtype, columns,
                          {{grad_weight, "layer_norm_backward grad_weight"},
                           {grad_bias, "layer_norm_backward grad_bias"},
                           {weight, "layer_norm_backward weight"}});
        }
        kernels::tasks::launch_layer_norm_backward<Launcher>(dtype, grad_x, grad_weight, grad_bias,
                                                             grad_out, x, mean, rstd, weight, rows,
                                                             columns);
    });
}

}  // namespace kael::emulated
