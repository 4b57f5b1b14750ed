// Softmax / log_softmax and cross_entropy, forward and backward: the shared task bodies
// (kael/kernels/tasks/softmax.h, cross_entropy.h) over the plugin's threads, enough items per
// thread to pay for it; the f32 softmax forward and
// cross_entropy are the plugin's own (softmax_f32.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/cross_entropy.h"
#include "softmax_f32.h"

namespace kael::cpu {
namespace {

namespace tasks = kernels::tasks;

}  // namespace

kael_status softmax(int32_t device, kael_dtype dtype, void* out, const void* data, int64_t outer,
                    int64_t size, int64_t inner, int32_t log) {
    return plugin::guarded("cpu.softmax", [&] {
        check_device(device);
        if (dtype == KAEL_DTYPE_F32 &&
            tasks::check_softmax_call("softmax", dtype, {out, data}, outer, size, inner)) {
            softmax_f32({static_cast<float*>(out), static_cast<const float*>(data), outer, size,
                         inner, log != 0});
            return;
        }
        tasks::launch_softmax<Launcher>(dtype, out, data, outer, size, inner, log != 0);
    });
}

kael_status softmax_backward(int32_t device, kael_dtype dtype, void* grad_in, const void* grad_out,
                             const void* out, int64_t outer, int64_t size, int64_t inner,
                             int32_t log) {
    return plugin::guarded("cpu.softmax_backward", [&] {
        check_device(device);
        tasks::launch_softmax_backward<Launcher>(dtype, grad_in, grad_out, out, outer, size, inner,
                                                 log != 0);
    });
}

kael_status cross_entropy(int32_t device, kael_dtype dtype, void* losses, void* lse,
                          const void* logits, const int64_t* targets, int64_t rows,
                          int64_t classes) {
    return plugin::guarded("cpu.cross_entropy", [&] {
        check_device(device);
        if (dtype == KAEL_DTYPE_F32 &&
            tasks::check_cross_entropy_call("cross_entropy", dtype, {losses, lse, logits, targets},
                                            rows, classes)) {
            cross_entropy_f32({static_cast<float*>(losses), static_cast<float*>(lse),
                               static_cast<const float*>(logits), targets, rows, classes});
            return;
        }
        tasks::launch_cross_entropy<Launcher>(dtype, losses, lse, logits, targets, rows, classes);
    });
}

kael_status cross_entropy_backward(int32_t device, kael_dtype dtype, void* grad_logits,
                                   const void* grad_losses, int64_t grad_stride, const void* logits,
                                   const void* lse, const int64_t* targets, int64_t rows,
                                   int64_t classes) {
    return plugin::guarded("cpu.cross_entropy_backward", [&] {
        check_device(device);
        if (dtype == KAEL_DTYPE_F32 && (grad_stride == 0 || grad_stride == 1) &&
            tasks::check_cross_entropy_call("cross_entropy_backward", dtype,
                                            {grad_logits, grad_losses, logits, lse, targets}, rows,
                                            classes)) {
            cross_entropy_backward_f32({static_cast<float*>(grad_logits),
                                        static_cast<const float*>(grad_losses), grad_stride,
                                        static_cast<const float*>(logits),
                                        static_cast<const float*>(lse), targets, rows, classes});
            return;
        }
        tasks::launch_cross_entropy_backward<Launcher>(dtype, grad_logits, grad_losses, grad_stride,
                                                       logits, lse, targets, rows, classes);
    });
}

}  // namespace kael::cpu
