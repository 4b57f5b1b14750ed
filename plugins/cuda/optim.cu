// The fused Adam step. f32 with every pointer 16-byte aligned: four elements per thread through
// 16-byte loads (one thread per element ran at about half of H200's bandwidth); anything else
// runs the shared task body, one thread per element. adam_many steps the tensors of a call
// together, up to kGroupTensors per launch (GPT-2 small's 149 tensors: 5 launches, not 149).
#include <algorithm>
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/optim.h"

namespace kael::cuda {
namespace {

using kernels::tasks::AdamStep;

// Elements 4 * pack .. 4 * pack + 3 through 16-byte loads and stores.
__device__ void step_pack(const AdamStep<float>& step, std::int64_t pack) {
    float4 value = reinterpret_cast<const float4*>(step.param)[pack];
    float4 first = reinterpret_cast<const float4*>(step.m)[pack];
    float4 second = reinterpret_cast<const float4*>(step.v)[pack];
    const float4 grad = reinterpret_cast<const float4*>(step.grad)[pack];
    step.update(value.x, grad.x, first.x, second.x);
    step.update(value.y, grad.y, first.y, second.y);
    step.update(value.z, grad.z, first.z, second.z);
    step.update(value.w, grad.w, first.w, second.w);
    reinterpret_cast<float4*>(step.param)[pack] = value;
    reinterpret_cast<float4*>(step.m)[pack] = first;
    reinterpret_cast<float4*>(step.v)[pack] = second;
}

// Element i < count, four per thread; the last count % 4 one by one by the first threads.
__global__ void __launch_bounds__(kThreadsPerBlock)
    adam_packs(AdamStep<float> recorded, std::int64_t count) {
    const AdamStep<float> step = recorded.resolved();
    const std::int64_t packs = count / 4;
    const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t pack = first; pack < packs; pack += stride) {
        step_pack(step, pack);
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

// adam_many's launches: up to kGroupTensors tensors of any size (kernel parameters hold 4 KB)
// cut into chunks of kChunkElements; block b takes chunk b of their concatenation, tensor t
// owning blocks first_chunk[t] .. first_chunk[t + 1] - 1. One launch then streams many tensors
// at full bandwidth, where one launch each left mid-sized ones at ~2.8 TB/s on the H200.
constexpr int kGroupTensors = 32;
constexpr std::int64_t kChunkElements = 4096;  // 256 threads x 4 elements x 4 rounds

template <typename T>
struct AdamGroup {
    AdamStep<T> steps[kGroupTensors];
    std::int64_t counts[kGroupTensors];
    std::int64_t first_chunk[kGroupTensors + 1];
    bool packed[kGroupTensors];  // f32 with all four pointers 16-byte aligned
};
static_assert(sizeof(AdamGroup<double>) <= 4096, "a group must fit the kernel parameter space");

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock) adam_group(AdamGroup<T> group, int tensors) {
    const std::int64_t chunk = blockIdx.x;
    int t = 0;
    while (t + 1 < tensors && group.first_chunk[t + 1] <= chunk) {
        ++t;  // the same for every thread of the block
    }
    const AdamStep<T> step = group.steps[t].resolved();
    const std::int64_t begin = (chunk - group.first_chunk[t]) * kChunkElements;
    const std::int64_t end = begin + kChunkElements < group.counts[t] ? begin + kChunkElements
                                                                      : group.counts[t];
    std::int64_t scalar_begin = begin;
    if constexpr (sizeof(T) == 4) {
        if (group.packed[t]) {  // begin is a multiple of 4: whole packs, then the tail
            const std::int64_t packs_end = begin + (end - begin) / 4 * 4;
            for (std::int64_t i = begin + 4 * threadIdx.x; i < packs_end; i += 4 * blockDim.x) {
                step_pack(step, i / 4);
            }
            scalar_begin = packs_end;
        }
    }
    for (std::int64_t i = scalar_begin + threadIdx.x; i < end; i += blockDim.x) {
        step(i);
    }
}

template <typename T>
void launch_group(const AdamGroup<T>& group, int tensors) {
    const auto blocks = static_cast<unsigned>(group.first_chunk[tensors]);
    adam_group<T><<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(group, tensors);
    check_launch(typeid(AdamGroup<T>), __FILE__, __LINE__);
}

// Every tensor of an adam_many call, kGroupTensors per launch.
template <typename T>
void step_many(kael_dtype dtype, std::int64_t count, void* const* params, void* const* m,
               void* const* v, const void* const* grads, const std::int64_t* sizes,
               const kael_adam_params* const* steps) {
    AdamGroup<T> group{};
    int grouped = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        if (!kernels::tasks::check_adam(dtype, params[i], m[i], v[i], grads[i], sizes[i],
                                        steps[i])) {
            continue;  // nothing to step
        }
        group.steps[grouped] =
            kernels::tasks::adam_step<T>(params[i], m[i], v[i], grads[i], *steps[i]);
        group.counts[grouped] = sizes[i];
        group.packed[grouped] = aligned16(params[i]) && aligned16(m[i]) && aligned16(v[i]) &&
                                aligned16(grads[i]);
        group.first_chunk[grouped + 1] =
            group.first_chunk[grouped] + (sizes[i] + kChunkElements - 1) / kChunkElements;
        if (++grouped == kGroupTensors) {
            launch_group(group, grouped);
            grouped = 0;
        }
    }
    if (grouped > 0) {
        launch_group(group, grouped);
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
