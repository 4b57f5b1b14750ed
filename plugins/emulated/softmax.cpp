// Softmax / log_softmax and cross_entropy through the shared task bodies, every buffer checked
// to lie in device memory first.
#include "kael/kernels/tasks/cross_entropy.h"

#include <initializer_list>
#include <utility>

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

namespace tasks = kernels::tasks;

// Bytes of count elements of dtype, or 0 (nothing checked) for an invalid dtype, which the
// driver then rejects with its own message.
int64_t bytes_of(kael_dtype dtype, int64_t count) {
    return kernels::valid_dtype(dtype) ? count * kernels::dtype_size(dtype) : 0;
}

void check_buffers(std::initializer_list<std::pair<const void*, const char*>> buffers,
                   int64_t bytes) {
    if (bytes <= 0) {
        return;
    }
    for (const auto& [buffer, what] : buffers) {
        check_on_device(buffer, bytes, what);
    }
}

}  // namespace

kael_status softmax(int32_t device, kael_dtype dtype, void* out, const void* data, int64_t outer,
                    int64_t size, int64_t inner, int32_t log) {
    return plugin::guarded("emulated.softmax", [&] {
        check_device(device);
        if (outer > 0 && size > 0 && inner > 0) {
            check_buffers({{out, "softmax out"}, {data, "softmax data"}},
                          bytes_of(dtype, outer * size * inner));
        }
        tasks::launch_softmax<Launcher>(dtype, out, data, outer, size, inner, log != 0);
    });
}

kael_status softmax_backward(int32_t device, kael_dtype dtype, void* grad_in, const void* grad_out,
                             const void* out, int64_t outer, int64_t size, int64_t inner,
                             int32_t log) {
    return plugin::guarded("emulated.softmax_backward", [&] {
        check_device(device);
        if (outer > 0 && size > 0 && inner > 0) {
            check_buffers({{grad_in, "softmax_backward grad_in"},
                           {grad_out, "softmax_backward grad_out"},
                           {out, "softmax_backward out"}},
                          bytes_of(dtype, outer * size * inner));
        }
        tasks::launch_softmax_backward<Launcher>(dtype, grad_in, grad_out, out, outer, size, inner,
                                                 log != 0);
    });
}

kael_status cross_entropy(int32_t device, kael_dtype dtype, void* losses, void* lse,
                          const void* logits, const int64_t* targets, int64_t rows,
                          int64_t classes) {
    return plugin::guarded("emulated.cross_entropy", [&] {
        check_device(device);
        if (rows > 0 && classes > 0) {
            check_buffers({{logits, "cross_entropy logits"}}, bytes_of(dtype, rows * classes));
            check_buffers({{losses, "cross_entropy losses"}, {lse, "cross_entropy lse"}},
                          bytes_of(dtype, rows));
            check_buffers({{targets, "cross_entropy targets"}}, rows * 8);
        }
        tasks::launch_cross_entropy<Launcher>(dtype, losses, lse, logits, targets, rows, classes);
    });
}

kael_status cross_entropy_backward(int32_t device, kael_dtype dtype, void* grad_logits,
                                   const void* grad_losses, int64_t grad_stride, const void* logits,
                                   const void* lse, const int64_t* targets, int64_t rows,
                                   int64_t classes) {
    return plugin::guarded("emulated.cross_entropy_backward", [&] {
        check_device(device);
        if (rows > 0 && classes > 0) {
            check_buffers({{grad_logits, "cross_entropy_backward grad_logits"},
                           {logits, "cross_entropy_backward logits"}},
                          bytes_of(dtype, rows * classes));
            check_buffers({{lse, "cross_entropy_backward lse"}}, bytes_of(dtype, rows));
            check_buffers({{grad_losses, "cross_entropy_backward grad_losses"}},
                          bytes_of(dtype, grad_stride == 1 ? rows : 1));
            check_buffers({{targets, "cross_entropy_backward targets"}}, rows * 8);
        }
        tasks::launch_cross_entropy_backward<Launcher>(dtype, grad_logits, grad_losses, grad_stride,
                                                       logits, lse, targets, rows, classes);
    });
}

}  // namespace kael::emulated
