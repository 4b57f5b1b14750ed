// The cpu plugin's gloo collectives that exchange slices between every pair of ranks:
// all_to_all, all_to_all_v (a count per rank) and reduce_scatter, which is an all-to-all of the
// slices followed by this rank's reduction of what it received (one pass, as a ring
// reduce-scatter's bytes; an all_reduce of the whole input sent twice as many).
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives_gloo.h"

namespace kael::cpu::gloo_collectives {
namespace {

// Kinds in each call's tag (collectives_gloo.cpp numbers 1 to 5).
constexpr std::uint64_t kAllToAll = 4;
constexpr std::uint64_t kReduceScatter = 6;
constexpr std::uint64_t kAllToAllV = 7;

// Slice j (count elements) of in to rank j; rank j's slice into slice j of out.
template <typename S>
void exchange(Communicator& c, S* out, const S* in, std::int64_t count, std::uint32_t tag) {
    const auto total = static_cast<size_t>(count) * static_cast<size_t>(c.context->size);
    gloo::AlltoallOptions options(c.context);
    options.setInput(const_cast<S*>(in), total);
    options.setOutput(out, total);
    options.setTag(tag);
    options.setTimeout(c.timeout);
    if (count > 0) {
        gloo::alltoall(options);
    }
}

}  // namespace

kael_status all_to_all(void* handle, kael_dtype dtype, void* out, const void* in, int64_t count) {
    return run("cpu.all_to_all", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            exchange(c, static_cast<S*>(out), static_cast<const S*>(in), count,
                     c.tag(kAllToAll, count, dtype));
        });
    });
}

kael_status reduce_scatter(void* handle, kael_dtype dtype, kael_collective_op op, void* out,
                           const void* in, int64_t count) {
    return run("cpu.reduce_scatter", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            const auto n = static_cast<size_t>(count);
            const auto ranks = static_cast<size_t>(c.context->size);
            const std::unique_ptr<S[]> received(new S[n * ranks]);  // S may be bool
            exchange(c, received.get(), static_cast<const S*>(in), count,
                     c.tag(kReduceScatter, count, dtype * 16 + op));
            if (n == 0) {
                return;
            }
            // In rank order, so every rank's slice is reduced in the same order.
            auto* result = static_cast<S*>(out);
            std::memcpy(result, received.get(), n * sizeof(S));
            const auto reduce = reduction<S>(op, dtype == KAEL_DTYPE_BOOL);
            for (size_t r = 1; r < ranks; ++r) {
                reduce(result, result, received.get() + r * n, n);
            }
        });
    });
}

kael_status all_to_all_v(void* handle, kael_dtype dtype, void* out, const int64_t* out_counts,
                         const void* in, const int64_t* in_counts) {
    return run("cpu.all_to_all_v", [&] {
        Communicator& c = communicator_of(handle);
        if (out_counts == nullptr || in_counts == nullptr) {
            plugin::invalid("all_to_all_v: the counts are null");
        }
        const auto ranks = static_cast<size_t>(c.context->size);
        std::vector<std::int64_t> sent(in_counts, in_counts + ranks);
        std::vector<std::int64_t> taken(out_counts, out_counts + ranks);
        for (size_t r = 0; r < ranks; ++r) {
            check_count(sent[r]);
            check_count(taken[r]);
        }
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            // gloo sends every pair a message, empty ones too, so an empty side still needs an
            // address.
            S spare[1] = {};
            gloo::AlltoallvOptions options(c.context);
            options.setInput(in != nullptr ? const_cast<S*>(static_cast<const S*>(in)) : spare,
                             sent);
            options.setOutput(out != nullptr ? static_cast<S*>(out) : spare, taken);
            options.setTag(c.tag(kAllToAllV, 0, dtype));
            options.setTimeout(c.timeout);
            gloo::alltoallv(options);
        });
    });
}

}  // namespace kael::cpu::gloo_collectives
