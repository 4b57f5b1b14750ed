#include <unistd.h>

#include "kael/kernels/tasks/index.h"

#include "emulated_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/index_check.h"
#include "kael/kernels/plugin_support.h"

namespace kael::emulated {
namespace {

// The operands are strided; element 0 of each is a real element.
void check_on_device_if_used(const kael_index_layout* layout, const void* first, const void* second,
                             const int64_t* indices) {
    if (layout == nullptr || layout->struct_size < KAEL_INDEX_LAYOUT_SIZE_1_0 ||
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

// Checked now but reported by the next synchronize() or copy_to_host(), as a GPU reports it, so
// that every test run on this plugin goes through the core's deferred path.
kael_status check_indices(int32_t device, const int64_t* indices, int64_t count, int64_t low,
                          int64_t high, int64_t axis, const char* op, const char* what) {
    return plugin::guarded("emulated.check_indices", [&] {
        check_device(device);
        kernels::check_indices_call(indices, count, low, high, op, what);
        if (count == 0) {
            return;
        }
        check_on_device(indices, count * int64_t{sizeof(int64_t)}, "check_indices indices");
        // Recorded into a graph, the check runs with each replay, on the indices then.
        run_or_record([indices, count, low, high, axis, op = std::string(op),
                       what = std::string(what), thread = static_cast<long>(gettid())] {
            const int64_t bad = kernels::first_bad_index(indices, count, low, high);
            if (bad >= 0) {
                pending_index_error().record(kernels::deferred_index_error_message(
                    op.c_str(), what.c_str(), indices[bad], axis, high, thread));
            }
        });
    });
}

}  // namespace kael::emulated
