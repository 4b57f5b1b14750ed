// The fused Adam step: the shared task body, one thread per element.
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/optim.h"

namespace kael::cuda {

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("cuda.adam", [&] {
        use_device(device);
        kernels::tasks::launch_adam<Launcher>(dtype, param, m, v, grad, count, params);
    });
}

}  // namespace kael::cuda
