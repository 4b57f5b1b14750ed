// layer_norm through the shared task bodies (kael/kernels/tasks/layer_norm.h), items spread over
// the worker threads; f32 is the plugin's own (layer_norm_f32.cpp).
#include "kael/kernels/tasks/layer_norm.h"

#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/plugin_support.h"
#include "layer_norm_f32.h"

namespace kael::cpu {

kael_status layer_norm(int32_t device, kael_dtype dtype, void* out, void* mean, void* rstd,
                       const void* x, const void* weight, const void* bias, int64_t rows,
                       int64_t columns, double eps) {
    return plugin::guarded("cpu.layer_norm", [&] {
        check_device(device);
        if (dtype == KAEL_DTYPE_F32) {
            if (kernels::tasks::check_layer_norm_call(dtype, out, mean, rstd, x, rows, columns)) {
                layer_norm_f32({static_cast<float*>(out), static_cast<float*>(mean),
                                static_cast<float*>(rstd), static_cast<const float*>(x),
                                static_cast<const float*>(weight), static_cast<const float*>(bias),
                                rows, columns, eps});
            }
            return;
        }
        kernels::tasks::launch_layer_norm<Launcher>(dtype, out, mean, rstd, x, weight, bias, rows,
                                                    columns, eps);
    });
}

kael_status layer_norm_backward(int32_t device, kael_dtype dtype, void* grad_x, void* grad_weight,
                                void* grad_bias, const void* grad_out, const void* x,
                                const void* mean, const void* rstd, const void* weight,
                                int64_t rows, int64_t columns) {
    return plugin::guarded("cpu.layer_norm_backward", [&] {
        check_device(device);
        if (dtype == KAEL_DTYPE_F32) {
            if (kernels::tasks::check_layer_norm_backward_call(dtype, grad_x, grad_weight,
                                                               grad_bias, grad_out, x, mean, rstd,
                                                               rows, columns)) {
                layer_norm_backward_f32(
                    {static_cast<float*>(grad_x), static_cast<float*>(grad_weight),
                     static_cast<float*>(grad_bias), static_cast<const float*>(grad_out),
                     static_cast<const float*>(x), static_cast<const float*>(mean),
                     static_cast<const float*>(rstd), static_cast<const float*>(weight), rows,
                     columns});
            }
            return;
        }
        kernels::tasks::launch_layer_norm_backward<Launcher>(dtype, grad_x, grad_weight, grad_bias,
                                                             grad_out, x, mean, rstd, weight, rows,
                                                             columns);
    });
}

}  // namespace kael::cpu
