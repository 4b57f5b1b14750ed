#include "kael/kernels/tasks/matmul.h"

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

// Elements a matrix operand spans over all batches (stride 0: one matrix for every batch).
int64_t operand_extent(int64_t batches, int64_t batch_stride, int64_t matrix) {
    return (batches - 1) * batch_stride + matrix;
}

void check_operands_on_device(kael_dtype dtype, const void* a, const void* b, void* out,
                              const kael_matmul_sizes* sizes, const void* bias = nullptr) {
    kernels::tasks::check_matmul_sizes(sizes);
    const kael_matmul_sizes& s = *sizes;
    if (!kernels::valid_dtype(dtype) || s.batches * s.rows * s.columns == 0) {
        return;
    }
    const int64_t item = kernels::dtype_size(dtype);
    check_on_device(out, s.batches * s.rows * s.columns * item, "matmul out");
    if (bias != nullptr) {
        check_on_device(bias, s.columns * item, "matmul bias");
    }
    if (s.inner > 0) {
        check_on_device(a, operand_extent(s.batches, s.a_batch_stride, s.rows * s.inner) * item,
                        "matmul a");
        check_on_device(b, operand_extent(s.batches, s.b_batch_stride, s.inner * s.columns) * item,
                        "matmul b");
    }
}

}  // namespace

kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes) {
    return plugin::guarded("emulated.matmul", [&] {
        check_device(device);
        check_operands_on_device(dtype, a, b, out, sizes);
        kernels::tasks::launch_matmul<Launcher, true>(dtype, a, b, out, sizes);
    });
}

kael_status matmul_bias(int32_t device, kael_dtype dtype, const void* a, const void* b,
                        const void* bias, void* out, const kael_matmul_sizes* sizes) {
    return plugin::guarded("emulated.matmul_bias", [&] {
        check_device(device);
        if (bias == nullptr) {
            plugin::invalid("matmul_bias: null bias");
        }
        check_operands_on_device(dtype, a, b, out, sizes, bias);
        kernels::tasks::launch_matmul<Launcher, true>(dtype, a, b, out, sizes, bias);
    });
}

}  // namespace kael::emulated
