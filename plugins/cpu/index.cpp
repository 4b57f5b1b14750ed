#include <string>

#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/plugin_support.h"

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

// The core bounds-checks indices; a negative one here would address memory before data.
void check_indices_non_negative(const kael_index_layout& layout, const int64_t* indices,
                                const char* entry) {
    for_each_index(layout, 0, layout.count, [&](int64_t, int64_t index_offset, int64_t) {
        if (indices[index_offset] < 0) {
            plugin::invalid(std::string(entry) + ": negative index " +
                            std::to_string(indices[index_offset]));
        }
    });
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
        check_indices_non_negative(*layout, indices, "gather");
        const int64_t axis_stride = layout->data_strides[layout->axis];
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = Storage<kernels::TagType<decltype(tag)>>;
            auto* target = static_cast<T*>(out);
            const auto* source = static_cast<const T*>(data);
            parallel_ranges(layout->count, kMinParallelElements, [&](int64_t begin, int64_t end) {
                for_each_index(*layout, begin, end,
                               [&](int64_t data_offset, int64_t index_offset, int64_t out_offset) {
                                   target[out_offset] =
                                       source[data_offset + indices[index_offset] * axis_stride];
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
        check_indices_non_negative(*layout, indices, "scatter_add");
        const int64_t axis_stride = layout->data_strides[layout->axis];
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            auto* target = static_cast<Storage<T>*>(data);
            const auto* addend = static_cast<const Storage<T>*>(source);
            const kernels::Plus<T> plus;
            // Serial: repeated indices hit the same element, and order fixes float rounding.
            for_each_index(*layout, 0, layout->count,
                           [&](int64_t data_offset, int64_t index_offset, int64_t source_offset) {
                               Storage<T>* slot =
                                   target + data_offset + indices[index_offset] * axis_stride;
                               kernels::store_element<T>(
                                   slot, plus(kernels::load_element<T>(slot),
                                              kernels::load_element<T>(addend + source_offset)));
                           });
        });
    });
}

}  // namespace kael::cpu
