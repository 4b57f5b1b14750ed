// sort and cumsum through the shared row tasks: one thread per row, which is enough for the
// row counts kael sorts and scans (softmax-sized rows, top-k in sampling).
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/sequence.h"

namespace kael::cuda {

kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int32_t descending) {
    return plugin::guarded("cuda.sort", [&] {
        use_device(device);
        kernels::tasks::launch_sort<Launcher>(dtype, values, indices, data, chunk_size, row_count,
                                              descending != 0);
    });
}

kael_status topk(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int64_t k, int32_t largest) {
    return plugin::guarded("cuda.topk", [&] {
        use_device(device);
        kernels::tasks::launch_topk<Launcher>(dtype, values, indices, data, chunk_size, row_count,
                                              k, largest != 0);
    });
}

kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count) {
    return plugin::guarded("cuda.cumsum", [&] {
        use_device(device);
        kernels::tasks::launch_cumsum<Launcher>(out_dtype, in_dtype, out, data, chunk_size,
                                                row_count);
    });
}

}  // namespace kael::cuda
