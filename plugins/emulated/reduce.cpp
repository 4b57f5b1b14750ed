#include "kael/kernels/tasks/reduce.h"
#include "kael/kernels/tasks/reduce_dims.h"
#include "kael/kernels/tasks/reduce_finished.h"

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {

kael_status reduce(int32_t device, kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                   void* results, const void* data, int64_t chunk_size, int64_t output_count) {
    return plugin::guarded("emulated.reduce", [&] {
        check_device(device);
        if (output_count > 0 && kernels::valid_dtype(out_dtype)) {
            check_on_device(results, output_count * kernels::dtype_size(out_dtype), "results");
        }
        if (output_count > 0 && chunk_size > 0 && kernels::valid_dtype(in_dtype)) {
            check_on_device(data, output_count * chunk_size * kernels::dtype_size(in_dtype),
                            "data");
        }
        kernels::tasks::launch_reduce<Launcher>(op, out_dtype, in_dtype, results, data, chunk_size,
                                                output_count);
    });
}

kael_status reduce_dims(int32_t device, kael_reduce_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, void* results, const void* data, int64_t outer,
                        int64_t size, int64_t inner) {
    return plugin::guarded("emulated.reduce_dims", [&] {
        check_device(device);
        kernels::tasks::check_reduce_dims_sizes(op, outer, size, inner);
        const int64_t outputs = outer * inner;
        if (outputs > 0 && kernels::valid_dtype(out_dtype)) {
            check_on_device(results, outputs * kernels::dtype_size(out_dtype), "results");
        }
        if (outputs > 0 && size > 0 && kernels::valid_dtype(in_dtype)) {
            check_on_device(data, outputs * size * kernels::dtype_size(in_dtype), "data");
        }
        kernels::tasks::launch_reduce_dims<Launcher>(op, out_dtype, in_dtype, results, data, outer,
                                                     size, inner);
    });
}

kael_status reduce_dims_finished(int32_t device, kael_reduce_op op, kael_dtype dtype, void* results,
                                 const void* data, int64_t outer, int64_t size, int64_t inner,
                                 double scale, int32_t root) {
    return plugin::guarded("emulated.reduce_dims_finished", [&] {
        kernels::tasks::launch_reduce_dims_finished<Launcher>(
            op, dtype, results, data, outer, size, inner, scale, root,
            [&](kael_reduce_op reduce_op, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                const void* in, int64_t o, int64_t s, int64_t i) {
                kernels::tasks::throw_on_failure(
                    reduce_dims(device, reduce_op, out_dtype, in_dtype, out, in, o, s, i));
            });
    });
}

}  // namespace kael::emulated
