#include "kael/kernels/tasks/index.h"

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

// The operands are strided; element 0 of each is a real element.
void check_on_device_if_used(const kael_index_layout* layout, const void* first, const void* second,
                             const int64_t* indices) {
    if (layout == nullptr || layout->struct_size < sizeof(kael_index_layout) ||
        layout->count <= 0) {
        return;
    }
    check_on_device(first, 1, "first tensor");
    check_on_device(second, 1, "second tensor");
    check_on_device(indices, 1, "indices");
}

}  // namespace

kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                   const int64_t* indices, const kael_index_layout* layout) {
    return plugin::guarded("emulated.gather", [&] {
        check_device(device);
        check_on_device_if_used(layout, out, data, indices);
        kernels::tasks::launch_gather<Launcher>(dtype, out, data, indices, layout);
    });
}

kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,
                        const void* source, const kael_index_layout* layout) {
    return plugin::guarded("emulated.scatter_add", [&] {
        check_device(device);
        check_on_device_if_used(layout, data, source, indices);
        kernels::tasks::launch_scatter_add<Launcher>(dtype, data, indices, source, layout);
    });
}

}  // namespace kael::emulated
