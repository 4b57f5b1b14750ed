#include <utility>

#include "allocator_internal.h"
#include "backend.h"
#include "kernel_calls.h"
#include "kael/tensor.h"

namespace kael {

Storage::Storage(std::int64_t nbytes, Device device)
    : nbytes_(nbytes), device_(device), backend_(&detail::backend_for(device)) {
    if (nbytes < 0) {
        throw ValueError("cannot allocate a negative number of bytes (" + std::to_string(nbytes) +
                         ")");
    }
    if (nbytes > 0) {
        data_ = detail::allocate_block(*backend_, device.index, nbytes);
    }
}

Storage::Storage(void* data, std::int64_t nbytes, Device device, std::function<void()> release)
    : data_(data),
      nbytes_(nbytes),
      device_(device),
      backend_(&detail::backend_for(device)),
      external_release_(std::move(release)) {}

void Storage::move_to(const Device& target) {
    if (target == device_) {
        return;
    }
    Storage moved(nbytes_, target);
    detail::transfer(moved.data_, target, data_, device_, nbytes_);
    // The old block leaves with moved's destructor.
    std::swap(data_, moved.data_);
    std::swap(device_, moved.device_);
    std::swap(backend_, moved.backend_);
    std::swap(external_release_, moved.external_release_);
    std::swap(pinned_, moved.pinned_);
}

Storage::~Storage() {
    if (external_release_) {
        external_release_();
    } else if (data_ != nullptr) {
        detail::release_block(*backend_, device_.index, data_, nbytes_);
    }
}

}  // namespace kael
