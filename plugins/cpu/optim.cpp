// The fused Adam step through the shared task body, split over the cpu plugin's threads.
#include "kael/kernels/tasks/optim.h"

#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("cpu.adam", [&] {
        check_device(device);
        kernels::tasks::launch_adam<Launcher>(dtype, param, m, v, grad, count, params);
    });
}

kael_status adam_many(int32_t device, kael_dtype dtype, int64_t count, void* const* params,
                      void* const* m, void* const* v, const void* const* grads,
                      const int64_t* sizes, const kael_adam_params* const* steps) {
    return plugin::guarded("cpu.adam_many", [&] {
        check_device(device);
        kernels::tasks::launch_adam_many<Launcher>(dtype, count, params, m, v, grads, sizes, steps);
    });
}

}  // namespace kael::cpu
