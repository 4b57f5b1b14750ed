// cross_entropy forward and backward, a block of 256 threads per row of logits. The forward
// reads the row once (16-byte packs from its first 16-byte boundary) folding an online
// max/sum, and thread 0 picks the target; the backward writes g * (exp(x - lse) - onehot)
// directly. f32 accumulates in f32, as PyTorch does. bf16/f16 logits (and their gradients) are
// read and written as they are, computed in f32, with losses, lse and grad_losses in f32: what
// casting them to f32 first (autocast's rule for cross_entropy) gives, without the f32 copy.
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "element_cast.cuh"
#include "kael/kernels/tasks/cross_entropy.h"
#include "row_reduce.cuh"

namespace kael::cuda {
namespace {

using namespace rows;
namespace tasks = kernels::tasks;
namespace math = kernels::math;

constexpr int kRowBlock = 256;

template <typename T>
struct CrossEntropyKernel {};

// S: how the logits are stored (T, or bf16/f16 computed in T = f32).
template <typename S, typename T>
__global__ void __launch_bounds__(kRowBlock)
    cross_entropy_rows(const S* logits, const std::int64_t* targets, T* losses, T* lse,
                       std::int64_t rows, std::int64_t classes) {
    __shared__ LogSumExp<T> shared[kRowBlock / kWarp];
    const int t = static_cast<int>(threadIdx.x);
    for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform per block
        const S* x = logits + row * classes;
        auto state = LogSumExp<T>::none();
        for_each_in_row<kRowBlock>(x, classes, t, [&](S value) { state.add(as<T>(value)); });
        state = group_reduce<kRowBlock>(state, Merge{}, shared);
        if (t == 0) {
            lse[row] = state.log_total();
            const std::int64_t target = targets[row];
            losses[row] = tasks::valid_target(target, classes)
                              ? state.minus_log_softmax(as<T>(x[target]))
                              : T(NAN);
        }
    }
}

template <typename S, typename T>
__global__ void __launch_bounds__(kRowBlock)
    cross_entropy_backward_rows(const T* grad_losses, std::int64_t grad_stride, const S* logits,
                                const T* lse, const std::int64_t* targets, S* grad_logits,
                                std::int64_t rows, std::int64_t classes) {
    const int t = static_cast<int>(threadIdx.x);
    for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T g = grad_losses[row * grad_stride];
        const T row_lse = lse[row];
        const std::int64_t target = targets[row];
        map_row<kRowBlock>(logits + row * classes, grad_logits + row * classes, classes, t,
                           [&](std::int64_t c, S x) {
                               return as<S>(g * (math::exp(as<T>(x) - row_lse) -
                                                 (c == target ? T(1) : T(0))));
                           });
    }
}

// run(stored element, compute zero) for the logits' dtype (checked floating before).
template <typename Run>
void with_stored(kael_dtype dtype, const Run& run) {
    switch (dtype) {
        case KAEL_DTYPE_BF16: return run(__nv_bfloat16{}, 0.0F);
        case KAEL_DTYPE_F16: return run(__half{}, 0.0F);
        case KAEL_DTYPE_F32: return run(0.0F, 0.0F);
        default: return run(0.0, 0.0);
    }
}

template <typename Kernel>
int row_grid(Kernel kernel, std::int64_t rows) {
    return grid_blocks(reinterpret_cast<const void*>(kernel), rows, kRowBlock);
}

}  // namespace

kael_status cross_entropy(int32_t device, kael_dtype dtype, void* losses, void* lse,
                          const void* logits, const int64_t* targets, int64_t rows,
                          int64_t classes) {
    return plugin::guarded("cuda.cross_entropy", [&] {
        use_device(device);
        if (!tasks::check_cross_entropy_call("cross_entropy", dtype, {losses, lse, logits, targets},
                                             rows, classes, true)) {
            return;
        }
        with_stored(dtype, [&](auto stored, auto zero) {
            using S = decltype(stored);
            using T = decltype(zero);
            const auto kernel = &cross_entropy_rows<S, T>;
            kernel<<<row_grid(kernel, rows), kRowBlock, 0, launch_stream()>>>(
                static_cast<const S*>(logits), targets, static_cast<T*>(losses),
                static_cast<T*>(lse), rows, classes);
            check_launch(typeid(CrossEntropyKernel<S>), __FILE__, __LINE__);
        });
    });
}

kael_status cross_entropy_backward(int32_t device, kael_dtype dtype, void* grad_logits,
                                   const void* grad_losses, int64_t grad_stride, const void* logits,
                                   const void* lse, const int64_t* targets, int64_t rows,
                                   int64_t classes) {
    return plugin::guarded("cuda.cross_entropy_backward", [&] {
        use_device(device);
        if (!tasks::check_cross_entropy_call("cross_entropy_backward", dtype,
                                             {grad_logits, grad_losses, logits, lse, targets}, rows,
                                             classes, true)) {
            return;
        }
        if (grad_stride != 0 && grad_stride != 1) {
            plugin::invalid("cross_entropy_backward: grad_stride must be 0 or 1");
        }
        with_stored(dtype, [&](auto stored, auto zero) {
            using S = decltype(stored);
            using T = decltype(zero);
            const auto kernel = &cross_entropy_backward_rows<S, T>;
            kernel<<<row_grid(kernel, rows), kRowBlock, 0, launch_stream()>>>(
                static_cast<const T*>(grad_losses), grad_stride, static_cast<const S*>(logits),
                static_cast<const T*>(lse), targets, static_cast<S*>(grad_logits), rows, classes);
            check_launch(typeid(CrossEntropyKernel<S>), __FILE__, __LINE__);
        });
    });
}

}  // namespace kael::cuda
