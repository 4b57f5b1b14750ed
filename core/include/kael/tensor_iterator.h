#pragma once
// Broadcasting and the flat layouts handed to plugins. Operand 0 is the output.
#include <span>
#include <vector>

#include "kael/plugin_api.h"
#include "kael/tensor.h"

namespace kael {

// numpy broadcasting; throws ValueError naming op and both shapes when they do not agree.
[[nodiscard]] Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

// Layout for out = f(inputs...), each input broadcast to out's shape. Size-1 dimensions are
// dropped and neighbours merged when every operand allows it; strides are in bytes.
// Throws ValueError beyond KAEL_MAX_DIMS dimensions or KAEL_MAX_OPERANDS operands.
[[nodiscard]] kael_element_layout element_layout(const Tensor& out,
                                                 std::span<const Tensor> inputs);
[[nodiscard]] inline kael_element_layout element_layout(const Tensor& out,
                                                        const std::vector<Tensor>& inputs) {
    return element_layout(out, std::span<const Tensor>(inputs));
}
// Dimensions element_layout would hand over after dropping and merging (may exceed
// KAEL_MAX_DIMS: callers then split the iteration).
[[nodiscard]] std::int64_t element_layout_dims(const Tensor& out, std::span<const Tensor> inputs);

// Layout for gather/scatter over the index tensor's shape (strides in elements).
[[nodiscard]] kael_index_layout index_layout(const Tensor& data, std::int64_t axis,
                                             const Tensor& index, const Tensor& source_or_out);

}  // namespace kael
