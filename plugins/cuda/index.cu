// gather and scatter_add through the shared index tasks; repeated scatter indices meet in
// atomicAdd, so float scatter sums are not bit-reproducible on a GPU.
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/index.h"

namespace kael::cuda {

kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                   const int64_t* indices, const kael_index_layout* layout) {
    return plugin::guarded("cuda.gather", [&] {
        use_device(device);
        kernels::tasks::launch_gather<Launcher>(dtype, out, data, indices, layout);
    });
}

kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,
                        const void* source, const kael_index_layout* layout) {
    return plugin::guarded("cuda.scatter_add", [&] {
        use_device(device);
        kernels::tasks::launch_scatter_add<Launcher>(dtype, data, indices, source, layout);
    });
}

}  // namespace kael::cuda
