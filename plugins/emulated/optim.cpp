#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/optim.h"

namespace kael::emulated {

namespace {

void check_adam_buffers(kael_dtype dtype, void* param, void* m, void* v, const void* grad,
                        int64_t count, const kael_adam_params* params) {
    if (params != nullptr && params->struct_size >= KAEL_ADAM_PARAMS_SIZE_1_15 &&
        params->device_factors != nullptr) {
        check_on_device(params->device_factors, 3 * sizeof(double), "adam device_factors");
    }
    if (count > 0 && kernels::valid_dtype(dtype)) {
        const int64_t bytes = count * kernels::dtype_size(dtype);
        check_on_device(param, bytes, "adam param");
        check_on_device(m, bytes, "adam m");
        check_on_device(v, bytes, "adam v");
        check_on_device(grad, bytes, "adam grad");
    }
}

}  // namespace

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("emulated.adam", [&] {
        check_device(device);
        check_adam_buffers(dtype, param, m, v, grad, count, params);
        kernels::tasks::launch_adam<Launcher>(dtype, param, m, v, grad, count, params);
    });
}

kael_status adam_many(int32_t device, kael_dtype dtype, int64_t count, void* const* params,
                      void* const* m, void* const* v, const void* const* grads,
                      const int64_t* sizes, const kael_adam_params* const* steps) {
    return plugin::guarded("emulated.adam_many", [&] {
        check_device(device);
        kernels::tasks::check_adam_many(count, params, m, v, grads, sizes, steps);
        for (int64_t i = 0; i < count; ++i) {
            check_adam_buffers(dtype, params[i], m[i], v[i], grads[i], sizes[i], steps[i]);
        }
        kernels::tasks::launch_adam_many<Launcher>(dtype, count, params, m, v, grads, sizes, steps);
    });
}

}  // namespace kael::emulated
