// The cpu plugin's collectives (KAEL_EXTENSION_COLLECTIVES) on gloo, PyTorch's CPU collectives
// library, over TCP: a communicator is a gloo context whose peers meet through the core's store.
// gloo's typed options carry each dtype's storage type; reductions are kael's own functions, so
// bf16/f16 add in f32 and bool's sum is or, as in PyTorch.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/plugin_support.h"

namespace kael::cpu {
namespace {

// The core's store, as gloo's rendezvous asks for it.
class CoreStore : public gloo::rendezvous::Store {
public:
    explicit CoreStore(const kael_store& store) : store_(store) {}
    void set(const std::string& key, const std::vector<char>& data) override {
        check(store_.set(store_.context, key.c_str(), data.data(),
                         static_cast<std::int64_t>(data.size())),
              key);
    }
    std::vector<char> get(const std::string& key) override {
        void* value = nullptr;
        std::int64_t bytes = 0;
        check(store_.get(store_.context, key.c_str(), &value, &bytes), key);
        std::vector<char> copy(static_cast<const char*>(value),
                               static_cast<const char*>(value) + bytes);
        store_.free_value(store_.context, value);
        return copy;
    }
    void wait(const std::vector<std::string>& keys) override {
        for (const std::string& key : keys) {
            static_cast<void>(get(key));
        }
    }
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
        wait(keys);  // the core's store applies its own timeout
    }

private:
    static void check(kael_status status, const std::string& key) {
        if (status != KAEL_STATUS_OK) {
            throw plugin::StatusError(status, "the store failed for key '" + key + "'");
        }
    }
    kael_store store_;
};

// A call's fingerprint: its kind and sizes, mixed into 16 bits.
std::uint32_t fingerprint(std::uint64_t kind, std::int64_t count, std::int64_t detail) {
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

// send/recv's slot: the caller's tag above the call's fingerprint, for the same reason.
std::uint64_t point_to_point_slot(std::int32_t tag, kael_dtype dtype, std::int64_t count) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)) << 32) |
           fingerprint(100, count, dtype);
}

// The address this process offers its peers: GLOO_SOCKET_IFNAME's interface (PyTorch's
// variable), else the host name when it resolves, else the loopback (one machine).
gloo::transport::tcp::attr local_address() {
    gloo::transport::tcp::attr attr;
    if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface != nullptr && *iface) {
        attr.iface = iface;
        return attr;
    }
    char host[256] = {};
    addrinfo* found = nullptr;
    if (::gethostname(host, sizeof host - 1) == 0 &&
        ::getaddrinfo(host, nullptr, nullptr, &found) == 0) {
        ::freeaddrinfo(found);
        attr.hostname = host;
    } else {
        attr.hostname = "127.0.0.1";
    }
    return attr;
}

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
            return static_cast<S>(op == KAEL_COLLECTIVE_SUM || op == KAEL_COLLECTIVE_MAX ? (x || y)
                                                                                        : (x && y));
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

Communicator& communicator_of(void* handle) {
    if (handle == nullptr) {
        plugin::invalid("communicator is null");
    }
    return *static_cast<Communicator*>(handle);
}

void check_count(std::int64_t count) {
    if (count < 0) {
        plugin::invalid("negative element count " + std::to_string(count));
    }
}

kael_status communicator_create(int32_t device, const kael_store* store, int32_t rank,
                                int32_t size, int64_t timeout_ms, void** communicator) {
    return run("cpu.communicator_create", [&] {
        check_device(device);
        if (store == nullptr || store->struct_size < sizeof(kael_store) || communicator == nullptr) {
            plugin::invalid("communicator_create: store or communicator is null");
        }
        if (size < 1 || rank < 0 || rank >= size || timeout_ms <= 0) {
            plugin::invalid("communicator_create: rank " + std::to_string(rank) + " of " +
                            std::to_string(size) + ", timeout " + std::to_string(timeout_ms));
        }
        auto made = std::make_unique<Communicator>();
        made->timeout = std::chrono::milliseconds(timeout_ms);
        made->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        made->context->setTimeout(made->timeout);
        CoreStore rendezvous(*store);
        auto transport = gloo::transport::tcp::CreateDevice(local_address());
        made->context->connectFullMesh(rendezvous, transport);
        *communicator = made.release();
    });
}

void communicator_release(void* communicator) {
    delete static_cast<Communicator*>(communicator);
}

kael_status all_reduce(void* handle, kael_dtype dtype, kael_collective_op op, void* data,
                       int64_t count) {
    return run("cpu.all_reduce", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            gloo::AllreduceOptions options(c.context);
            options.setOutput(static_cast<S*>(data), static_cast<size_t>(count));
            options.setReduceFunction(reduction<S>(op, dtype == KAEL_DTYPE_BOOL));
            options.setTag(c.tag(1, count, dtype * 16 + op));
            options.setTimeout(c.timeout);
            if (count > 0) {
                gloo::allreduce(options);
            }
        });
    });
}

kael_status broadcast(void* handle, kael_dtype dtype, void* data, int64_t count, int32_t root) {
    return run("cpu.broadcast", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            gloo::BroadcastOptions options(c.context);
            options.setOutput(static_cast<S*>(data), static_cast<size_t>(count));
            options.setRoot(root);
            options.setTag(c.tag(2, count, dtype * 1024 + root));
            options.setTimeout(c.timeout);
            if (count > 0) {
                gloo::broadcast(options);
            }
        });
    });
}

kael_status all_gather(void* handle, kael_dtype dtype, void* out, const void* in, int64_t count) {
    return run("cpu.all_gather", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            gloo::AllgatherOptions options(c.context);
            options.setInput(const_cast<S*>(static_cast<const S*>(in)), static_cast<size_t>(count));
            options.setOutput(static_cast<S*>(out),
                              static_cast<size_t>(count) * static_cast<size_t>(c.context->size));
            options.setTag(c.tag(3, count, dtype));
            options.setTimeout(c.timeout);
            if (count > 0) {
                gloo::allgather(options);
            }
        });
    });
}

// gloo has no reduce-scatter with options: all_reduce of a copy of the whole input, then this
// rank's slice (twice the bytes of a ring reduce-scatter; the result is the same).
kael_status reduce_scatter(void* handle, kael_dtype dtype, kael_collective_op op, void* out,
                           const void* in, int64_t count) {
    return run("cpu.reduce_scatter", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        const auto bytes = static_cast<std::size_t>(count * kernels::dtype_size(dtype));
        std::vector<char> whole(bytes * static_cast<std::size_t>(c.context->size));
        if (!whole.empty()) {
            std::memcpy(whole.data(), in, whole.size());
        }
        const kael_status status =
            all_reduce(handle, dtype, op, whole.data(), count * c.context->size);
        if (status != KAEL_STATUS_OK) {
            throw plugin::StatusError(status, plugin::last_error());
        }
        if (bytes > 0) {
            std::memcpy(out, whole.data() + bytes * static_cast<std::size_t>(c.context->rank),
                        bytes);
        }
    });
}

kael_status all_to_all(void* handle, kael_dtype dtype, void* out, const void* in, int64_t count) {
    return run("cpu.all_to_all", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        with_storage(dtype, [&](auto tag) {
            using S = kernels::TagType<decltype(tag)>;
            const auto total = static_cast<size_t>(count) * static_cast<size_t>(c.context->size);
            gloo::AlltoallOptions options(c.context);
            options.setInput(const_cast<S*>(static_cast<const S*>(in)), total);
            options.setOutput(static_cast<S*>(out), total);
            options.setTag(c.tag(4, count, dtype));
            options.setTimeout(c.timeout);
            if (count > 0) {
                gloo::alltoall(options);
            }
        });
    });
}

// Point to point: the slot is the tag, so a send and a receive meet by peer and tag.
kael_status send(void* handle, kael_dtype dtype, const void* data, int64_t count, int32_t peer,
                 int32_t tag) {
    return run("cpu.send", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        auto buffer = c.context->createUnboundBuffer(
            const_cast<void*>(data), static_cast<size_t>(count * kernels::dtype_size(dtype)));
        buffer->send(peer, point_to_point_slot(tag, dtype, count));
        if (!buffer->waitSend(c.timeout)) {
            throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR, "send timed out");
        }
    });
}

kael_status recv(void* handle, kael_dtype dtype, void* data, int64_t count, int32_t peer,
                 int32_t tag) {
    return run("cpu.recv", [&] {
        Communicator& c = communicator_of(handle);
        check_count(count);
        auto buffer = c.context->createUnboundBuffer(
            data, static_cast<size_t>(count * kernels::dtype_size(dtype)));
        buffer->recv(peer, point_to_point_slot(tag, dtype, count));
        if (!buffer->waitRecv(c.timeout)) {
            throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR, "recv timed out");
        }
    });
}

kael_status barrier(void* handle) {
    return run("cpu.barrier", [&] {
        Communicator& c = communicator_of(handle);
        gloo::BarrierOptions options(c.context);
        options.setTag(c.tag(5, 0));
        options.setTimeout(c.timeout);
        gloo::barrier(options);
    });
}

}  // namespace

const kael_collectives* collectives() {
    static const kael_collectives table = {
        sizeof(kael_collectives), "gloo (TCP)", communicator_create, communicator_release,
        all_reduce, broadcast, all_gather, reduce_scatter, all_to_all, send, recv, barrier};
    return &table;
}

}  // namespace kael::cpu
