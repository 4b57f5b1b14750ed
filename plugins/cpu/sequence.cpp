// Row-wise sequence kernels: stable sort and top-k with int64 positions, inclusive prefix sums.
#include "kael/kernels/tasks/sequence.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

using kernels::is_floating_v;
using kernels::is_nan;
using kernels::load_element;
using kernels::Storage;
using kernels::store_element;
using kernels::tasks::sorts_before;

constexpr int64_t kMinParallelElements = int64_t{1} << 15;

// The first output_count positions of each row in stable sort order, into rows of
// output_count: std::stable_sort for whole rows, a heap or nth_element then sort for top-k,
// under a comparator whose ties go to the earlier position, so the result is the same order.
// They sort (value, position) pairs, which stay in cache where positions alone would not.
template <typename T>
void sort_rows(void* values, int64_t* indices, const void* data, int64_t chunk_size,
               int64_t row_count, int64_t output_count, bool descending) {
    struct Entry {
        T value;
        int64_t position;
    };
    const auto* input = static_cast<const Storage<T>*>(data);
    auto* output = static_cast<Storage<T>*>(values);
    const auto before = [descending](const Entry& a, const Entry& b) {
        return descending ? sorts_before(b.value, a.value) : sorts_before(a.value, b.value);
    };
    const auto by_position = [&before](const Entry& a, const Entry& b) {
        return before(a, b) || (!before(b, a) && a.position < b.position);
    };
    // Few of many: one pass past a heap of the best k, whose worst a later equal cannot beat.
    const bool few = output_count * 16 <= chunk_size;
    const auto sort_range = [&](int64_t begin, int64_t end) {
        std::vector<Entry> row_entries(static_cast<size_t>(few ? output_count : chunk_size));
        for (int64_t row = begin; row < end; ++row) {
            const Storage<T>* row_in = input + row * chunk_size;
            if (few) {
                row_entries.clear();
                for (int64_t i = 0; i < chunk_size; ++i) {
                    const Entry entry{load_element<T>(row_in + i), i};
                    if (static_cast<int64_t>(row_entries.size()) < output_count) {
                        row_entries.push_back(entry);
                        std::push_heap(row_entries.begin(), row_entries.end(), by_position);
                    } else if (before(entry, row_entries.front())) {
                        std::pop_heap(row_entries.begin(), row_entries.end(), by_position);
                        row_entries.back() = entry;
                        std::push_heap(row_entries.begin(), row_entries.end(), by_position);
                    }
                }
                std::sort_heap(row_entries.begin(), row_entries.end(), by_position);
            } else {
                for (int64_t i = 0; i < chunk_size; ++i) {
                    row_entries[static_cast<size_t>(i)] = {load_element<T>(row_in + i), i};
                }
                if (output_count == chunk_size) {
                    std::stable_sort(row_entries.begin(), row_entries.end(), before);
                } else {
                    const auto last = row_entries.begin() + output_count;
                    std::nth_element(row_entries.begin(), last, row_entries.end(), by_position);
                    std::sort(row_entries.begin(), last, by_position);
                }
            }
            for (int64_t i = 0; i < output_count; ++i) {
                const Entry& entry = row_entries[static_cast<size_t>(i)];
                store_element<T>(output + row * output_count + i, entry.value);
                indices[row * output_count + i] = entry.position;
            }
        }
    };
    const bool large = chunk_size * row_count >= kMinParallelElements;
    parallel_ranges(row_count, large ? 2 : row_count + 1, sort_range);
}

template <typename In>
void cumsum_rows(void* out, const void* data, int64_t chunk_size, int64_t row_count) {
    using Out = std::conditional_t<is_floating_v<In>, In, int64_t>;
    const auto* input = static_cast<const Storage<In>*>(data);
    auto* output = static_cast<Out*>(out);
    const auto sum_range = [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const Storage<In>* row_in = input + row * chunk_size;
            Out* row_out = output + row * chunk_size;
            if constexpr (is_floating_v<In>) {
                double total = 0;
                for (int64_t i = 0; i < chunk_size; ++i) {
                    total += static_cast<double>(load_element<In>(row_in + i));
                    row_out[i] = static_cast<Out>(total);
                }
            } else {
                int64_t total = 0;
                for (int64_t i = 0; i < chunk_size; ++i) {
                    const auto value = static_cast<int64_t>(load_element<In>(row_in + i));
                    total = kernels::wrapping_add(total, value);
                    row_out[i] = total;
                }
            }
        }
    };
    const bool large = chunk_size * row_count >= kMinParallelElements;
    parallel_ranges(row_count, large ? 2 : row_count + 1, sum_range);
}

}  // namespace

kael_status sort(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int32_t descending) {
    return plugin::guarded("cpu.sort", [&] {
        check_device(device);
        if (kernels::tasks::check_sort_call("sort", dtype, values, indices, data, chunk_size,
                                            row_count, chunk_size)) {
            kernels::with_dtype(dtype, [&](auto tag) {
                using T = kernels::TagType<decltype(tag)>;
                sort_rows<T>(values, indices, data, chunk_size, row_count, chunk_size,
                             descending != 0);
            });
        }
    });
}

kael_status topk(int32_t device, kael_dtype dtype, void* values, int64_t* indices, const void* data,
                 int64_t chunk_size, int64_t row_count, int64_t k, int32_t largest) {
    return plugin::guarded("cpu.topk", [&] {
        check_device(device);
        if (kernels::tasks::check_sort_call("topk", dtype, values, indices, data, chunk_size,
                                            row_count, k)) {
            kernels::with_dtype(dtype, [&](auto tag) {
                using T = kernels::TagType<decltype(tag)>;
                sort_rows<T>(values, indices, data, chunk_size, row_count, k, largest != 0);
            });
        }
    });
}

kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count) {
    return plugin::guarded("cpu.cumsum", [&] {
        check_device(device);
        if (!kernels::tasks::check_cumsum_call(out_dtype, in_dtype, out, data, chunk_size,
                                               row_count)) {
            return;
        }
        kernels::with_dtype(in_dtype, [&](auto tag) {
            using In = kernels::TagType<decltype(tag)>;
            cumsum_rows<In>(out, data, chunk_size, row_count);
        });
    });
}

}  // namespace kael::cpu
