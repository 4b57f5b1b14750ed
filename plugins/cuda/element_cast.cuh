#pragma once
// Stored elements as the compute type and back in device code: bf16/f16 (CUDA's __nv_bfloat16,
// __half) through f32 with round to nearest even, f32 and f64 as they are. Kernels that read
// bf16/f16 as they are stored compute in f32 and round once on the way out.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace kael::cuda {

template <typename To, typename From>
__device__ inline To as(From value) {
    if constexpr (std::is_same_v<To, From>) {
        return value;
    } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
        return static_cast<To>(__bfloat162float(value));
    } else if constexpr (std::is_same_v<From, __half>) {
        return static_cast<To>(__half2float(value));
    } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
        return __float2bfloat16_rn(static_cast<float>(value));
    } else if constexpr (std::is_same_v<To, __half>) {
        return __float2half_rn(static_cast<float>(value));
    } else {
        return static_cast<To>(value);
    }
}

}  // namespace kael::cuda
