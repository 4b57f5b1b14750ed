#pragma once
// Page-locked host memory (KAEL_EXTENSION_HOST_MEMORY): cpu tensors over memory a device's plugin
// allocated, which that device copies to and from at full speed (pinned_memory.cpp).
#include "kael/tensor.h"

namespace kael::detail {

// Whether the plugin serving device offers page-locked host memory.
[[nodiscard]] bool offers_pinned_memory(const Device& device);
// An uninitialised contiguous cpu tensor in page-locked host memory from device's plugin;
// DeviceError where it offers none.
[[nodiscard]] Tensor pinned_empty(const Shape& shape, DType dtype, const Device& device);

}  // namespace kael::detail
