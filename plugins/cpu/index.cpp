#include <algorithm>
#include <string>

#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/index_check.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/index.h"

namespace kael::cpu {
namespace {

using kernels::Storage;

constexpr int64_t kMinParallelElements = int64_t{1} << 16;

// Calls visit(data_offset, index_offset, source_offset) for elements [begin, end) of the index
// shape; data_offset leaves out the axis, whose coordinate the index value supplies.
template <typename Visit>
void for_each_index(const kael_index_layout& layout, int64_t begin, int64_t end, Visit&& visit) {
    const int dims = layout.dims;
    int64_t coord[KAEL_MAX_DIMS] = {};
    int64_t data_offset = 0;
    int64_t index_offset = 0;
    int64_t source_offset = 0;
    int64_t remaining = begin;
    for (int dim = dims - 1; dim >= 0; --dim) {
        coord[dim] = remaining % layout.shape[dim];
        remaining /= layout.shape[dim];
        data_offset += dim == layout.axis ? 0 : coord[dim] * layout.data_strides[dim];
        index_offset += coord[dim] * layout.index_strides[dim];
        source_offset += coord[dim] * layout.source_strides[dim];
    }
    for (int64_t element = begin; element < end; ++element) {
        visit(data_offset, index_offset, source_offset);
        for (int dim = dims - 1; dim >= 0; --dim) {
            const int64_t data_step = dim == layout.axis ? 0 : layout.data_strides[dim];
            if (++coord[dim] < layout.shape[dim]) {
                data_offset += data_step;
                index_offset += layout.index_strides[dim];
                source_offset += layout.source_strides[dim];
                break;
            }
            coord[dim] = 0;
            data_offset -= (layout.shape[dim] - 1) * data_step;
            index_offset -= (layout.shape[dim] - 1) * layout.index_strides[dim];
            source_offset -= (layout.shape[dim] - 1) * layout.source_strides[dim];
        }
    }
}

// index_select and embedding: the innermost dimension is a contiguous run sharing one index,
// so each row is one copy (zeros for an index outside the bound). False for other layouts.
template <typename T>
bool gather_rows(const kael_index_layout& layout, T* target, const T* source,
                 const int64_t* indices) {
    const int last = layout.dims - 1;
    if (layout.axis == last || layout.index_strides[last] != 0 ||
        layout.data_strides[last] != 1 || layout.source_strides[last] != 1) {
        return false;
    }
    const int64_t length = layout.shape[last];
    const int64_t bound = kernels::index_bound(layout);
    parallel_ranges(layout.count / length, kMinParallelElements / length,
                    [&](int64_t begin, int64_t end) {
                        for (int64_t row = begin; row < end; ++row) {
                            const kernels::tasks::IndexPosition position =
                                kernels::tasks::locate_index(layout, row, last);
                            const int64_t index = indices[position.index];
                            T* const row_out = target + position.source;
                            if (index < 0 || index >= bound) {
                                std::fill_n(row_out, length, T{0});
                            } else {
                                std::copy_n(source + position.data +
                                                index * layout.data_strides[layout.axis],
                                            length, row_out);
                            }
                        }
                    });
    return true;
}

void check_pointers(const void* first, const void* second, const int64_t* indices,
                    const char* entry) {
    if (first == nullptr || second == nullptr || indices == nullptr) {
        plugin::invalid(std::string(entry) + ": null data, source or indices");
    }
}

}  // namespace

kael_status gather(int32_t device, kael_dtype dtype, void* out, const void* data,
                   const int64_t* indices, const kael_index_layout* layout) {
    return plugin::guarded("cpu.gather", [&] {
        check_device(device);
        kernels::check_index_layout(layout, "gather");
        if (!kernels::valid_dtype(dtype)) {
            plugin::invalid("gather: invalid dtype " + std::to_string(dtype));
        }
        if (layout->count == 0) {
            return;
        }
        check_pointers(out, data, indices, "gather");
        const int64_t axis_stride = layout->data_strides[layout->axis];
        const int64_t bound = kernels::index_bound(*layout);
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = Storage<kernels::TagType<decltype(tag)>>;
            auto* target = static_cast<T*>(out);
            const auto* source = static_cast<const T*>(data);
            if (gather_rows(*layout, target, source, indices)) {
                return;
            }
            parallel_ranges(layout->count, kMinParallelElements, [&](int64_t begin, int64_t end) {
                for_each_index(*layout, begin, end,
                               [&](int64_t data_offset, int64_t index_offset, int64_t out_offset) {
                                   // A deferred check of another device may still be pending.
                                   const int64_t index = indices[index_offset];
                                   target[out_offset] =
                                       index >= 0 && index < bound
                                           ? source[data_offset + index * axis_stride]
                                           : T{0};
                               });
            });
        });
    });
}

kael_status scatter_add(int32_t device, kael_dtype dtype, void* data, const int64_t* indices,
                        const void* source, const kael_index_layout* layout) {
    return plugin::guarded("cpu.scatter_add", [&] {
        check_device(device);
        kernels::check_index_layout(layout, "scatter_add");
        if (!kernels::valid_dtype(dtype)) {
            plugin::invalid("scatter_add: invalid dtype " + std::to_string(dtype));
        }
        if (layout->count == 0) {
            return;
        }
        check_pointers(data, source, indices, "scatter_add");
        const int64_t axis_stride = layout->data_strides[layout->axis];
        const int64_t bound = kernels::index_bound(*layout);
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            auto* target = static_cast<Storage<T>*>(data);
            const auto* addend = static_cast<const Storage<T>*>(source);
            const kernels::Plus<T> plus;
            // Serial: repeated indices hit the same element, and order fixes float rounding.
            for_each_index(*layout, 0, layout->count,
                           [&](int64_t data_offset, int64_t index_offset, int64_t source_offset) {
                               const int64_t index = indices[index_offset];
                               if (index < 0 || index >= bound) {
                                   return;
                               }
                               Storage<T>* slot = target + data_offset + index * axis_stride;
                               kernels::store_element<T>(
                                   slot, plus(kernels::load_element<T>(slot),
                                              kernels::load_element<T>(addend + source_offset)));
                           });
        });
    });
}

// The host checks at once: the error is the call's own.
kael_status check_indices(int32_t device, const int64_t* indices, int64_t count, int64_t low,
                          int64_t high, int64_t axis, const char* op, const char* what) {
    return plugin::guarded("cpu.check_indices", [&] {
        check_device(device);
        kernels::check_indices_call(indices, count, low, high, op, what);
        const int64_t bad = kernels::first_bad_index(indices, count, low, high);
        if (bad >= 0) {
            kernels::throw_index_error(
                kernels::index_error_message(op, what, indices[bad], axis, high));
        }
    });
}

}  // namespace kael::cpu
