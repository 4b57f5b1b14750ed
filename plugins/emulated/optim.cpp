#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/optim.h"

namespace kael::emulated {

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("emulated.adam", [&] {
        check_device(device);
        if (count > 0 && kernels::valid_dtype(dtype)) {
            const int64_t bytes = count * kernels::dtype_size(dtype);
            check_on_device(param, bytes, "adam param");
            check_on_device(m, bytes, "adam m");
            check_on_device(v, bytes, "adam v");
            check_on_device(grad, bytes, "adam grad");
        }
        kernels::tasks::launch_adam<Launcher>(dtype, param, m, v, grad, count, params);
    });
}

}  // namespace kael::emulated
