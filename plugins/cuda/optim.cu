// The fused Adam step. f32 with every pointer 16-byte aligned: four elements per thread through
// 16-byte loads (one thread per element ran at about half of H200's bandwidth); anything else
// runs the shared task body, one thread per element. adam_many steps the small tensors of a
// call together, up to kGroupTensors per launch (GPT-2 small has 98 tensors of at most 3072
// elements: one launch each cost 2.7 us of GPU time apiece).
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

// One tensor's step on the current device; throws as the entries report.
void step_tensor(kael_dtype dtype, void* param, void* m, void* v, const void* grad,
                 std::int64_t count, const kael_adam_params* params) {
    if (dtype != KAEL_DTYPE_F32 || !aligned16(param) || !aligned16(m) || !aligned16(v) ||
        !aligned16(grad)) {
        kernels::tasks::launch_adam<Launcher>(dtype, param, m, v, grad, count, params);
        return;
    }
    if (!kernels::tasks::check_adam(dtype, param, m, v, grad, count, params)) {
        return;
    }
    const AdamStep<float> step = kernels::tasks::adam_step<float>(param, m, v, grad, *params);
    const std::int64_t blocks = std::min<std::int64_t>(blocks_for((count + 3) / 4), 1 << 30);
    adam_packs<<<static_cast<int>(blocks), kThreadsPerBlock, 0, launch_stream()>>>(step, count);
    check_launch(typeid(AdamStep<float>), __FILE__, __LINE__);
}

// Tensors below kGroupedElements elements share launches; kGroupTensors of them fit the
// 4 KB of kernel parameters in either dtype.
constexpr std::int64_t kGroupedElements = std::int64_t{1} << 16;
constexpr int kGroupTensors = 32;
constexpr int kGroupElementsPerThread = 4;

template <typename T>
struct AdamGroup {
    AdamStep<T> steps[kGroupTensors];
    std::int64_t counts[kGroupTensors];
};
static_assert(sizeof(AdamGroup<double>) <= 4096, "a group must fit the kernel parameter space");

// Tensor blockIdx.y of the group, grid-stride over blockIdx.x.
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock) adam_group(AdamGroup<T> group) {
    const AdamStep<T>& step = group.steps[blockIdx.y];
    const std::int64_t count = group.counts[blockIdx.y];
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         i < count; i += stride) {
        step(i);
    }
}

template <typename T>
void launch_group(const AdamGroup<T>& group, int tensors, std::int64_t largest) {
    const std::int64_t per_block = std::int64_t{kThreadsPerBlock} * kGroupElementsPerThread;
    const auto blocks = static_cast<unsigned>((largest + per_block - 1) / per_block);
    adam_group<T>
        <<<dim3(blocks, static_cast<unsigned>(tensors)), kThreadsPerBlock, 0, launch_stream()>>>(
            group);
    check_launch(typeid(AdamGroup<T>), __FILE__, __LINE__);
}

// The small tensors of an adam_many call, kGroupTensors per launch; the others one by one.
template <typename T>
void step_many(kael_dtype dtype, std::int64_t count, void* const* params, void* const* m,
               void* const* v, const void* const* grads, const std::int64_t* sizes,
               const kael_adam_params* const* steps) {
    AdamGroup<T> group{};
    int grouped = 0;
    std::int64_t largest = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        if (!kernels::tasks::check_adam(dtype, params[i], m[i], v[i], grads[i], sizes[i],
                                        steps[i])) {
            continue;  // nothing to step
        }
        if (sizes[i] >= kGroupedElements) {
            step_tensor(dtype, params[i], m[i], v[i], grads[i], sizes[i], steps[i]);
            continue;
        }
        group.steps[grouped] =
            kernels::tasks::adam_step<T>(params[i], m[i], v[i], grads[i], *steps[i]);
        group.counts[grouped] = sizes[i];
        largest = std::max(largest, sizes[i]);
        if (++grouped == kGroupTensors) {
            launch_group(group, grouped, largest);
            grouped = 0;
            largest = 0;
        }
    }
    if (grouped > 0) {
        launch_group(group, grouped, largest);
    }
}

}  // namespace

kael_status adam(int32_t device, kael_dtype dtype, void* param, void* m, void* v,
                 const void* grad, int64_t count, const kael_adam_params* params) {
    return plugin::guarded("cuda.adam", [&] {
        use_device(device);
        step_tensor(dtype, param, m, v, grad, count, params);
    });
}

kael_status adam_many(int32_t device, kael_dtype dtype, int64_t count, void* const* params,
                      void* const* m, void* const* v, const void* const* grads,
                      const int64_t* sizes, const kael_adam_params* const* steps) {
    return plugin::guarded("cuda.adam_many", [&] {
        use_device(device);
        kernels::tasks::check_adam_many(count, params, m, v, grads, sizes, steps);
        if (dtype == KAEL_DTYPE_F64) {
            step_many<double>(dtype, count, params, m, v, grads, sizes, steps);
        } else {
            step_many<float>(dtype, count, params, m, v, grads, sizes, steps);  // checks dtype
        }
    });
}

}  // namespace kael::cuda
