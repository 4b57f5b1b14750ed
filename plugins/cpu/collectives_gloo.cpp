// The cpu plugin's collectives (KAEL_EXTENSION_COLLECTIVES) on gloo, PyTorch's CPU collectives
// library, over TCP: a communicator is a gloo context whose peers meet through the core's store.
// gloo's typed options carry each dtype's storage type; reductions are kael's own functions, so
// bf16/f16 add in f32 and bool's sum is or, as in PyTorch.
#include "collectives_gloo.h"

#include <gloo/allgather.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cpu_kernels.h"

namespace kael::cpu::gloo_collectives {
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

}  // namespace

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

namespace {

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
}  // namespace kael::cpu::gloo_collectives

namespace kael::cpu {

const kael_collectives* collectives() {
    using namespace gloo_collectives;
    static const kael_collectives table = {
        sizeof(kael_collectives), "gloo (TCP)", communicator_create, communicator_release,
        all_reduce, broadcast, all_gather, reduce_scatter, all_to_all, send, recv, barrier,
        all_to_all_v};
    return &table;
}

}  // namespace kael::cpu