// layer_norm through the shared task bodies (kael/kernels/tasks/layer_norm.h), items spread over
// the worker threads.
#include "kael/kernels/tasks/layer_norm.h"

#include "cpu_kernels.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

// Each item is a row or a block of columns over every row, so a few dozen are worth threads.
constexpr int64_t kMinParallelItems = 32;

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        parallel_ranges(count, kMinParallelItems, [&task](int64_t begin, int64_t end) {
            for (int64_t item = begin; item < end; ++item) {
                task(item);
            }
        });
    }
};

}  // namespace

kael_status layer_norm(int32_t device, kael_dtype dtype, void* out, void* mean, void* rstd,
                       const void* x, const void* weight, const void* bias, int64_t rows,
                       int64_t columns, double eps) {
    return plugin::guarded("cpu.layer_norm", [&] {
        check_device(device);
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
        kernels::tasks::launch_layer_norm_backward<Launcher>(dtype, grad_x, grad_weight, grad_bias,
                                                             grad_out, x, mean, rstd, weight, rows,
                                                             columns);
    });
}

}  // namespace kael::cpu
