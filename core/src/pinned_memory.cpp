// Tensor::pin_memory and the page-locked host tensors the gloo backend stages device tensors
// through: the accelerator's plugin allocates the memory (KAEL_EXTENSION_HOST_MEMORY, cudaHostAlloc
// on the cuda plugin), the storage gives it back to that plugin when it dies.
#include "pinned_memory.h"

#include "backend.h"
#include "kael/autograd.h"
#include "kael/registry.h"
#include "tensor_internal.h"

namespace kael {
namespace detail {

namespace {

const kael_host_memory* host_memory_of(const Device& device) {
    if (device.is_cpu() || !is_available(device)) {
        return nullptr;
    }
    return static_cast<const kael_host_memory*>(
        backend_for(device).extension(KAEL_EXTENSION_HOST_MEMORY, sizeof(kael_host_memory)));
}

}  // namespace

bool offers_pinned_memory(const Device& device) {
    return host_memory_of(device) != nullptr;
}

Tensor pinned_empty(const Shape& shape, DType dtype, const Device& device) {
    const kael_host_memory* host = host_memory_of(device);
    if (host == nullptr) {
        throw DeviceError(
            "pin_memory: " + to_string(device) +
            (is_available(device) ? " offers no page-locked host memory" : " is not available") +
            " (a plugin's kael.host_memory extension; the cuda plugin's needs a GPU)");
    }
    const std::int64_t bytes = checked_numel(shape, "pin_memory") * itemsize(dtype);
    void* block = nullptr;
    if (bytes > 0) {
        backend_for(device).check(host->allocate(device.index, bytes, &block), "pin_memory");
    }
    Tensor out = from_blob(block, shape, contiguous_strides(shape), dtype, kCPU,
                           [host, index = device.index, block] { host->release(index, block); });
    out.impl().storage->mark_pinned();
    return out;
}

}  // namespace detail

Tensor Tensor::pin_memory() const {
    return pin_memory(Device("cuda", 0));
}

Tensor Tensor::pin_memory(const Device& device) const {
    if (!this->device().is_cpu()) {
        throw DeviceError("pin_memory: only cpu tensors can be pinned, not a tensor on " +
                          to_string(this->device()));
    }
    if (is_pinned()) {
        return *this;
    }
    Tensor out = detail::pinned_empty(shape(), dtype(), device);
    if (out.numel() > 0) {
        const NoGradGuard no_grad;
        out.copy_(*this);
    }
    return out;
}

bool Tensor::is_pinned() const {
    return impl().storage != nullptr && impl().storage->pinned();
}

}  // namespace kael
