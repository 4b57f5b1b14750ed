// Softmax / log_softmax and cross_entropy, forward and backward: the shared task bodies
// (kael/kernels/tasks/softmax.h, cross_entropy.h) over the plugin's threads, enough items per
// thread to pay for it. Contiguous f32 rows take their exponentials from glibc's vector math,
// with the shared body's arithmetic otherwise (double sums, the same maximum and NaN rules).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/cross_entropy.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

namespace tasks = kernels::tasks;

// One contiguous f32 row per item: SoftmaxLines::row with the exponentials vectorized.
struct VectorSoftmaxRows {
    const float* data;
    float* out;
    int64_t size;
    bool log;

    [[nodiscard]] int64_t cost() const { return 3 * size; }

    void operator()(int64_t row) const {
        const float* x = data + row * size;
        float* y = out + row * size;
        const float maximum = tasks::row_maximum(x, size);
        for (int64_t i = 0; i < size; ++i) {
            y[i] = x[i] - maximum;  // as the double difference rounded to f32
        }
        vector_math::apply(vector_math::Function::Exp, y, y, size);
        // Eight running sums: one chain of dependent double adds was half the row's time.
        double sums[8] = {};
        int64_t i = 0;
        for (; i + 8 <= size; i += 8) {
            for (int k = 0; k < 8; ++k) {
                sums[k] += y[i + k];
            }
        }
        for (; i < size; ++i) {
            sums[0] += y[i];
        }
        const double total =
            ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]));
        const double log_total = std::log(total);
        const double inverse = 1 / total;
        for (i = 0; i < size; ++i) {
            y[i] = static_cast<float>(
                log ? (static_cast<double>(x[i]) - maximum) - log_total
                    : static_cast<double>(y[i]) * inverse);
        }
    }
};

}  // namespace

kael_status softmax(int32_t device, kael_dtype dtype, void* out, const void* data, int64_t outer,
                    int64_t size, int64_t inner, int32_t log) {
    return plugin::guarded("cpu.softmax", [&] {
        check_device(device);
        // In place (out == data), the exponentials overwrite x, which log's last pass rereads:
        // such rows take the shared tasks.
        if (dtype == KAEL_DTYPE_F32 && inner == 1 && !(log != 0 && out == data) &&
            tasks::check_softmax_call("softmax", dtype, {out, data}, outer, size, inner)) {
            Launcher::for_each(outer, VectorSoftmaxRows{static_cast<const float*>(data),
                                                        static_cast<float*>(out), size,
                                                        log != 0});
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
        tasks::launch_cross_entropy<Launcher>(dtype, losses, lse, logits, targets, rows, classes);
    });
}

kael_status cross_entropy_backward(int32_t device, kael_dtype dtype, void* grad_logits,
                                   const void* grad_losses, int64_t grad_stride, const void* logits,
                                   const void* lse, const int64_t* targets, int64_t rows,
                                   int64_t classes) {
    return plugin::guarded("cpu.cross_entropy_backward", [&] {
        check_device(device);
        tasks::launch_cross_entropy_backward<Launcher>(dtype, grad_logits, grad_losses, grad_stride,
                                                       logits, lse, targets, rows, classes);
    });
}

}  // namespace kael::cpu
