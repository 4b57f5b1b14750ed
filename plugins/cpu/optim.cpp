// The fused Adam step through the shared task body, split over the cpu plugin's threads.
#include "cpu_kernels.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/optim.h"

namespace kael::cpu {
namespace {

// Runs a shared task's items over contiguous ranges of threads; enough for element-wise tasks.
struct RangeLauncher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        parallel_ranges(count, std::int64_t{1} << 15, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                task(i);
            }
        });
    }
};

}  // namespace

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("cpu.adam", [&] {
        check_device(device);
        kernels::tasks::launch_adam<RangeLauncher>(dtype, param, m, v, grad, count, params);
    });
}

kael_status adam_many(int32_t device, kael_dtype dtype, int64_t count, void* const* params,
                      void* const* m, void* const* v, const void* const* grads,
                      const int64_t* sizes, const kael_adam_params* const* steps) {
    return plugin::guarded("cpu.adam_many", [&] {
        check_device(device);
        kernels::tasks::launch_adam_many<RangeLauncher>(dtype, count, params, m, v, grads, sizes,
                                                        steps);
    });
}

}  // namespace kael::cpu
