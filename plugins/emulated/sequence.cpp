#include "kael/kernels/tasks/sequence.h"

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {

kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int32_t descending) {
    return plugin::guarded("emulated.sort", [&] {
        check_device(device);
        const int64_t count = chunk_size * row_count;
        if (chunk_size > 0 && row_count > 0 && kernels::valid_dtype(dtype)) {
            check_on_device(values, count * kernels::dtype_size(dtype), "sort values");
            check_on_device(indices, count * 8, "sort indices");
            check_on_device(data, count * kernels::dtype_size(dtype), "sort data");
        }
        kernels::tasks::launch_sort<Launcher>(dtype, values, indices, data, chunk_size, row_count,
                                              descending != 0);
    });
}

kael_status topk(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int64_t k, int32_t largest) {
    return plugin::guarded("emulated.topk", [&] {
        check_device(device);
        if (k > 0 && k <= chunk_size && row_count > 0 && kernels::valid_dtype(dtype)) {
            const int64_t element_size = kernels::dtype_size(dtype);
            check_on_device(values, k * row_count * element_size, "topk values");
            check_on_device(indices, k * row_count * 8, "topk indices");
            check_on_device(data, chunk_size * row_count * element_size, "topk data");
        }
        kernels::tasks::launch_topk<Launcher>(dtype, values, indices, data, chunk_size, row_count,
                                              k, largest != 0);
    });
}

kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count) {
    return plugin::guarded("emulated.cumsum", [&] {
        check_device(device);
        const int64_t count = chunk_size * row_count;
        if (count > 0 && kernels::valid_dtype(in_dtype) && kernels::valid_dtype(out_dtype)) {
            check_on_device(out, count * kernels::dtype_size(out_dtype), "cumsum out");
            check_on_device(data, count * kernels::dtype_size(in_dtype), "cumsum data");
        }
        kernels::tasks::launch_cumsum<Launcher>(out_dtype, in_dtype, out, data, chunk_size,
                                                row_count);
    });
}

}  // namespace kael::emulated
