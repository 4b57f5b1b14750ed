#pragma once
// gather and scatter_add: one work item per element of the index tensor. The core's bounds
// check may still be pending (check_indices), so an index outside [0, bound) is skipped: gather
// writes 0 there, scatter_add adds nothing, and no memory outside data is touched.
#include <cstdint>
#include <string>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// Element offsets of one coordinate of the index shape; data leaves out the axis, whose
// coordinate the index value supplies.
struct IndexPosition {
    std::int64_t data;
    std::int64_t index;
    std::int64_t source;
};

// element counts over the leading `dims` dimensions of the layout (all of them, or all but the
// innermost for a row of it); the others' coordinates are 0.
KAEL_HD inline IndexPosition locate_index(const kael_index_layout& layout, std::int64_t element,
                                          int dims) {
    IndexPosition position{0, 0, 0};
    std::int64_t remaining = element;
    for (int dim = dims - 1; dim >= 0; --dim) {
        const std::int64_t coordinate = remaining % layout.shape[dim];
        remaining /= layout.shape[dim];
        if (dim != layout.axis) {
            position.data += coordinate * layout.data_strides[dim];
        }
        position.index += coordinate * layout.index_strides[dim];
        position.source += coordinate * layout.source_strides[dim];
    }
    return position;
}

KAEL_HD inline IndexPosition locate_index(const kael_index_layout& layout, std::int64_t element) {
    return locate_index(layout, element, layout.dims);
}

// out[c] = data[c with axis -> indices[c]]
template <typename T>
struct Gather {
    Storage<T>* out;
    const Storage<T>* data;
    const std::int64_t* indices;
    kael_index_layout layout;
    std::int64_t bound;

    KAEL_HD void operator()(std::int64_t item) const {
        const IndexPosition position = locate_index(layout, item);
        const std::int64_t index = indices[position.index];
        out[position.source] = index >= 0 && index < bound
                                   ? data[position.data + index * layout.data_strides[layout.axis]]
                                   : Storage<T>{0};
    }
};

// data[c with axis -> indices[c]] += source[c]. Repeated indices meet in Launcher::atomic_add;
// bool (logical or) only ever stores 1, which concurrent items may do without an atomic.
template <typename T, typename Launcher>
struct ScatterAdd {
    Storage<T>* data;
    const std::int64_t* indices;
    const Storage<T>* source;
    kael_index_layout layout;
    std::int64_t bound;

    KAEL_HD void operator()(std::int64_t item) const {
        const IndexPosition position = locate_index(layout, item);
        const std::int64_t index = indices[position.index];
        if (index < 0 || index >= bound) {
            return;
        }
        Storage<T>* const slot = data + position.data + index * layout.data_strides[layout.axis];
        if constexpr (is_bool_v<T>) {
            if (load_element<bool>(source + position.source)) {
                store_element<bool>(slot, true);
            }
        } else {
            Launcher::atomic_add(slot, source[position.source]);
        }
    }
};

template <typename Launcher>
void launch_gather(kael_dtype dtype, void* out, const void* data, const std::int64_t* indices,
                   const kael_index_layout* layout) {
    check_index_layout(layout, "gather");
    if (!valid_dtype(dtype)) {
        plugin::invalid("gather: invalid dtype " + std::to_string(dtype));
    }
    if (layout->count == 0) {
        return;
    }
    if (out == nullptr || data == nullptr || indices == nullptr) {
        plugin::invalid("gather: null out, data or indices");
    }
    with_dtype(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        Launcher::for_each(layout->count,
                           Gather<T>{static_cast<Storage<T>*>(out),
                                     static_cast<const Storage<T>*>(data), indices, *layout,
                                     index_bound(*layout)});
    });
}

// kLowPrecision: bf16/f16 too, added by Launcher::atomic_add in the dtype (a plugin with
// KAEL_DTYPE_FLAG_LOW_PRECISION_INDEX); else they are declined.
template <typename Launcher, bool kLowPrecision = false>
void launch_scatter_add(kael_dtype dtype, void* data, const std::int64_t* indices,
                        const void* source, const kael_index_layout* layout) {
    check_index_layout(layout, "scatter_add");
    if (!valid_dtype(dtype)) {
        plugin::invalid("scatter_add: invalid dtype " + std::to_string(dtype));
    }
    if (layout->count == 0) {
        return;
    }
    if (data == nullptr || indices == nullptr || source == nullptr) {
        plugin::invalid("scatter_add: null data, indices or source");
    }
    with_dtype_if<kLowPrecision>(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        Launcher::for_each(layout->count, ScatterAdd<T, Launcher>{
                                              static_cast<Storage<T>*>(data), indices,
                                              static_cast<const Storage<T>*>(source), *layout,
                                              index_bound(*layout)});
    });
}

}  // namespace kael::kernels::tasks
