// cross_entropy forward and backward, a block of 256 threads per row of logits. The forward
// reads the row once (16-byte packs from its first 16-byte boundary) folding an online
// max/sum, and thread 0 picks the target; the backward writes g * (exp(x - lse) - onehot)
// directly. f32 accumulates in f32, as PyTorch does.
#include <cstdint>
#include <typeinfo>

#include "cuda_kernels.h"
#include "cuda_launch.cuh"
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

template <typename T>
__global__ void __launch_bounds__(kRowBlock)
    cross_entropy_rows(const T* logits, const std::int64_t* targets, T* losses, T* lse,
                       std::int64_t rows, std::int64_t classes) {
    __shared__ LogSumExp<T> shared[kRowBlock / kWarp];
    const int t = static_cast<int>(threadIdx.x);
    for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform per block
        const T* x = logits + row * classes;
        auto state = LogSumExp<T>::none();
        for_each_in_row<kRowBlock>(x, classes, t, [&](T value) { state.add(value); });
        state = group_reduce<kRowBlock>(state, Merge{}, shared);
        if (t == 0) {
            lse[row] = state.log_total();
            const std::int64_t target = targets[row];
            losses[row] =
                tasks::valid_target(target, classes) ? state.minus_log_softmax(x[target]) : T(NAN);
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(kRowBlock)
    cross_entropy_backward_rows(const T* grad_losses, std::int64_t grad_stride, const T* logits,
                                const T* lse, const std::int64_t* targets, T* grad_logits,
                                std::int64_t rows, std::int64_t classes) {
    const int t = static_cast<int>(threadIdx.x);
    for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T g = grad_losses[row * grad_stride];
        const T row_lse = lse[row];
        const std::int64_t target = targets[row];
        map_row<kRowBlock>(logits + row * classes, grad_logits + row * classes, classes, t,
                           [&](std::int64_t c, T x) {
                               return g * (math::exp(x - row_lse) - (c == target ? T(1) : T(0)));
                           });
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
                                             rows, classes)) {
            return;
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            if constexpr (kernels::is_floating_v<T>) {
                const auto kernel = &cross_entropy_rows<T>;
                kernel<<<row_grid(kernel, rows), kRowBlock, 0, launch_stream()>>>(
                    static_cast<const T*>(logits), targets, static_cast<T*>(losses),
                    static_cast<T*>(lse), rows, classes);
                check_launch(typeid(CrossEntropyKernel<T>), __FILE__, __LINE__);
            }
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
                                             classes)) {
            return;
        }
        if (grad_stride != 0 && grad_stride != 1) {
            plugin::invalid("cross_entropy_backward: grad_stride must be 0 or 1");
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            if constexpr (kernels::is_floating_v<T>) {
                const auto kernel = &cross_entropy_backward_rows<T>;
                kernel<<<row_grid(kernel, rows), kRowBlock, 0, launch_stream()>>>(
                    static_cast<const T*>(grad_losses), grad_stride, static_cast<const T*>(logits),
                    static_cast<const T*>(lse), targets, static_cast<T*>(grad_logits), rows,
                    classes);
                check_launch(typeid(CrossEntropyKernel<T>), __FILE__, __LINE__);
            }
        });
    });
}

}  // namespace kael::cuda
