#pragma once
// Autocast, as torch.autocast: inside a region for a device type, matmul, linear and attention
// run in the region's low dtype (bfloat16 or float16), and softmax, log_softmax, layer_norm,
// cross_entropy, the losses, sum, prod, cumsum, cumprod, logsumexp and norms in float32 (torch's
// cuda lists, on every device type), whatever the dtypes of their inputs. The casts are
// recorded by autograd, so f32 leaves get f32 gradients; a leaf's cast (a parameter's) is made
// once per outermost region. Only the outermost autocast op casts: the ops it calls run as given.
#include <optional>
#include <string>
#include <vector>

#include "kael/tensor.h"

namespace kael::autocast {

// Enters a region for device_type ("cpu", "cuda", ...) with dtype (bf16 or f16; f32 is not a
// lower dtype), or a region that turns autocast off there (enabled false); the previous state
// comes back when the object goes. Leaving the outermost region forgets the cached casts.
class Region {
public:
    Region(const std::string& device_type, DType dtype, bool enabled = true);
    ~Region();
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

private:
    std::string device_type_;
    std::optional<DType> previous_;
};

[[nodiscard]] bool is_enabled(const std::string& device_type);
// Whether autocast applies to an op whose first input is `first` (on for its device type, and
// not inside another autocast op).
[[nodiscard]] bool applies(const Tensor& first);

// For the ops' entries: the inputs cast for a lower-precision op (f32 inputs to the region's
// dtype; others, and undefined tensors, as they are), or nothing when autocast does not apply
// (off for the first input's device type, or inside another autocast op). The op then runs
// itself on them under an Applied, so the ops it calls run as given.
class Applied {
public:
    Applied();
    ~Applied();
    Applied(const Applied&) = delete;
    Applied& operator=(const Applied&) = delete;
};
[[nodiscard]] std::optional<std::vector<Tensor>> lower(const std::vector<Tensor>& inputs);
// The inputs cast for a float32 op: bfloat16 and float16 inputs to f32.
[[nodiscard]] std::optional<std::vector<Tensor>> full(const std::vector<Tensor>& inputs);

}  // namespace kael::autocast
