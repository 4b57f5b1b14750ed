#pragma once
// Row-wise sequence tasks, one work item per row: inclusive prefix sums (CumsumRows) and a
// stable merge sort of positions (SortRows) with NaN as the largest value, whose first k
// entries are top-k. A stable sort's result is unique, so it equals the cpu plugin's exactly.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// Floats accumulate in double and store In; i64 and bool wrap in int64.
template <typename In>
struct CumsumRows {
    using Out = std::conditional_t<is_floating_v<In>, In, std::int64_t>;
    const Storage<In>* data;
    Out* out;
    std::int64_t chunk_size;

    [[nodiscard]] std::int64_t cost() const { return chunk_size; }  // elements an item reads

    KAEL_HD void operator()(std::int64_t row) const {
        const Storage<In>* row_in = data + row * chunk_size;
        Out* const row_out = out + row * chunk_size;
        if constexpr (is_floating_v<In>) {
            double total = 0;
            for (std::int64_t i = 0; i < chunk_size; ++i) {
                total += static_cast<double>(load_element<In>(row_in + i));
                row_out[i] = static_cast<Out>(total);
            }
        } else {
            std::int64_t total = 0;
            for (std::int64_t i = 0; i < chunk_size; ++i) {
                total =
                    wrapping_add(total, static_cast<std::int64_t>(load_element<In>(row_in + i)));
                row_out[i] = total;
            }
        }
    }
};

// Strict weak order with NaN after every number (NaNs tie with each other).
template <typename T>
KAEL_HD bool sorts_before(T a, T b) {
    if constexpr (is_floating_v<T>) {
        return !is_nan(a) && (is_nan(b) || a < b);
    } else {
        return a < b;
    }
}

// Bottom-up merge sort of the row's positions, ping-ponging between two rows of scratch
// (2 * chunk_size int64 per row); ties keep the earlier position. Writes the first
// output_count of the sorted row (chunk_size for sort, k for top-k) into rows of output_count.
template <typename T>
struct SortRows {
    const Storage<T>* data;
    Storage<T>* values;
    std::int64_t* indices;
    std::int64_t* scratch;
    std::int64_t chunk_size;
    std::int64_t output_count;
    bool descending;

    KAEL_HD bool before(const Storage<T>* row, std::int64_t a, std::int64_t b) const {
        const T a_value = load_element<T>(row + a);
        const T b_value = load_element<T>(row + b);
        return descending ? sorts_before(b_value, a_value) : sorts_before(a_value, b_value);
    }

    KAEL_HD void operator()(std::int64_t row) const {
        const Storage<T>* row_in = data + row * chunk_size;
        std::int64_t* order = scratch + 2 * row * chunk_size;
        std::int64_t* spare = order + chunk_size;
        for (std::int64_t i = 0; i < chunk_size; ++i) {
            order[i] = i;
        }
        for (std::int64_t width = 1; width < chunk_size; width *= 2) {
            for (std::int64_t left = 0; left < chunk_size; left += 2 * width) {
                const std::int64_t middle = min_of(left + width, chunk_size);
                const std::int64_t right = min_of(left + 2 * width, chunk_size);
                std::int64_t from_left = left;
                std::int64_t from_right = middle;
                std::int64_t to = left;
                while (from_left < middle && from_right < right) {
                    const bool take_right = before(row_in, order[from_right], order[from_left]);
                    spare[to++] = take_right ? order[from_right++] : order[from_left++];
                }
                while (from_left < middle) {
                    spare[to++] = order[from_left++];
                }
                while (from_right < right) {
                    spare[to++] = order[from_right++];
                }
            }
            std::int64_t* const sorted = spare;
            spare = order;
            order = sorted;
        }
        for (std::int64_t i = 0; i < output_count; ++i) {
            indices[row * output_count + i] = order[i];
            values[row * output_count + i] = row_in[order[i]];
        }
    }
};

// Runs SortRows over every row, writing output_count entries of each.
template <typename Launcher>
void launch_sort_rows(kael_dtype dtype, void* values, std::int64_t* indices, const void* data,
                      std::int64_t chunk_size, std::int64_t row_count, std::int64_t output_count,
                      bool descending) {
    const Scratch<Launcher, std::int64_t> scratch(2 * chunk_size * row_count);
    with_dtype(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        Launcher::for_each(
            row_count,
            SortRows<T>{static_cast<const Storage<T>*>(data), static_cast<Storage<T>*>(values),
                        indices, scratch.get(), chunk_size, output_count, descending});
    });
}

// The checks every sort and top-k entry makes; false when there is nothing to do.
inline bool check_sort_call(const char* entry, kael_dtype dtype, const void* values,
                            const std::int64_t* indices, const void* data, std::int64_t chunk_size,
                            std::int64_t row_count, std::int64_t output_count) {
    if (!valid_dtype(dtype)) {
        plugin::invalid(std::string(entry) + ": invalid dtype " + std::to_string(dtype));
    }
    check_rows(entry, chunk_size, row_count);
    if (output_count < 0 || output_count > chunk_size) {
        plugin::invalid(std::string(entry) + ": k = " + std::to_string(output_count) +
                        " is outside [0, " + std::to_string(chunk_size) + "]");
    }
    if (output_count == 0 || row_count == 0) {
        return false;
    }
    if (values == nullptr || indices == nullptr || data == nullptr) {
        plugin::invalid(std::string(entry) + ": null values, indices or data");
    }
    return true;
}

template <typename Launcher>
void launch_sort(kael_dtype dtype, void* values, std::int64_t* indices, const void* data,
                 std::int64_t chunk_size, std::int64_t row_count, bool descending) {
    if (check_sort_call("sort", dtype, values, indices, data, chunk_size, row_count, chunk_size)) {
        launch_sort_rows<Launcher>(dtype, values, indices, data, chunk_size, row_count, chunk_size,
                                   descending);
    }
}

// The k largest (or smallest) of each row in sort order: the first k of a stable sort that is
// descending for the largest, so ties come in position order either way.
template <typename Launcher>
void launch_topk(kael_dtype dtype, void* values, std::int64_t* indices, const void* data,
                 std::int64_t chunk_size, std::int64_t row_count, std::int64_t k, bool largest) {
    if (check_sort_call("topk", dtype, values, indices, data, chunk_size, row_count, k)) {
        launch_sort_rows<Launcher>(dtype, values, indices, data, chunk_size, row_count, k, largest);
    }
}

// The checks every cumsum entry makes; false when there is nothing to do.
inline bool check_cumsum_call(kael_dtype out_dtype, kael_dtype in_dtype, const void* out,
                              const void* data, std::int64_t chunk_size, std::int64_t row_count) {
    if (!valid_dtype(in_dtype) || !valid_dtype(out_dtype)) {
        plugin::invalid("cumsum: invalid dtype");
    }
    const bool floating = in_dtype == KAEL_DTYPE_F32 || in_dtype == KAEL_DTYPE_F64;
    const kael_dtype expected = floating ? in_dtype : KAEL_DTYPE_I64;
    if (out_dtype != expected) {
        plugin::invalid(std::string("cumsum of ") + plugin::dtype_name(in_dtype) + " writes " +
                        plugin::dtype_name(expected) + ", not " + plugin::dtype_name(out_dtype));
    }
    check_rows("cumsum", chunk_size, row_count);
    if (chunk_size == 0 || row_count == 0) {
        return false;
    }
    if (out == nullptr || data == nullptr) {
        plugin::invalid("cumsum: null out or data");
    }
    return true;
}

// The scan slot's checks; then, unless there is nothing to scan, visit<kMultiply, In>()
// with whether the op is a product (cumprod) or a sum (cumsum) and the input's compute type.
template <typename Visit>
void visit_scan_call(kael_reduce_op op, kael_dtype out_dtype, kael_dtype in_dtype,
                     const void* out, const void* data, std::int64_t outer, std::int64_t size,
                     std::int64_t inner, Visit&& visit) {
    if (op != KAEL_REDUCE_SUM && op != KAEL_REDUCE_PROD) {
        plugin::unsupported("scan of reduce op " + std::to_string(op));
    }
    if (outer < 0 || inner < 0) {
        plugin::invalid("scan: negative outer or inner");
    }
    if (!check_cumsum_call(out_dtype, in_dtype, out, data, size, outer * inner)) {
        return;
    }
    with_dtype(in_dtype, [&](auto tag) {
        using In = TagType<decltype(tag)>;
        if (op == KAEL_REDUCE_PROD) {
            visit.template operator()<true, In>();
        } else {
            visit.template operator()<false, In>();
        }
    });
}

template <typename Launcher>
void launch_cumsum(kael_dtype out_dtype, kael_dtype in_dtype, void* out, const void* data,
                   std::int64_t chunk_size, std::int64_t row_count) {
    if (!check_cumsum_call(out_dtype, in_dtype, out, data, chunk_size, row_count)) {
        return;
    }
    with_dtype(in_dtype, [&](auto tag) {
        using In = TagType<decltype(tag)>;
        using Out = typename CumsumRows<In>::Out;
        Launcher::for_each(row_count, CumsumRows<In>{static_cast<const Storage<In>*>(data),
                                                     static_cast<Out*>(out), chunk_size});
    });
}

}  // namespace kael::kernels::tasks
