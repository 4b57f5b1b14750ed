// Row-wise sequence kernels: stable sort and top-k with int64 positions (std::stable_sort and a
// heap, faster on a CPU than the shared merge sort; f32 rows take a radix sort and top-k a
// vector screen, sort_f32.cpp), inclusive prefix sums (the shared CumsumRows through the cpu
// launcher; few long f32/f64 rows in blocked add chains).
#include "kael/kernels/tasks/sequence.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "cpu_launcher.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"
#include "sort_f32.h"

namespace kael::cpu {
namespace {

using kernels::load_element;
using kernels::Storage;
using kernels::store_element;
using kernels::tasks::sorts_before;

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
    constexpr bool kFloat = std::is_same_v<T, float>;
    const bool radix = kFloat && output_count == chunk_size && chunk_size < (int64_t{1} << 32);
    BlockScreen screen = nullptr;
    if constexpr (kFloat) {
        screen = block_screen_f32();
    }
    const auto sort_range = [&](int64_t begin, int64_t end) {
        std::vector<Entry> row_entries(static_cast<size_t>(radix ? 0
                                                           : few ? output_count
                                                                 : chunk_size));
        std::vector<std::uint64_t> radix_scratch;
        for (int64_t row = begin; row < end; ++row) {
            const Storage<T>* row_in = input + row * chunk_size;
            if constexpr (kFloat) {
                if (radix) {
                    radix_sort_row_f32(output + row * chunk_size, indices + row * chunk_size,
                                       row_in, chunk_size, descending, radix_scratch);
                    continue;
                }
            }
            if (few) {
                row_entries.clear();
                for (int64_t i = 0; i < chunk_size; ++i) {
                    if constexpr (kFloat) {
                        // A full heap skips the blocks none of whose elements beats its worst.
                        const bool full = static_cast<int64_t>(row_entries.size()) == output_count;
                        if (full && i % kScreenBlock == 0 && i + kScreenBlock <= chunk_size) {
                            const float worst = row_entries.front().value;
                            if (worst == worst && !screen(row_in + i, worst, descending)) {
                                i += kScreenBlock - 1;
                                continue;
                            }
                        }
                    }
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
    const bool large = chunk_size * row_count >= kLaunchMinElements;
    parallel_ranges(row_count, large ? 2 : row_count + 1, sort_range);
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

namespace {

// A long floating row's prefix sums (or products) in blocks: each block's total first
// (independent folds, on the pool), their running offsets, then kChains blocks at a time, each a
// chain of its own starting from its offset. The one sequential chain of a row waits on every
// add's (multiply's) latency; this keeps several in flight and both threads busy. Accumulation
// stays in double.
constexpr int64_t kScanBlock = 2048;
constexpr int kChains = 4;

template <bool kMultiply>
[[gnu::always_inline]] inline double fold(double a, double b) {
    return kMultiply ? a * b : a + b;
}

template <bool kMultiply, typename T>
void scan_long_row(const T* in, T* out, int64_t length) {
    constexpr double kIdentity = kMultiply ? 1.0 : 0.0;
    const int64_t blocks = (length + kScanBlock - 1) / kScanBlock;
    std::vector<double> offsets(static_cast<size_t>(blocks) + 1, kIdentity);
    parallel_ranges(blocks, 8, [&](int64_t begin, int64_t end) {
        for (int64_t block = begin; block < end; ++block) {
            const int64_t first = block * kScanBlock;
            const int64_t count = std::min(kScanBlock, length - first);
            double lanes[8] = {kIdentity, kIdentity, kIdentity, kIdentity,
                               kIdentity, kIdentity, kIdentity, kIdentity};
            int64_t i = 0;
            for (; i + 8 <= count; i += 8) {
                for (int lane = 0; lane < 8; ++lane) {
                    lanes[lane] = fold<kMultiply>(lanes[lane], static_cast<double>(in[first + i + lane]));
                }
            }
            double total = kIdentity;
            for (; i < count; ++i) {
                total = fold<kMultiply>(total, static_cast<double>(in[first + i]));
            }
            for (const double lane : lanes) {
                total = fold<kMultiply>(total, lane);
            }
            offsets[static_cast<size_t>(block) + 1] = total;
        }
    });
    for (int64_t block = 0; block < blocks; ++block) {
        offsets[static_cast<size_t>(block) + 1] = fold<kMultiply>(
            offsets[static_cast<size_t>(block) + 1], offsets[static_cast<size_t>(block)]);
    }
    const int64_t groups = (blocks + kChains - 1) / kChains;
    parallel_ranges(groups, 2, [&](int64_t begin, int64_t end) {
        for (int64_t group = begin; group < end; ++group) {
            double totals[kChains];
            int64_t firsts[kChains];
            int64_t counts[kChains];
            for (int c = 0; c < kChains; ++c) {
                const int64_t block = std::min(group * kChains + c, blocks - 1);
                const bool real = group * kChains + c < blocks;
                firsts[c] = block * kScanBlock;
                counts[c] = real ? std::min(kScanBlock, length - firsts[c]) : 0;
                totals[c] = offsets[static_cast<size_t>(block)];
            }
            // Every chain but the row's last block is full: run them side by side, then finish.
            const int64_t common = *std::min_element(counts, counts + kChains);
            for (int64_t i = 0; i < common; ++i) {
                for (int c = 0; c < kChains; ++c) {
                    totals[c] = fold<kMultiply>(totals[c], static_cast<double>(in[firsts[c] + i]));
                    out[firsts[c] + i] = static_cast<T>(totals[c]);
                }
            }
            for (int c = 0; c < kChains; ++c) {
                for (int64_t i = common; i < counts[c]; ++i) {
                    totals[c] = fold<kMultiply>(totals[c], static_cast<double>(in[firsts[c] + i]));
                    out[firsts[c] + i] = static_cast<T>(totals[c]);
                }
            }
        }
    });
}

template <bool kMultiply>
void scan_long_rows(kael_dtype dtype, void* out, const void* data, int64_t length,
                    int64_t rows) {
    for (int64_t row = 0; row < rows; ++row) {
        if (dtype == KAEL_DTYPE_F32) {
            scan_long_row<kMultiply>(static_cast<const float*>(data) + row * length,
                                     static_cast<float*>(out) + row * length, length);
        } else {
            scan_long_row<kMultiply>(static_cast<const double*>(data) + row * length,
                                     static_cast<double*>(out) + row * length, length);
        }
    }
}

}  // namespace

bool long_floating_rows(kael_dtype dtype, int64_t length, int64_t rows) {
    return (dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64) && length >= 8 * kScanBlock &&
           rows <= 8;
}

void cumprod_long_rows(kael_dtype dtype, void* out, const void* data, int64_t length,
                       int64_t rows) {
    scan_long_rows<true>(dtype, out, data, length, rows);
}

kael_status cumsum(int32_t device, kael_dtype out_dtype, kael_dtype in_dtype, void* out,
                   const void* data, int64_t chunk_size, int64_t row_count) {
    return plugin::guarded("cpu.cumsum", [&] {
        check_device(device);
        // Few long f32/f64 rows: blocked chains (a row each); else the shared row task.
        if (long_floating_rows(in_dtype, chunk_size, row_count) &&
            kernels::tasks::check_cumsum_call(out_dtype, in_dtype, out, data, chunk_size,
                                              row_count)) {
            scan_long_rows<false>(in_dtype, out, data, chunk_size, row_count);
            return;
        }
        kernels::tasks::launch_cumsum<Launcher>(out_dtype, in_dtype, out, data, chunk_size,
                                                row_count);
    });
}

}  // namespace kael::cpu
