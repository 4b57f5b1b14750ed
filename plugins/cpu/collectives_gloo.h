#pragma once
// What the cpu plugin's gloo collectives share (collectives_gloo.cpp: setup, all_reduce,
// broadcast, all_gather, point to point; collectives_gloo_exchange.cpp: all-to-all and
// reduce-scatter): the communicator, its tags, gloo's errors as statuses, the reductions.
#include <gloo/allreduce.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_extensions.h"

namespace kael::cpu::gloo_collectives {

// A call's fingerprint: its kind and sizes, mixed into 16 bits.
inline std::uint32_t fingerprint(std::uint64_t kind, std::int64_t count, std::int64_t detail) {
    std::uint64_t h = (kind + 1) * 0x9E3779B97F4A7C15ULL;
    h ^= (static_cast<std::uint64_t>(count) + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;
    h ^= static_cast<std::uint64_t>(detail) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return static_cast<std::uint32_t>((h ^ (h >> 16) ^ (h >> 32)) & 0xFFFFU);
}

struct Communicator {
    std::shared_ptr<gloo::rendezvous::Context> context;
    std::chrono::milliseconds timeout;
    std::uint32_t next_tag = 0;
    // gloo matches messages by tag: 16 bits of the call's number and 16 of its fingerprint
    // (kind, dtype, count, op or root), so ranks whose calls disagree wait on different tags
    // until the timeout, where equal tags with unequal sizes would abort the process in gloo.
    std::uint32_t tag(std::uint64_t kind, std::int64_t count, std::int64_t detail = 0) {
        return ((next_tag++ & 0xFFFFU) << 16) | fingerprint(kind, count, detail);
    }
};

// gloo's errors (a peer gone, a timeout) as the device errors of the ABI.
template <typename Body>
kael_status run(const char* entry, Body&& body) {
    return plugin::guarded(entry, [&] {
        try {
            body();
        } catch (const gloo::Exception& error) {
            throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR, error.what());
        }
    });
}

// Calls visit(TypeTag<S>{}) with S the storage type of dtype (bool as uint8_t).
template <typename Visit>
void with_storage(kael_dtype dtype, Visit&& visit) {
    switch (dtype) {
        case KAEL_DTYPE_BOOL: return visit(kernels::TypeTag<std::uint8_t>{});
        case KAEL_DTYPE_BF16: return visit(kernels::TypeTag<kernels::BFloat16>{});
        case KAEL_DTYPE_F16: return visit(kernels::TypeTag<kernels::Half>{});
        default: kernels::with_narrow_int_dtype(dtype, visit);
    }
}

template <typename S>
inline S reduce_two(kael_collective_op op, bool boolean, S a, S b) {
    if constexpr (kernels::is_low_precision_v<S>) {
        const float x = kernels::to_float(a);
        const float y = kernels::to_float(b);
        return kernels::from_float<S>(reduce_two(op, false, x, y));
    } else {
        if (boolean) {  // or for sum and max, and for product and min
            const bool x = a != 0;
            const bool y = b != 0;
            return static_cast<S>(
                op == KAEL_COLLECTIVE_SUM || op == KAEL_COLLECTIVE_MAX ? (x || y) : (x && y));
        }
        switch (op) {
            case KAEL_COLLECTIVE_SUM: return static_cast<S>(a + b);
            case KAEL_COLLECTIVE_PRODUCT: return static_cast<S>(a * b);
            case KAEL_COLLECTIVE_MIN: return (b < a || b != b) ? b : a;  // NaN propagates
            default: return (b > a || b != b) ? b : a;
        }
    }
}

// One loop per op and kind, the op fixed at compile time so the compiler vectorizes it (a
// switch per element held a 2-process all-reduce of 64M floats to 1 GB/s).
template <typename S, kael_collective_op kOp, bool kBoolean>
void reduce_arrays(void* c, const void* a, const void* b, size_t n) {
    auto* out = static_cast<S*>(c);
    const auto* x = static_cast<const S*>(a);
    const auto* y = static_cast<const S*>(b);
    for (size_t i = 0; i < n; ++i) {
        out[i] = reduce_two(kOp, kBoolean, x[i], y[i]);
    }
}

template <typename S, bool kBoolean>
gloo::AllreduceOptions::Func reduction_of(kael_collective_op op) {
    switch (op) {
        case KAEL_COLLECTIVE_SUM: return &reduce_arrays<S, KAEL_COLLECTIVE_SUM, kBoolean>;
        case KAEL_COLLECTIVE_PRODUCT: return &reduce_arrays<S, KAEL_COLLECTIVE_PRODUCT, kBoolean>;
        case KAEL_COLLECTIVE_MIN: return &reduce_arrays<S, KAEL_COLLECTIVE_MIN, kBoolean>;
        case KAEL_COLLECTIVE_MAX: return &reduce_arrays<S, KAEL_COLLECTIVE_MAX, kBoolean>;
        default: plugin::invalid("unknown collective op " + std::to_string(op));
    }
}

template <typename S>
gloo::AllreduceOptions::Func reduction(kael_collective_op op, bool boolean) {
    if constexpr (std::is_same_v<S, std::uint8_t>) {
        if (boolean) {
            return reduction_of<S, true>(op);
        }
    }
    return reduction_of<S, false>(op);
}

inline Communicator& communicator_of(void* handle) {
    if (handle == nullptr) {
        plugin::invalid("communicator is null");
    }
    return *static_cast<Communicator*>(handle);
}

inline void check_count(std::int64_t count) {
    if (count < 0) {
        plugin::invalid("negative element count " + std::to_string(count));
    }
}

kael_status all_reduce(void* handle, kael_dtype dtype, kael_collective_op op, void* data,
                       int64_t count);
kael_status reduce_scatter(void* handle, kael_dtype dtype, kael_collective_op op, void* out,
                           const void* in, int64_t count);
kael_status all_to_all(void* handle, kael_dtype dtype, void* out, const void* in, int64_t count);
kael_status all_to_all_v(void* handle, kael_dtype dtype, void* out, const int64_t* out_counts,
                         const void* in, const int64_t* in_counts);

}  // namespace kael::cpu::gloo_collectives
