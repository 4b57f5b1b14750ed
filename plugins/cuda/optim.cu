// The fused Adam step. f32 with every pointer 16-byte aligned: four elements per thread through
// 16-byte loads (one thread per element ran at about half of H200's bandwidth); anything else
// runs the shared task body, one thread per element.
#include <algorithm>
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/optim.h"

namespace kael::cuda {
namespace {

using kernels::tasks::AdamStep;

__device__ void update_four(const AdamStep<float>& step, float4& value, float4 grad,
                            float4& first, float4& second) {
    step.update(value.x, grad.x, first.x, second.x);
    step.update(value.y, grad.y, first.y, second.y);
    step.update(value.z, grad.z, first.z, second.z);
    step.update(value.w, grad.w, first.w, second.w);
}

// Element i < count, four per thread; the last count % 4 one by one by the first threads.
__global__ void __launch_bounds__(kThreadsPerBlock)
    adam_packs(AdamStep<float> step, std::int64_t count) {
    const std::int64_t packs = count / 4;
    const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t pack = first; pack < packs; pack += stride) {
        float4 value = reinterpret_cast<const float4*>(step.param)[pack];
        float4 m = reinterpret_cast<const float4*>(step.m)[pack];
        float4 v = reinterpret_cast<const float4*>(step.v)[pack];
        update_four(step, value, reinterpret_cast<const float4*>(step.grad)[pack], m, v);
        reinterpret_cast<float4*>(step.param)[pack] = value;
        reinterpret_cast<float4*>(step.m)[pack] = m;
        reinterpret_cast<float4*>(step.v)[pack] = v;
    }
    if (packs * 4 + first < count) {
        step(packs * 4 + first);
    }
}

bool aligned16(const void* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

}  // namespace

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("cuda.adam", [&] {
        use_device(device);
        if (dtype != KAEL_DTYPE_F32 || !aligned16(param) || !aligned16(m) || !aligned16(v) ||
            !aligned16(grad)) {
            return kernels::tasks::launch_adam<Launcher>(dtype, param, m, v, grad, count, params);
        }
        if (!kernels::tasks::check_adam(dtype, param, m, v, grad, count, params)) {
            return;
        }
        const AdamStep<float> step = kernels::tasks::adam_step<float>(param, m, v, grad, *params);
        const std::int64_t blocks = std::min<std::int64_t>(blocks_for((count + 3) / 4), 1 << 30);
        adam_packs<<<static_cast<int>(blocks), kThreadsPerBlock, 0, launch_stream()>>>(step, count);
        check_launch(typeid(AdamStep<float>), __FILE__, __LINE__);
    });
}

}  // namespace kael::cuda
