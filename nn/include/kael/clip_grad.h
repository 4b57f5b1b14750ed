#pragma once
// Gradient clipping as torch.nn.utils does it, with no host synchronisation: the scale is
// computed and applied on the parameters' device.
#include <vector>

#include "kael/tensor.h"

namespace kael::nn {

// Scales every defined gradient by min(1, max_norm / (total_norm + 1e-6)) in place and returns
// the total norm (a 0-d tensor on the gradients' device) of all gradients together, as if
// concatenated. norm_type is p (> 0) or infinity. Gradients on several devices are a
// ValueError; error_if_nonfinite raises ValueError when the norm is NaN or infinite (that
// check reads the norm on the host).
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
// Clamps every defined gradient into [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace kael::nn
