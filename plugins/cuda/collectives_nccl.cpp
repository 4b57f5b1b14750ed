// The cuda plugin's collectives (KAEL_EXTENSION_COLLECTIVES) on NCCL, PyTorch's GPU collectives
// library, dlopen'ed at the first communicator as cuBLAS is: a machine without libnccl.so.2 gets
// an error naming it, never a failed start. Rank 0 makes the unique id and publishes it through
// the core's store. Each call is queued on the device's launch stream (after the kernels that
// produced its data) and then waited for, as the ABI's calls block; a wait past the timeout
// aborts the communicator.
#include <nccl.h>  // types only: every function comes from dlsym

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cublas_loader.h"
#include "cuda_context.h"
#include "cuda_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/plugin_support.h"
#include "kael/plugin_extensions.h"

namespace kael::cuda {
namespace {

struct Nccl {
    std::string unavailable;  // "" once every function resolved
    decltype(&ncclGetUniqueId) get_unique_id = nullptr;
    decltype(&ncclCommInitRank) init_rank = nullptr;
    decltype(&ncclCommDestroy) destroy = nullptr;
    decltype(&ncclCommAbort) abort = nullptr;
    decltype(&ncclCommGetAsyncError) async_error = nullptr;
    decltype(&ncclGetErrorString) error_string = nullptr;
    decltype(&ncclAllReduce) all_reduce = nullptr;
    decltype(&ncclBroadcast) broadcast = nullptr;
    decltype(&ncclAllGather) all_gather = nullptr;
    decltype(&ncclReduceScatter) reduce_scatter = nullptr;
    decltype(&ncclSend) send = nullptr;
    decltype(&ncclRecv) recv = nullptr;
    decltype(&ncclGroupStart) group_start = nullptr;
    decltype(&ncclGroupEnd) group_end = nullptr;
};

Nccl load() {
    Nccl n;
    void* library = open_cuda_library("libnccl.so." + std::to_string(NCCL_MAJOR), n.unavailable);
    if (library == nullptr) {
        return n;
    }
    std::string missing;
    resolve(library, "ncclGetUniqueId", n.get_unique_id, missing);
    resolve(library, "ncclCommInitRank", n.init_rank, missing);
    resolve(library, "ncclCommDestroy", n.destroy, missing);
    resolve(library, "ncclCommAbort", n.abort, missing);
    resolve(library, "ncclCommGetAsyncError", n.async_error, missing);
    resolve(library, "ncclGetErrorString", n.error_string, missing);
    resolve(library, "ncclAllReduce", n.all_reduce, missing);
    resolve(library, "ncclBroadcast", n.broadcast, missing);
    resolve(library, "ncclAllGather", n.all_gather, missing);
    resolve(library, "ncclReduceScatter", n.reduce_scatter, missing);
    resolve(library, "ncclSend", n.send, missing);
    resolve(library, "ncclRecv", n.recv, missing);
    resolve(library, "ncclGroupStart", n.group_start, missing);
    resolve(library, "ncclGroupEnd", n.group_end, missing);
    if (!missing.empty()) {
        n.unavailable = "libnccl lacks " + missing;
    }
    return n;
}

const Nccl& nccl() {
    static const Nccl loaded = load();
    if (!loaded.unavailable.empty()) {
        plugin::unsupported("the nccl backend needs NCCL (libnccl.so." +
                            std::to_string(NCCL_MAJOR) + "), which did not load: " +
                            loaded.unavailable);
    }
    return loaded;
}

void check(ncclResult_t result, const char* call) {
    if (result != ncclSuccess) {
        throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR,
                                  std::string(call) + ": " + nccl().error_string(result));
    }
}

struct Communicator {
    ncclComm_t comm = nullptr;
    std::int32_t device = 0;
    std::int32_t rank = 0;
    std::int32_t size = 1;
    std::chrono::milliseconds timeout{0};
    void* token = nullptr;  // the barrier's one int
};

Communicator& communicator_of(void* handle) {
    if (handle == nullptr) {
        plugin::invalid("communicator is null");
    }
    auto& c = *static_cast<Communicator*>(handle);
    if (c.comm == nullptr) {
        throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR,
                                  "the communicator was aborted after a timed-out call");
    }
    use_device(c.device);
    return c;
}

// Waits for the queued call: the stream done, or NCCL's asynchronous error, or the timeout
// (then the communicator is aborted: a peer that never comes must not hang this process).
void wait(Communicator& c, const char* op) {
    const cudaStream_t stream = launch_stream();
    const auto deadline = std::chrono::steady_clock::now() + c.timeout;
    for (;;) {
        const cudaError_t state = cudaStreamQuery(stream);
        if (state == cudaSuccess) {
            return;
        }
        if (state != cudaErrorNotReady) {
            fail_call(state, op, __FILE__, __LINE__);
        }
        ncclResult_t async = ncclSuccess;
        check(nccl().async_error(c.comm, &async), "ncclCommGetAsyncError");
        check(async, op);
        if (std::chrono::steady_clock::now() > deadline) {
            static_cast<void>(nccl().abort(c.comm));
            c.comm = nullptr;
            throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR,
                                      std::string(op) + " timed out after " +
                                          std::to_string(c.timeout.count()) +
                                          " ms; the communicator was aborted");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

// NCCL's type of a dtype; int16 (which NCCL lacks) moves as bytes where nothing is reduced.
ncclDataType_t data_type(kael_dtype dtype, bool reduced) {
    switch (dtype) {
        case KAEL_DTYPE_F32: return ncclFloat32;
        case KAEL_DTYPE_F64: return ncclFloat64;
        case KAEL_DTYPE_F16: return ncclFloat16;
        case KAEL_DTYPE_BF16: return ncclBfloat16;
        case KAEL_DTYPE_I64: return ncclInt64;
        case KAEL_DTYPE_I32: return ncclInt32;
        case KAEL_DTYPE_I8: return ncclInt8;
        case KAEL_DTYPE_U8:
        case KAEL_DTYPE_BOOL: return ncclUint8;
        case KAEL_DTYPE_I16:
            if (reduced) {
                plugin::unsupported("NCCL reduces no int16 tensors (PyTorch's nccl neither)");
            }
            return ncclUint8;
        default: plugin::invalid("invalid dtype " + std::to_string(dtype));
    }
}

std::size_t elements(kael_dtype dtype, std::int64_t count, bool reduced) {
    if (count < 0) {
        plugin::invalid("negative element count " + std::to_string(count));
    }
    const bool as_bytes = dtype == KAEL_DTYPE_I16 && !reduced;
    return static_cast<std::size_t>(as_bytes ? count * 2 : count);
}

// bool's sum is or (max) and its product and (min), as in PyTorch.
ncclRedOp_t reduction(kael_dtype dtype, kael_collective_op op) {
    switch (op) {
        case KAEL_COLLECTIVE_SUM: return dtype == KAEL_DTYPE_BOOL ? ncclMax : ncclSum;
        case KAEL_COLLECTIVE_PRODUCT: return dtype == KAEL_DTYPE_BOOL ? ncclMin : ncclProd;
        case KAEL_COLLECTIVE_MIN: return ncclMin;
        case KAEL_COLLECTIVE_MAX: return ncclMax;
        default: plugin::invalid("unknown collective op " + std::to_string(op));
    }
}

kael_status communicator_create(int32_t device, const kael_store* store, int32_t rank,
                                int32_t size, int64_t timeout_ms, void** communicator) {
    return plugin::guarded("cuda.communicator_create", [&] {
        if (store == nullptr || store->struct_size < sizeof(kael_store) || communicator == nullptr) {
            plugin::invalid("communicator_create: store or communicator is null");
        }
        if (size < 1 || rank < 0 || rank >= size || timeout_ms <= 0) {
            plugin::invalid("communicator_create: rank " + std::to_string(rank) + " of " +
                            std::to_string(size) + ", timeout " + std::to_string(timeout_ms));
        }
        use_device(device);
        const Nccl& n = nccl();
        ncclUniqueId id{};
        if (rank == 0) {
            check(n.get_unique_id(&id), "ncclGetUniqueId");
            if (store->set(store->context, "nccl_id", &id, sizeof id) != KAEL_STATUS_OK) {
                throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR, "the store refused NCCL's unique id");
            }
        } else {
            void* value = nullptr;
            std::int64_t bytes = 0;
            if (store->get(store->context, "nccl_id", &value, &bytes) != KAEL_STATUS_OK) {
                throw plugin::StatusError(KAEL_STATUS_DEVICE_ERROR, "rank 0's NCCL unique id never came");
            }
            std::memcpy(&id, value, std::min<std::size_t>(sizeof id, static_cast<std::size_t>(bytes)));
            store->free_value(store->context, value);
        }
        auto made = std::make_unique<Communicator>();
        made->device = device;
        made->rank = rank;
        made->size = size;
        made->timeout = std::chrono::milliseconds(timeout_ms);
        check(n.init_rank(&made->comm, size, id, rank), "ncclCommInitRank");
        KAEL_CUDA_CHECK(cudaMalloc(&made->token, sizeof(int)));
        *communicator = made.release();
    });
}

void communicator_release(void* handle) {
    auto* c = static_cast<Communicator*>(handle);
    if (c == nullptr) {
        return;
    }
    if (c->comm != nullptr) {
        static_cast<void>(nccl().destroy(c->comm));
    }
    static_cast<void>(cudaFree(c->token));
    delete c;
}

kael_status all_reduce(void* handle, kael_dtype dtype, kael_collective_op op, void* data,
                       int64_t count) {
    return plugin::guarded("cuda.all_reduce", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().all_reduce(data, data, elements(dtype, count, true), data_type(dtype, true),
                                reduction(dtype, op), c.comm, launch_stream()),
              "ncclAllReduce");
        wait(c, "ncclAllReduce");
    });
}

kael_status broadcast(void* handle, kael_dtype dtype, void* data, int64_t count, int32_t root) {
    return plugin::guarded("cuda.broadcast", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().broadcast(data, data, elements(dtype, count, false), data_type(dtype, false),
                               root, c.comm, launch_stream()),
              "ncclBroadcast");
        wait(c, "ncclBroadcast");
    });
}

kael_status all_gather(void* handle, kael_dtype dtype, void* out, const void* in, int64_t count) {
    return plugin::guarded("cuda.all_gather", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().all_gather(in, out, elements(dtype, count, false), data_type(dtype, false),
                                c.comm, launch_stream()),
              "ncclAllGather");
        wait(c, "ncclAllGather");
    });
}

kael_status reduce_scatter(void* handle, kael_dtype dtype, kael_collective_op op, void* out,
                           const void* in, int64_t count) {
    return plugin::guarded("cuda.reduce_scatter", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().reduce_scatter(in, out, elements(dtype, count, true), data_type(dtype, true),
                                    reduction(dtype, op), c.comm, launch_stream()),
              "ncclReduceScatter");
        wait(c, "ncclReduceScatter");
    });
}

// in_counts[j] elements of in (end to end in rank order) to rank j, rank j's into out the same
// way: one send and receive per peer in one NCCL group (NCCL has no all-to-all of its own).
void exchange(Communicator& c, kael_dtype dtype, void* out, const int64_t* out_counts,
              const void* in, const int64_t* in_counts, const char* op) {
    const ncclDataType_t type = data_type(dtype, false);
    const auto element = static_cast<std::size_t>(kernels::dtype_size(dtype));
    const Nccl& lib = nccl();
    std::size_t sent = 0;
    std::size_t taken = 0;
    check(lib.group_start(), "ncclGroupStart");
    for (std::int32_t peer = 0; peer < c.size; ++peer) {
        if (in_counts[peer] < 0 || out_counts[peer] < 0) {
            plugin::invalid(std::string(op) + ": a negative count");
        }
        check(lib.send(static_cast<const char*>(in) + sent * element,
                       elements(dtype, in_counts[peer], false), type, peer, c.comm,
                       launch_stream()),
              "ncclSend");
        check(lib.recv(static_cast<char*>(out) + taken * element,
                       elements(dtype, out_counts[peer], false), type, peer, c.comm,
                       launch_stream()),
              "ncclRecv");
        sent += static_cast<std::size_t>(in_counts[peer]);
        taken += static_cast<std::size_t>(out_counts[peer]);
    }
    check(lib.group_end(), "ncclGroupEnd");
    wait(c, op);
}

kael_status all_to_all(void* handle, kael_dtype dtype, void* out, const void* in, int64_t count) {
    return plugin::guarded("cuda.all_to_all", [&] {
        Communicator& c = communicator_of(handle);
        const std::vector<int64_t> counts(static_cast<std::size_t>(c.size), count);
        exchange(c, dtype, out, counts.data(), in, counts.data(), "all_to_all");
    });
}

kael_status all_to_all_v(void* handle, kael_dtype dtype, void* out, const int64_t* out_counts,
                         const void* in, const int64_t* in_counts) {
    return plugin::guarded("cuda.all_to_all_v", [&] {
        if (out_counts == nullptr || in_counts == nullptr) {
            plugin::invalid("all_to_all_v: the counts are null");
        }
        exchange(communicator_of(handle), dtype, out, out_counts, in, in_counts, "all_to_all_v");
    });
}

// NCCL matches point-to-point calls by peer and order; the tag is not sent.
kael_status send(void* handle, kael_dtype dtype, const void* data, int64_t count, int32_t peer,
                 int32_t /*tag*/) {
    return plugin::guarded("cuda.send", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().send(data, elements(dtype, count, false), data_type(dtype, false), peer,
                          c.comm, launch_stream()),
              "ncclSend");
        wait(c, "ncclSend");
    });
}

kael_status recv(void* handle, kael_dtype dtype, void* data, int64_t count, int32_t peer,
                 int32_t /*tag*/) {
    return plugin::guarded("cuda.recv", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().recv(data, elements(dtype, count, false), data_type(dtype, false), peer,
                          c.comm, launch_stream()),
              "ncclRecv");
        wait(c, "ncclRecv");
    });
}

kael_status barrier(void* handle) {
    return plugin::guarded("cuda.barrier", [&] {
        Communicator& c = communicator_of(handle);
        check(nccl().all_reduce(c.token, c.token, 1, ncclInt32, ncclSum, c.comm, launch_stream()),
              "ncclAllReduce");
        wait(c, "barrier");
    });
}

}  // namespace

const kael_collectives* collectives() {
    static const kael_collectives table = {
        sizeof(kael_collectives), "NCCL (libnccl.so.2, loaded at the first communicator)",
        communicator_create, communicator_release, all_reduce, broadcast, all_gather,
        reduce_scatter, all_to_all, send, recv, barrier, all_to_all_v};
    return &table;
}

}  // namespace kael::cuda
