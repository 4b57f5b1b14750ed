#include <string>

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/element.h"

namespace kael::emulated {
namespace {

void check_operands_on_device(const kael_element_layout* layout) {
    if (layout == nullptr || layout->struct_size < KAEL_ELEMENT_LAYOUT_SIZE_1_0 ||
        layout->count <= 0 || layout->operands > KAEL_MAX_OPERANDS) {
        return;  // the shared checks report these
    }
    for (int operand = 0; operand < layout->operands; ++operand) {
        // Element 0 of every operand is a real element, wherever the strides lead from it.
        check_on_device(layout->base[operand], 1, ("operand " + std::to_string(operand)).c_str());
    }
}

}  // namespace

kael_status fill(int32_t device, kael_dtype dtype, void* target, int64_t count,
                 const kael_element_params* value) {
    return plugin::guarded("emulated.fill", [&] {
        check_device(device);
        if (count > 0 && kernels::valid_dtype(dtype)) {
            check_on_device(target, count * kernels::dtype_size(dtype), "fill target");
        }
        kernels::tasks::launch_fill<Launcher, true, true>(dtype, target, count, value);
    });
}

kael_status convert(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype,
                    const kael_element_layout* layout) {
    return plugin::guarded("emulated.convert", [&] {
        check_device(device);
        check_operands_on_device(layout);
        kernels::tasks::launch_convert<Launcher, true, true>(out_dtype, in_dtype, layout);
    });
}

kael_status elementwise(int32_t device, kael_element_op op, kael_dtype out_dtype,
                        kael_dtype in_dtype, const kael_element_layout* layout,
                        const kael_element_params* params) {
    return plugin::guarded("emulated.elementwise", [&] {
        check_device(device);
        check_operands_on_device(layout);
        kernels::tasks::launch_elementwise<Launcher, true>(op, out_dtype, in_dtype, layout, params);
    });
}

}  // namespace kael::emulated
