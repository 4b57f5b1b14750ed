// ProcessGroup (kael/distributed.h): the core checks and lays out tensors, and the plugin serving
// their device moves them through its KAEL_EXTENSION_COLLECTIVES communicator, made on first use
// per device through the store (keys "<prefix>/<device>/...").
#include "backend.h"
#include "kael/autograd.h"
#include "kael/distributed.h"
#include "kael/error.h"
#include "kael/ops.h"
#include "kernel_calls.h"
#include "pinned_memory.h"
#include "process_group_internal.h"

namespace kael::distributed {

using detail::Backend;

namespace {

kael_collective_op abi_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: return KAEL_COLLECTIVE_SUM;
        case ReduceOp::Product: return KAEL_COLLECTIVE_PRODUCT;
        case ReduceOp::Min: return KAEL_COLLECTIVE_MIN;
        case ReduceOp::Max: return KAEL_COLLECTIVE_MAX;
    }
    return KAEL_COLLECTIVE_SUM;
}

// gloo moves host memory: tensors of another device (cuda) go through cpu copies, as PyTorch's
// gloo backend stages cuda tensors.
bool staged(const std::string& backend, const Tensor& tensor) {
    return backend == "gloo" && tensor.device().type() != "cpu";
}
// The host copy is page-locked where the device's plugin offers it (KAEL_EXTENSION_HOST_MEMORY):
// the H100 moved pageable copies at a fifth of the rate of torch's pinned staging.
Tensor on_host(const Tensor& tensor) {
    const NoGradGuard no_grad;
    const Tensor source = tensor.detach().contiguous();
    if (!detail::offers_pinned_memory(source.device())) {
        return source.to(kCPU);
    }
    Tensor host = detail::pinned_empty(source.shape(), source.dtype(), source.device());
    if (host.numel() > 0) {
        detail::transfer(host.device_data(), kCPU, source.device_data(), source.device(),
                         host.nbytes());
    }
    return host;
}
// A contiguous target takes the host copy straight into its storage; any other through a
// device copy.
void write_back(const Tensor& target, const Tensor& host) {
    const NoGradGuard no_grad;
    if (target.is_contiguous()) {  // host is on_host(target): same shape and dtype
        if (host.numel() > 0) {
            detail::transfer(target.device_data(), target.device(), host.device_data(), kCPU,
                             host.nbytes());
            target.impl().storage->bump_version();
        }
        return;
    }
    Tensor written = target;
    written.copy_(host.to(target.device()));
}

// tensor itself when contiguous, else a contiguous copy (written back by finish).
Tensor dense(const Tensor& tensor) {
    return tensor.is_contiguous() ? tensor : tensor.contiguous();
}
void finish(const Tensor& dense_tensor, const Tensor& tensor) {
    if (dense_tensor.impl_ptr() != tensor.impl_ptr()) {
        const NoGradGuard no_grad;
        Tensor target = tensor;
        target.copy_(dense_tensor);
    }
}

kael_dtype abi(DType dtype) {
    return static_cast<kael_dtype>(dtype);
}

}  // namespace

void ProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
    if (staged(backend_, tensor)) {
        const Tensor host = on_host(tensor);
        all_reduce(host, op);
        return write_back(tensor, host);
    }
    if (op == ReduceOp::Avg && !is_floating(tensor.dtype())) {
        throw TypeError("all_reduce: AVG takes floating tensors, got " +
                        to_string(tensor.dtype()));
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "all_reduce", timeout_,
                                       prefix_);
    const Tensor data = dense(tensor);
    start_collective(*communicators_, "all_reduce", data);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_reduce(call.handle, abi(data.dtype()), abi_op(op),
                                                     data.device_data(), data.numel()),
                     "all_reduce", size_);
    if (op == ReduceOp::Avg) {
        const NoGradGuard no_grad;
        Tensor target = data;
        target.copy_(data / static_cast<double>(size_));
    }
    finish(data, tensor);
}

void ProcessGroup::broadcast(const Tensor& tensor, int root) {
    if (staged(backend_, tensor)) {
        const Tensor host = on_host(tensor);
        broadcast(host, root);
        return write_back(tensor, host);
    }
    if (root < 0 || root >= size_) {
        throw ValueError("broadcast: root " + std::to_string(root) + " is not a rank");
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "broadcast", timeout_,
                                       prefix_);
    const Tensor data = dense(tensor);
    start_collective(*communicators_, "broadcast", data);
    check_collective(*communicators_, *call.backend,
                     call.collectives->broadcast(call.handle, abi(data.dtype()),
                                                    data.device_data(), data.numel(), root),
                     "broadcast", size_);
    finish(data, tensor);
}

void ProcessGroup::reduce(const Tensor& tensor, int root, ReduceOp op) {
    if (root < 0 || root >= size_) {
        throw ValueError("reduce: root " + std::to_string(root) + " is not a rank");
    }
    const Tensor result = tensor.detach().clone();
    all_reduce(result, op);
    if (rank_ == root) {
        finish(result, tensor);
    }
}

void ProcessGroup::all_gather_into_tensor(const Tensor& out, const Tensor& tensor) {
    if (staged(backend_, tensor) || staged(backend_, out)) {
        const Tensor host = on_host(out);
        all_gather_into_tensor(host, on_host(tensor));
        return write_back(out, host);
    }
    if (out.numel() != tensor.numel() * size_ || out.dtype() != tensor.dtype()) {
        throw ValueError("all_gather_into_tensor: out must hold " + std::to_string(size_) +
                         " times the tensor's " + std::to_string(tensor.numel()) +
                         " elements of " + to_string(tensor.dtype()) + ", got " +
                         std::to_string(out.numel()) + " of " + to_string(out.dtype()));
    }
    detail::check_same_device({out, tensor}, "all_gather_into_tensor");
    const Call call = communicator_for(*this, *communicators_, tensor, "all_gather", timeout_,
                                       prefix_);
    const Tensor in = dense(tensor);
    const Tensor gathered = dense(out);
    start_collective(*communicators_, "all_gather", in);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_gather(call.handle, abi(in.dtype()),
                                                     gathered.device_data(), in.device_data(),
                                                     in.numel()),
                     "all_gather", size_);
    finish(gathered, out);
}

void ProcessGroup::all_gather(const std::vector<Tensor>& outs, const Tensor& tensor) {
    if (outs.size() != static_cast<std::size_t>(size_)) {
        throw ValueError("all_gather: expected " + std::to_string(size_) + " output tensors, got " +
                         std::to_string(outs.size()));
    }
    Shape shape = tensor.shape();
    shape.insert(shape.begin(), size_);
    const Tensor gathered = empty(shape, tensor.dtype(), tensor.device());
    all_gather_into_tensor(gathered, tensor);
    const NoGradGuard no_grad;
    for (int r = 0; r < size_; ++r) {
        Tensor target = outs[static_cast<std::size_t>(r)];
        target.copy_(gathered.select(0, r));
    }
}

void ProcessGroup::reduce_scatter_tensor(const Tensor& out, const Tensor& in, ReduceOp op) {
    if (staged(backend_, out) || staged(backend_, in)) {
        const Tensor host = on_host(out);
        reduce_scatter_tensor(host, on_host(in), op);
        return write_back(out, host);
    }
    if (in.numel() != out.numel() * size_ || out.dtype() != in.dtype()) {
        throw ValueError("reduce_scatter_tensor: the input must hold " + std::to_string(size_) +
                         " times the output's " + std::to_string(out.numel()) + " elements of " +
                         to_string(out.dtype()));
    }
    if (op == ReduceOp::Avg && !is_floating(in.dtype())) {
        throw TypeError("reduce_scatter_tensor: AVG takes floating tensors");
    }
    detail::check_same_device({out, in}, "reduce_scatter_tensor");
    const Call call = communicator_for(*this, *communicators_, in, "reduce_scatter", timeout_,
                                       prefix_);
    const Tensor source = dense(in);
    const Tensor result = dense(out);
    start_collective(*communicators_, "reduce_scatter", source);
    check_collective(*communicators_, *call.backend,
                     call.collectives->reduce_scatter(call.handle, abi(in.dtype()), abi_op(op),
                                                         result.device_data(),
                                                         source.device_data(), result.numel()),
                     "reduce_scatter", size_);
    if (op == ReduceOp::Avg) {
        const NoGradGuard no_grad;
        Tensor target = result;
        target.copy_(result / static_cast<double>(size_));
    }
    finish(result, out);
}

void ProcessGroup::all_to_all_single(const Tensor& out, const Tensor& in) {
    if (staged(backend_, out) || staged(backend_, in)) {
        const Tensor host = on_host(out);
        all_to_all_single(host, on_host(in));
        return write_back(out, host);
    }
    if (in.numel() != out.numel() || in.dtype() != out.dtype() || in.numel() % size_ != 0) {
        throw ValueError("all_to_all_single: input and output must have the same dtype and a "
                         "number of elements divisible by the world size " +
                         std::to_string(size_));
    }
    detail::check_same_device({out, in}, "all_to_all_single");
    const Call call = communicator_for(*this, *communicators_, in, "all_to_all", timeout_,
                                       prefix_);
    const Tensor source = dense(in);
    const Tensor result = dense(out);
    start_collective(*communicators_, "all_to_all", source);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_to_all(call.handle, abi(in.dtype()),
                                                     result.device_data(), source.device_data(),
                                                     in.numel() / size_),
                     "all_to_all", size_);
    finish(result, out);
}

namespace {

// Elements of each rank's part of t's rows: splits (rows each), or t's rows split evenly.
std::vector<std::int64_t> split_counts(const Tensor& t, const std::vector<std::int64_t>& splits,
                                       int size, const char* side) {
    const std::int64_t rows = t.dim() == 0 ? 1 : t.shape()[0];
    const std::int64_t row = rows == 0 ? 0 : t.numel() / rows;
    std::vector<std::int64_t> counts;
    if (splits.empty()) {
        if (rows % size != 0) {
            throw ValueError(std::string("all_to_all_single: ") + side + "'s " +
                             std::to_string(rows) + " rows do not split evenly over " +
                             std::to_string(size) + " ranks; give its split sizes");
        }
        counts.assign(static_cast<std::size_t>(size), rows / size * row);
        return counts;
    }
    std::int64_t total = 0;
    for (const std::int64_t split : splits) {
        if (split < 0) {
            throw ValueError(std::string("all_to_all_single: a negative ") + side + " split size");
        }
        total += split;
        counts.push_back(split * row);
    }
    if (static_cast<int>(splits.size()) != size || total != rows) {
        throw ValueError(std::string("all_to_all_single: ") + std::to_string(splits.size()) +
                         " " + side + " split sizes summing to " + std::to_string(total) +
                         "; expected " + std::to_string(size) + " summing to its " +
                         std::to_string(rows) + " rows");
    }
    return counts;
}

}  // namespace

void ProcessGroup::all_to_all_single(const Tensor& out, const Tensor& in,
                                     const std::vector<std::int64_t>& out_splits,
                                     const std::vector<std::int64_t>& in_splits) {
    if (out_splits.empty() && in_splits.empty()) {
        return all_to_all_single(out, in);
    }
    if (staged(backend_, out) || staged(backend_, in)) {
        const Tensor host = on_host(out);
        all_to_all_single(host, on_host(in), out_splits, in_splits);
        return write_back(out, host);
    }
    const auto row = [](const Tensor& t) {
        return t.dim() == 0 || t.shape()[0] == 0 ? -1 : t.numel() / t.shape()[0];
    };
    if (in.dtype() != out.dtype() || in.dim() == 0 || out.dim() == 0 ||
        (row(in) >= 0 && row(out) >= 0 && row(in) != row(out))) {
        throw ValueError("all_to_all_single: input and output must have the same dtype and rows "
                         "of the same size");
    }
    const std::vector<std::int64_t> sent = split_counts(in, in_splits, size_, "input");
    const std::vector<std::int64_t> taken = split_counts(out, out_splits, size_, "output");
    detail::check_same_device({out, in}, "all_to_all_single");
    const Call call = communicator_for(*this, *communicators_, in, "all_to_all", timeout_,
                                       prefix_);
    if (call.collectives->struct_size < sizeof(kael_collectives) ||
        call.collectives->all_to_all_v == nullptr) {
        throw DeviceError("all_to_all_single: plugin '" + call.backend->name() +
                                  "' has no uneven all-to-all (all_to_all_v, ABI 1.16)");
    }
    const Tensor source = dense(in);
    const Tensor result = dense(out);
    start_collective(*communicators_, "all_to_all_v", source);
    check_collective(*communicators_, *call.backend,
                     call.collectives->all_to_all_v(call.handle, abi(in.dtype()),
                                                       result.device_data(), taken.data(),
                                                       source.device_data(), sent.data()),
                     "all_to_all_v", size_);
    finish(result, out);
}

void ProcessGroup::send(const Tensor& tensor, int dst, int tag) {
    if (staged(backend_, tensor)) {
        return send(on_host(tensor), dst, tag);
    }
    if (dst < 0 || dst >= size_ || dst == rank_) {
        throw ValueError("send: destination " + std::to_string(dst) + " is not another rank");
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "send", timeout_, prefix_);
    const Tensor data = dense(tensor);
    check_collective(*communicators_, *call.backend,
                     call.collectives->send(call.handle, abi(data.dtype()), data.device_data(),
                                               data.numel(), dst, tag),
                     "send", size_);
}

void ProcessGroup::recv(const Tensor& tensor, int src, int tag) {
    if (staged(backend_, tensor)) {
        const Tensor host = on_host(tensor);
        recv(host, src, tag);
        return write_back(tensor, host);
    }
    if (src < 0 || src >= size_ || src == rank_) {
        throw ValueError("recv: source " + std::to_string(src) + " is not another rank");
    }
    const Call call = communicator_for(*this, *communicators_, tensor, "recv", timeout_, prefix_);
    const Tensor data = dense(tensor);
    check_collective(*communicators_, *call.backend,
                     call.collectives->recv(call.handle, abi(data.dtype()), data.device_data(),
                                               data.numel(), src, tag),
                     "recv", size_);
    finish(data, tensor);
}

void ProcessGroup::barrier() {
    const Tensor token = zeros({1}, DType::F32, (backend_ == "gloo" ? kCPU : Device("cuda")));
    const Call call = communicator_for(*this, *communicators_, token, "barrier", timeout_, prefix_);
    start_collective(*communicators_, "barrier", token);
    check_collective(*communicators_, *call.backend, call.collectives->barrier(call.handle),
                     "barrier", size_);
}

}  // namespace kael::distributed
